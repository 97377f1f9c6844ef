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


def _committed(key: str) -> dict[str, Any]:
    """`key` of every entry of the committed tables that has it, by API."""
    return {api: entry[key] for api, entry in _committed_entries().items() if key in entry}


def _committed_entries() -> dict[str, Any]:
    """Every entry of the committed tables, by API."""
    import yaml

    entries = {}
    for path in sorted((ROOT / "src" / "torch2ms" / "data").glob("torch*.yaml")):
        for entry in yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["entries"]:
            entries[entry["api"]] = entry
    return entries


def _facts(build: Any, api: str, target: str) -> set[tuple[str, str | None, str | None]]:
    facts = build.param_facts(api, build.resolve(api), target, build.resolve(target), [])
    return {(f["kind"], f.get("torch"), f.get("ms")) for f in facts}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_optional_parameters_that_only_share_a_position_are_not_renamed(build: Any) -> None:
    # torch.distributions.Normal(loc, scale, validate_args) against Normal(mean, sd, seed, dtype, name):
    # validate_args sits where seed sits, but it is not seed.
    facts = _facts(build, "torch.distributions.Normal", "mindspore.nn.probability.distribution.Normal")
    assert facts == {("renamed", "loc", "mean"), ("renamed", "scale", "sd"), ("dropped", "validate_args", None)}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_cell_that_keeps_cells_constructor_takes_no_torch_argument(build: Any) -> None:
    # mint.nn.Mish inherits Cell.__init__(auto_prefix, flags): torch's inplace is dropped, not renamed.
    assert _facts(build, "torch.nn.Mish", "mindspore.mint.nn.Mish") == {("dropped", "inplace", None)}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_tensor_method_mapped_to_a_function_skips_the_tensor_parameter(build: Any) -> None:
    # Tensor.std(dim, *, correction, keepdim) against ops.std(input, axis, ddof, keepdims).
    facts = _facts(build, "torch.Tensor.std", "mindspore.ops.std")
    assert facts == {("renamed", "dim", "axis"), ("renamed", "correction", "ddof"), ("renamed", "keepdim", "keepdims")}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_synonyms_win_over_names_that_merely_look_alike(build: Any) -> None:
    facts = _facts(build, "torch.nn.Embedding", "mindspore.nn.Embedding")
    assert ("renamed", "num_embeddings", "vocab_size") in facts
    assert ("renamed", "embedding_dim", "embedding_size") in facts
    assert not any(kind == "renamed" and ms == "embedding_table" for kind, _, ms in facts)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
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


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
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
    """src/torch2ms/data/*.yaml carry exactly scripts/mapping_overrides_weights.yaml (`build_tables.py --weights-only`)."""
    written = _committed("weights")
    facts = build.weight_facts()
    assert written == facts
    assert {"torch.nn.BatchNorm2d", "torch.nn.LSTM", "torch.nn.Embedding", "torch.nn.MultiheadAttention"} <= set(facts)
def _form(form: str, status: str, runs: bool | None, differences: dict[str, str] | None = None) -> Any:
    from torch2ms.verify.record import FormRecord

    return FormRecord(form=form, status=status, devices=("cpu",), runs=runs, differences=differences or {})


def _record(api: str, *forms: Any) -> Any:
    from torch2ms.verify.record import EntryRecord, Record

    return Record("2.13.0", "2.10.0", ("cpu",), "d", {api: {"cpu": EntryRecord(forms[0].status, "", tuple(forms))}})


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_devices_and_verified_come_from_the_documentation_and_the_record(build: Any) -> None:
    entry = {"api": "torch.nn.Conv2d", "category": "equivalent",
             "ms": [{"api": "mindspore.mint.nn.Conv2d", "since": "2.3"}, {"api": "mindspore.nn.Conv2d", "until": "2.3"}]}
    record = _record("torch.nn.Conv2d", _form("mindspore.mint.nn.Conv2d", "skipped", False),
                     _form("mindspore.nn.Conv2d", "passed", True))
    build.annotate_devices([entry], record)
    mint, nn = entry["ms"]
    assert mint["devices"] == ["ascend"] and mint["no_kernel"] == ["cpu"] and "verified" not in mint  # documented: Ascend
    assert nn["devices"] == ["cpu", "gpu", "ascend"] and nn["verified"] == ["cpu"]
    # a form documented for Ascend only that ran on the CPU gains the CPU
    mul = {"api": "torch.mul", "ms": [{"api": "mindspore.mint.mul"}]}
    build.annotate_devices([mul], _record("torch.mul", _form("mindspore.mint.mul", "passed", True)))
    assert "cpu" in mul["ms"][0]["devices"]


def test_differences_on_input_variants_become_facts_with_what_they_cover(build: Any) -> None:
    raised = "the MindSpore code raised TypeError: For ReLU6, float64 is not supported"
    entry = {"api": "torch.nn.ReLU6", "category": "equivalent", "ms": [{"api": "mindspore.nn.ReLU6"}]}
    record = _record("torch.nn.ReLU6", _form("mindspore.nn.ReLU6", "failed", True, {
        "dtype=float64": raised, "empty": "result: values differ at 1 of 1 positions",
        "batched": "result: shape differs"}))
    build.derive_case_facts([entry], record)
    facts = entry["ms"][0]["params"]
    loud = next(f for f in facts if f["kind"] == "unsupported_inputs")
    silent = next(f for f in facts if f["kind"] == "semantics_differ")
    assert loud["covers"] == ["dtype=float64"] and "float64 input" in loud["note"]
    assert silent["covers"] == ["empty"]  # a silent difference on other sizes needs a person
    assert entry["category"] == "diff_params"
    # a tag that a written fact already covers gets no second fact
    written = {"kind": "unsupported_inputs", "covers": ["empty"], "note": "crashes on an empty input"}
    known = {"api": "torch.geqrf", "category": "diff_params", "ms": [{"api": "mindspore.ops.geqrf", "params": [written]}]}
    build.derive_case_facts([known], _record("torch.geqrf", _form("mindspore.ops.geqrf", "passed", True, {
        "empty": "the MindSpore code raised a fatal error: the worker crashed (killed by signal SIGFPE)"})))
    assert known["ms"][0]["params"] == [written]
    # where the example itself (or another seed) disagrees, the variants most likely share its cause:
    # nothing is derived, a person decides
    same = {"api": "torch.nn.ReLU6", "category": "equivalent", "ms": [{"api": "mindspore.nn.ReLU6"}]}
    build.derive_case_facts([same], _record("torch.nn.ReLU6", _form("mindspore.nn.ReLU6", "failed", True, {
        "dtype=float64": raised, "empty": "result: values differ", "example": "result: values differ",
        "seed=3": "result: values differ"})))
    assert same == {"api": "torch.nn.ReLU6", "category": "equivalent", "ms": [{"api": "mindspore.nn.ReLU6"}]}
    # an in-place form that leaves its receiver as it was
    inplace = {"api": "torch.Tensor.add_", "category": "equivalent", "ms": [{"api": "mindspore.Tensor.add_"}]}
    build.derive_case_facts([inplace], _record("torch.Tensor.add_", _form("mindspore.Tensor.add_", "failed", True, {
        "example": "the receiver after the in-place call: values differ", "inplace": "the receiver after ..."})))
    (fact,) = inplace["ms"][0]["params"]
    assert fact["covers"] == ["inplace"] and "leaves its receiver unchanged" in fact["note"]


def test_fact_amendments_add_remove_and_drop(build: Any, tmp_path: Path) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text(
        "facts:\n"
        "- api: torch.x\n  target: mindspore.ops.x\n"
        "  remove: [{kind: semantics_differ, torch: null}]\n"
        "  params: [{kind: renamed, torch: dim, ms: axis}]\n"
        "- api: torch.y\n  target: mindspore.ops.y\n  drop: true\n  entry: {note: 'use z'}\n", encoding="utf-8")
    entries = {"torch.x": {"api": "torch.x", "category": "equivalent",
                           "ms": [{"api": "mindspore.ops.x", "params": [{"kind": "semantics_differ", "note": "old"}]}]},
               "torch.y": {"api": "torch.y", "category": "equivalent", "ms": [{"api": "mindspore.ops.y"}],
                           "examples": [{"torch": "torch.y(a)", "mindspore": "mindspore.ops.y(a)"}]}}
    build.apply_fact_amendments(entries, path)
    assert entries["torch.x"]["ms"][0]["params"] == [{"kind": "renamed", "torch": "dim", "ms": "axis"}]
    assert entries["torch.x"]["category"] == "diff_params"
    assert entries["torch.y"] == {"api": "torch.y", "category": "missing", "note": "use z", "effort": "manual"}
    path.write_text("facts:\n- api: torch.x\n  target: mindspore.mint.x\n  params: []\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="torch.x has no target mindspore.mint.x"):
        build.apply_fact_amendments(entries, path)


@pytest.mark.needs_mindspore
def test_fact_amendments_state_the_devices_measured_by_hand_and_the_record_keeps_them(build: Any, tmp_path: Path) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text("facts:\n- api: torch.x\n  target: mindspore.mint.x\n  devices: [ascend]\n  no_kernel: [cpu]\n",
                    encoding="utf-8")
    entries = {"torch.x": {"api": "torch.x", "category": "equivalent",
                           "ms": [{"api": "mindspore.mint.x"}, {"api": "mindspore.ops.x"}]}}
    build.apply_fact_amendments(entries, path)
    build.annotate_devices(entries.values(), _record("torch.x", _form("mindspore.ops.x", "passed", True)))
    mint, ops = entries["torch.x"]["ms"]
    assert mint["devices"] == ["ascend"] and mint["no_kernel"] == ["cpu"] and "verified" not in mint
    assert "no_kernel" not in ops and ops["verified"] == ["cpu"]


def test_every_example_of_a_hand_written_entry_that_runs_is_kept(build: Any) -> None:
    examples = [{"torch": f"torch.x(a, {n})", "mindspore": f"mindspore.ops.x(a, {n})"} for n in range(4)]
    # the entry's own job ran the second example first (the first failed); of the others only the last ran
    results = {"torch.x": {"ok": True, "cand": {"torch": "torch.x(a, 1)"}},
               build.example_job("torch.x", 1): {"ok": True},
               build.example_job("torch.x", 2): {"ok": False, "errors": ["raised"]},
               build.example_job("torch.x", 3): {"ok": True}}
    log: list[str] = []
    kept = build.manual_examples_that_ran("torch.x", examples, results, log)
    assert [e["torch"] for e in kept] == ["torch.x(a, 1)", "torch.x(a, 3)"]
    assert log == ["FAILED manual example torch.x #2: ['raised']"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_fact_amendments_applied_again_to_committed_tables_change_only_what_is_new(build: Any, tmp_path: Path) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text(
        "facts:\n"
        "- api: torch.x\n  target: mindspore.ops.x\n  remove: [{kind: dropped, torch: out}]\n"
        "  params: [{kind: renamed, torch: dim, ms: axis}, {kind: unsupported_inputs, covers: [empty], note: n}]\n"
        "- api: torch.y\n  target: mindspore.ops.y\n  drop: true\n"
        "- api: torch.z\n  target: mindspore.ops.z\n  params: [{kind: dropped, torch: out}]\n", encoding="utf-8")
    # torch.x holds the renamed fact (with the position a later step gave it) and no longer the removed one;
    # torch.y's target is gone already
    entries = {"torch.x": {"api": "torch.x", "category": "diff_params",
                           "ms": [{"api": "mindspore.ops.x", "params": [{"kind": "renamed", "torch": "dim", "ms": "axis",
                                                                         "position": 1}]}]},
               "torch.y": {"api": "torch.y", "category": "missing", "note": "use z", "effort": "manual"},
               "torch.z": {"api": "torch.z", "category": "equivalent", "ms": [{"api": "mindspore.ops.z"}]}}
    build.apply_fact_amendments(entries, path, again=True, only={"torch.x", "torch.y"})
    assert entries["torch.x"]["ms"][0]["params"] == [
        {"kind": "renamed", "torch": "dim", "ms": "axis", "position": 1},
        {"kind": "unsupported_inputs", "covers": ["empty"], "note": "n"}]
    assert entries["torch.y"]["category"] == "missing"
    assert entries["torch.z"] == {"api": "torch.z", "category": "equivalent", "ms": [{"api": "mindspore.ops.z"}]}
    with pytest.raises(SystemExit, match="has no fact"):  # the full build still checks every amendment
        build.apply_fact_amendments({"torch.x": entries["torch.x"]}, path, only={"torch.x"})


def test_a_rewrites_example_replaces_the_example_of_the_same_call(build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    example = {"torch": "torch.w(a)", "mindspore": "(mindspore.ops.w(a) if a.ndim else a)"}
    monkeypatch.setattr(build, "rewrite_facts", lambda: [
        {"api": "torch.w", "rewrite": {"transform": "compose", "form": "x"}, "examples": [example]}])
    entries = {"torch.w": {"api": "torch.w", "category": "equivalent", "ms": [{"api": "mindspore.ops.w"}],
                           "examples": [{"torch": "torch.w(a)", "mindspore": "mindspore.ops.w(a)"},
                                        {"torch": "torch.w(b, 1)", "mindspore": "mindspore.ops.w(b, 1)"}]}}
    build.add_rewrites(entries)
    assert [e["mindspore"] for e in entries["torch.w"]["examples"]] == [example["mindspore"], "mindspore.ops.w(b, 1)"]


def test_a_rewrites_refresh_drops_the_examples_the_file_no_longer_has(build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    own = {"torch": "torch.v(a)", "mindspore": "mindspore.ops.v(a)"}
    replaced = {"torch": "torch.v(a, 1)", "mindspore": "mindspore.ops.v(a, 1)"}
    entries = {"torch.v": {"api": "torch.v", "category": "equivalent", "ms": [{"api": "mindspore.ops.v"}],
                           "examples": [replaced, own]},
               "torch.u": {"api": "torch.u", "category": "missing", "note": "none"}}
    first = [{"api": "torch.v", "rewrite": {"transform": "compose", "form": "x"},
              "examples": [{"torch": "torch.v(b, 2)", "mindspore": "(lambda b: b)(b)"},
                           {"torch": "torch.v(a, 1)", "mindspore": "(mindspore.ops.v(a, 1))"}]},
             {"api": "torch.u", "rewrite": {"transform": "compose", "form": "y"},
              "examples": [{"torch": "torch.u(c)", "mindspore": "c"}]}]
    monkeypatch.setattr(build, "rewrite_facts", lambda: first)
    build.add_rewrites(entries)
    assert [e.get("from") for e in entries["torch.v"]["examples"]] == ["rewrites", None, "rewrites"]
    after_first = [dict(e) for e in entries["torch.v"]["examples"]]
    assert entries["torch.u"]["examples"] == [{"torch": "torch.u(c)", "mindspore": "c", "from": "rewrites"}]
    # the file changed: torch.v's example now writes another form, torch.u's rewrite and example are gone
    build.add_rewrites(entries)  # the same file again: the same tables, in the same order
    assert entries["torch.v"]["examples"] == after_first
    later = [{"api": "torch.v", "rewrite": {"transform": "compose", "form": "z"},
              "examples": [{"torch": "torch.v(b, 3)", "mindspore": "b"},
                           {"torch": "torch.v(a, 1)", "mindspore": "(mindspore.ops.v(a, 1))"}]}]
    monkeypatch.setattr(build, "rewrite_facts", lambda: later)
    build.add_rewrites(entries)  # what `--rewrites-only` runs on the committed tables
    assert entries["torch.v"]["examples"] == [{**later[0]["examples"][1], "from": "rewrites"}, own,
                                              {"torch": "torch.v(b, 3)", "mindspore": "b", "from": "rewrites"}]
    assert "examples" not in entries["torch.u"] and "rewrite" not in entries["torch.u"]
    assert first[0]["examples"][0] == {"torch": "torch.v(b, 2)", "mindspore": "(lambda b: b)(b)"}  # not marked


def test_the_record_step_alone_marks_verified_only_what_passed_for_the_entries_named(
        build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace as Run

    record = Run(entries={"torch.a": {"cpu": Run(forms=[Run(form="mindspore.ops.a", status="differs", runs=True)])},
                          "torch.b": {"cpu": Run(forms=[Run(form="mindspore.ops.b", status="passed", runs=True)])}})
    entries = {"torch.a": {"api": "torch.a", "ms": [{"api": "mindspore.ops.a", "devices": ["cpu"], "verified": ["cpu"]}]},
               "torch.b": {"api": "torch.b", "ms": [{"api": "mindspore.ops.b", "devices": ["cpu"]}]},
               "torch.c": {"api": "torch.c", "ms": [{"api": "mindspore.ops.c", "devices": ["cpu"], "verified": ["cpu"]}]}}
    monkeypatch.setattr(build, "read_verification", lambda: record)
    monkeypatch.setattr(build, "refresh_committed", lambda step, what: step(entries))
    build.refresh_record(["torch.a", "torch.b"])
    assert "verified" not in entries["torch.a"]["ms"][0]  # its cases now differ as stated
    assert entries["torch.b"]["ms"][0]["verified"] == ["cpu"]
    assert entries["torch.c"]["ms"][0]["verified"] == ["cpu"]  # not named: untouched
    with pytest.raises(SystemExit, match="not entries of the tables: torch.d"):
        build.refresh_record(["torch.d"])


def test_exponent_floats_are_written_as_yaml_floats(build: Any) -> None:
    import yaml

    text = build._flow({"torch_default": 1e-08, "note": "eps 1e-08", "big": 2e10})
    assert yaml.safe_load(text) == {"torch_default": 1e-08, "note": "eps 1e-08", "big": 2e10}


def test_the_tables_carry_the_effort_build_tables_gives(build: Any) -> None:
    """Every entry without a MindSpore target has the effort class that build_tables writes: the override's,
    "manual" for a hand-written entry (its note names the workaround), else the class of its generated note."""
    import yaml

    manual: dict[str, dict[str, Any]] = {}
    for path in build.OVERRIDES:
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["entries"]:
            manual[entry["api"]] = entry
    for library in yaml.safe_load(build.HAND_LIBRARIES.read_text(encoding="utf-8"))["libraries"].values():
        manual.update((entry["api"], entry) for entry in library["entries"])  # hand-written, effort stated
    for amendment in yaml.safe_load(build.FACTS.read_text(encoding="utf-8"))["facts"]:
        if amendment.get("drop") and (amendment.get("entry") or {}).get("note"):  # the note names the workaround
            manual[amendment["api"]] = dict(manual.get(amendment["api"], {}), category="missing")
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


def test_a_broken_verification_record_stops_the_build(build: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record with merge-conflict markers must not be read as no record: the tables would lose every
    verified device and derived fact without a word."""
    (tmp_path / "verification.json").write_text('{\n<<<<<<< HEAD\n "format": 1\n}\n', encoding="utf-8")
    monkeypatch.setattr(build, "MAPPINGS", tmp_path)
    with pytest.raises(SystemExit, match="verification.json cannot be read"):
        build.read_verification()
    (tmp_path / "verification.json").unlink()
    assert build.read_verification() is None  # no record at all: the tables are built without one


def test_a_zeros_difference_an_integer_dtype_explains_is_not_claimed_but_a_value_difference_is(build: Any) -> None:
    """The zeros cases run as float and as int32 and share the tag "zeros": the same raise or result
    dtype as int32's is int32's doing; the same NaN difference may be the float case's own."""
    raised = "the MindSpore code raised TypeError: int32 is not supported"
    tanh = {"api": "torch.tanh", "category": "equivalent", "ms": [{"api": "mindspore.ops.tanh"}]}
    build.derive_case_facts([tanh], _record("torch.tanh", _form("mindspore.ops.tanh", "failed", True, {
        "dtype=int32": raised, "zeros": raised})))
    assert [f["covers"] for f in tanh["ms"][0]["params"]] == [["dtype=int32"]]
    nan = "result: NaN positions differ (0 NaN in torch, 1 in MindSpore)"
    loss = {"api": "torch.nn.CosineEmbeddingLoss", "category": "equivalent",
            "ms": [{"api": "mindspore.nn.CosineEmbeddingLoss"}]}
    build.derive_case_facts([loss], _record("torch.nn.CosineEmbeddingLoss", _form(
        "mindspore.nn.CosineEmbeddingLoss", "failed", True, {"dtype=int32": nan, "zeros": nan})))
    assert [f["covers"] for f in loss["ms"][0]["params"]] == [["dtype=int32", "zeros"]]


def test_dynamic_facts_come_from_their_file_and_cover_the_references_always_dynamic_apis(
        build: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = tmp_path / "mapping_dynamic.yaml"
    facts.write_text("dynamic:\n  - {api: torch.nonzero, always: true, remedy: pad}\n"
                     "  - {api: torch.topk, args: [{arg: k, position: 1, rule: count}]}\n", encoding="utf-8")
    monkeypatch.setattr(build, "DYNAMIC", facts)
    entries = {"torch.nonzero": {"api": "torch.nonzero"}, "torch.topk": {"api": "torch.topk"},
               "torch.sum": {"api": "torch.sum", "dynamic_shape": {"always": True}}}
    rows = [{"op": "NonZero", "condition_kind": "always", "torch_apis": "torch.nonzero;torch.Tensor.__getitem__"},
            {"op": "Sampler", "condition_kind": "always", "torch_apis": "torch.where"}]
    build.add_dynamic(entries, build.always_dynamic(rows))
    assert entries["torch.nonzero"]["dynamic_shape"] == {"always": True, "remedy": "pad"}
    assert entries["torch.topk"]["dynamic_shape"] == {"args": [{"arg": "k", "position": 1, "rule": "count"}]}
    assert "dynamic_shape" not in entries["torch.sum"]  # a fact the file does not hold is dropped
    with pytest.raises(SystemExit, match="torch.unique is always dynamic in the reference table"):
        build.add_dynamic({**entries, "torch.unique": {"api": "torch.unique"}},
                          build.always_dynamic([*rows, {"op": "Unique", "condition_kind": "always",
                                                        "torch_apis": "torch.unique"}]))
    facts.write_text("dynamic:\n  - {api: torch.nothing, always: true}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="torch.nothing is not an entry of the tables"):
        build.add_dynamic(entries)


def test_the_committed_tables_hold_the_dynamic_facts_of_their_file(build: Any) -> None:
    """src/torch2ms/data/*.yaml carry exactly scripts/mapping_dynamic.yaml (`build_tables.py --dynamic-only`)."""
    import json

    import yaml

    written = _committed("dynamic_shape")
    doc = json.loads(json.dumps(yaml.safe_load((ROOT / "scripts" / "mapping_dynamic.yaml").read_text(encoding="utf-8"))))
    assert written == {item.pop("api"): item for item in doc["dynamic"]}


def test_the_committed_tables_mark_the_renamed_parameters_mindspore_orders_otherwise(build: Any) -> None:
    """`by_keyword` of the committed tables is what `build_tables.py --keywords-only` derives from MindSpore's
    signatures (data/mindspore_api.json): nothing to change on a rerun, and the marks are where MindSpore's
    parameter sits elsewhere (nn.Linear's bias is nn.Dense's has_bias, after weight_init and bias_init)."""
    import copy

    entries = _committed_entries()
    derived = copy.deepcopy(entries)
    build.add_keyword_moves(derived)
    assert derived == entries
    dense = next(t for t in entries["torch.nn.Linear"]["ms"] if t["api"] == "mindspore.nn.Dense")
    assert {"kind": "renamed", "torch": "bias", "ms": "has_bias", "position": 2, "by_keyword": True} in dense["params"]
    # a method written as a function of its receiver counts MindSpore's parameters after the receiver
    for entry in entries.values():
        for target in entry.get("ms", ()):
            for fact in target.get("params", ()):
                if fact.get("by_keyword"):
                    assert fact["kind"] == "renamed" and fact["ms"] != fact["torch"]


@pytest.mark.needs_torch
def test_the_committed_tables_name_the_forward_keywords_mindspore_constructs_name_otherwise(build: Any) -> None:
    """`forward` of the committed layer targets is what `build_tables.py --forward-only` derives from torch's forward
    and MindSpore's construct (nothing to change on a rerun), by position: Linear's input is x, L1Loss's
    input and target are logits and labels; a parameter only one side has is not named."""
    import copy

    entries = _committed_entries()
    derived = copy.deepcopy(entries)
    build.add_forward_keywords(derived)
    assert derived == entries
    linear = next(t for t in entries["torch.nn.Linear"]["ms"] if t["api"] == "mindspore.mint.nn.Linear")
    assert linear["forward"] == {"input": "x"}
    loss = next(t for t in entries["torch.nn.L1Loss"]["ms"] if t["api"] == "mindspore.nn.L1Loss")
    assert loss["forward"] == {"input": "logits", "target": "labels"}

    class Two:
        def forward(self, input: Any, target: Any, weight: Any = None, *rest: Any) -> None: ...

    assert build.forward_keywords(Two.forward, ["x", "target"]) == {"input": "x"}
    assert build.forward_keywords(None, ["x"]) == {}


def test_the_committed_library_tables_are_their_hand_written_source(build: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """src/torch2ms/data/einops.yaml is scripts/mapping_libraries.yaml as `build_tables.py --libraries-only` writes it."""
    import yaml

    monkeypatch.setattr(build, "MAPPINGS", tmp_path)
    build.write_hand_libraries()
    libraries = yaml.safe_load((ROOT / "scripts" / "mapping_libraries.yaml").read_text(encoding="utf-8"))["libraries"]
    assert sorted(p.stem for p in tmp_path.glob("*.yaml")) == sorted(libraries)
    for path in tmp_path.glob("*.yaml"):
        assert path.read_text(encoding="utf-8") == (ROOT / "src" / "torch2ms" / "data" / path.name).read_text(encoding="utf-8")


def test_an_example_that_ran_out_of_time_or_crashed_its_worker_is_not_cached(build: Any) -> None:
    assert build._transient({"ok": False, "errors": ["torch.optim.SGD(...): TimeoutError: example took too long"]})
    assert build._transient({"ok": False, "errors": ["worker crashed"]})
    assert not build._transient({"ok": False, "errors": ["torch.abs(x): TypeError: bad operand"]})
    assert not build._transient({"ok": True, "errors": []})


def test_the_committed_targets_keep_their_keys_in_one_order(build: Any) -> None:
    """Every target of the committed tables writes its keys in TARGET_KEY_ORDER, as every build step writes them
    (a full build and a one-step refresh used to disagree on where a later step's key went)."""
    import yaml

    order = build.TARGET_KEY_ORDER
    checked = 0
    for path in sorted((ROOT / "src" / "torch2ms" / "data").glob("torch*.yaml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        for entry in doc["entries"]:
            for target in entry.get("ms", ()):
                known = [k for k in target if k in order]
                assert known == sorted(known, key=order.index), (path.name, entry["api"], list(target))
                assert list(target) == list(build._target_keys(target)), (path.name, entry["api"])
                checked += 1
    assert checked > 1500
