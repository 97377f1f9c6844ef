"""scripts/build_tables.py: the parameter facts it derives from the installed torch and MindSpore
signatures, and the older-version targets it keeps (those that reproduce torch's result)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import load_script
from torch2ms.mappings import load_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def build() -> Any:
    return load_script(ROOT / "scripts" / "build_tables.py", "build_tables_under_test")


def _facts(build: Any, api: str, target: str) -> set[tuple[str, str | None, str | None]]:
    facts = build.param_facts(api, build.resolve(api), target, build.resolve(target), [])
    return {(f["kind"], f.get("torch"), f.get("ms")) for f in facts}


def test_optional_parameters_that_only_share_a_position_are_not_renamed(build: Any) -> None:
    # torch.distributions.Normal(loc, scale, validate_args) against Normal(mean, sd, seed, dtype, name):
    # validate_args sits where seed sits, but it is not seed.
    facts = _facts(build, "torch.distributions.Normal", "mindspore.nn.probability.distribution.Normal")
    assert facts == {("renamed", "loc", "mean"), ("renamed", "scale", "sd"), ("dropped", "validate_args", None)}


def test_a_cell_that_keeps_cells_constructor_takes_no_torch_argument(build: Any) -> None:
    # mint.nn.Mish inherits Cell.__init__(auto_prefix, flags): torch's inplace is dropped, not renamed.
    assert _facts(build, "torch.nn.Mish", "mindspore.mint.nn.Mish") == {("dropped", "inplace", None)}


def test_a_tensor_method_mapped_to_a_function_skips_the_tensor_parameter(build: Any) -> None:
    # Tensor.std(dim, *, correction, keepdim) against ops.std(input, axis, ddof, keepdims).
    facts = _facts(build, "torch.Tensor.std", "mindspore.ops.std")
    assert facts == {("renamed", "dim", "axis"), ("renamed", "correction", "ddof"), ("renamed", "keepdim", "keepdims")}


def test_synonyms_win_over_names_that_merely_look_alike(build: Any) -> None:
    facts = _facts(build, "torch.nn.Embedding", "mindspore.nn.Embedding")
    assert ("renamed", "num_embeddings", "vocab_size") in facts
    assert ("renamed", "embedding_dim", "embedding_size") in facts
    assert not any(kind == "renamed" and ms == "embedding_table" for kind, _, ms in facts)


def test_required_operands_are_matched_by_position(build: Any) -> None:
    assert ("renamed", "data", "input_data") in _facts(build, "torch.tensor", "mindspore.tensor")
    assert _facts(build, "torch.dot", "mindspore.ops.dot") == {("renamed", "tensor", "other")}


def test_alike_scores(build: Any) -> None:
    assert build._alike("dim", "axis") > build._alike("keepdim", "keepdims") > build._alike("bias", "has_bias") > 0
    assert build._alike("validate_args", "seed") == 0
    assert build._alike("p", "pad") == 0  # a one-letter name is no prefix of anything


def test_same_named_older_functions_that_compute_something_else_are_no_target() -> None:
    # ops.gather is index_select-like, ops.select is where(cond, x, y), ops.inv is a reciprocal, ops.equal
    # is element-wise: none of them is the torch function of the same name, in any version.
    table = load_table()
    for api, wrong in [("torch.gather", "mindspore.ops.gather"), ("torch.select", "mindspore.ops.select"),
                       ("torch.linalg.inv", "mindspore.ops.inv"), ("torch.equal", "mindspore.ops.equal")]:
        entry = table.entries[api]
        assert wrong not in [t.api for t in entry.targets], api


def test_every_documented_overload_is_read_and_printed_output_is_not(build: Any) -> None:
    import torch

    from torch2ms.mapping_tools import torch_params

    # torch.mean documents its dim overload as ".. function:: mean(input, dim, keepdim=False, ...)".
    names = [{n for n, _ in overload} for overload in torch_params(torch.mean, "mean") or []]
    assert any({"dim", "keepdim"} <= overload for overload in names)
    assert {("renamed", "dim", "axis"), ("renamed", "keepdim", "keep_dims")} <= _facts(
        build, "torch.mean", "mindspore.ops.mean")
    # torch.topk's docstring prints "torch.return_types.topk(values=..., indices=...)": not a signature.
    assert not {"values", "indices"} & {n for o in torch_params(torch.topk, "topk") or [] for n, _ in o}


def test_the_committed_tables_hold_the_weight_facts_of_the_overrides(build: Any) -> None:
    """mappings/*.yaml carry exactly scripts/mapping_overrides_weights.yaml (`build_tables.py --weights-only`)."""
    import yaml

    written = {}
    for path in sorted((ROOT / "mappings").glob("torch*.yaml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["entries"]:
            if "weights" in entry:
                written[entry["api"]] = entry["weights"]
    facts = build.weight_facts()
    assert written == facts
    assert {"torch.nn.BatchNorm2d", "torch.nn.LSTM", "torch.nn.Embedding", "torch.nn.MultiheadAttention"} <= set(facts)
def test_the_tables_carry_the_effort_build_tables_gives(build: Any) -> None:
    """Every entry without a MindSpore target has the effort class that build_tables writes: the override's,
    "manual" for a hand-written entry (its note names the workaround), else the class of its generated note."""
    import yaml

    manual: dict[str, dict[str, Any]] = {}
    for path in build.OVERRIDES:
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["entries"]:
            manual[entry["api"]] = entry
    table = load_table()
    checked = 0
    for api, entry in table.entries.items():
        if entry.category.value != "missing" or entry.inplace_of and entry.effort is None:
            continue
        man = manual.get(api, {})
        if "effort" in man:
            expected = man["effort"]
        elif man.get("category") == "missing" or api.split(".")[0] in build.LIBRARIES:
            expected = "manual"
        else:
            expected = build.missing_fact(api)[1]
        assert entry.effort == expected, api
        checked += 1
    assert checked > 800
    for api in ("torch.no_grad", "torch.device", "torch.Tensor.cuda"):
        assert table.entries[api].effort == "remove"
    assert build.missing_fact("torch.histogram") == (build.missing_note("torch.histogram"), "blocker")
