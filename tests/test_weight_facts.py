"""The tables' weight facts: pure placement, their presence in the tables, and their check by running
(a layer example copies torch's weights by the facts, so a wrong fact fails the example)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from torch2ms.mappings import MappingError, build_table, load_table, table_files
from torch2ms.verify.cases import example_specs
from torch2ms.verify.code import split_layer
from torch2ms.verify.pool import Pool
from torch2ms.weights.facts import Facts, Placed, apply_transform, match, transformed_shape

TABLE = load_table()
FACTS = Facts.from_entries(TABLE.entries.values())


def test_batchnorm_names_and_the_counter_that_mindspore_does_not_keep() -> None:
    nn_bn = ("torch.nn.BatchNorm2d", "mindspore.nn.BatchNorm2d")
    assert FACTS.place(*nn_bn, "weight") == Placed("gamma", (), "torch.nn.BatchNorm2d -> mindspore.nn.BatchNorm2d")
    assert FACTS.place(*nn_bn, "running_var").ms == "moving_variance"  # type: ignore[union-attr]
    dropped = FACTS.place(*nn_bn, "num_batches_tracked")
    assert isinstance(dropped, Placed) and dropped.ms is None and "counts no batches" in dropped.note
    mint_bn = ("torch.nn.BatchNorm2d", "mindspore.mint.nn.BatchNorm2d")
    assert FACTS.place(*mint_bn, "num_batches_tracked").ms == "num_batches_tracked"  # type: ignore[union-attr]
    assert FACTS.place("torch.nn.Embedding", "mindspore.nn.Embedding", "weight").ms == "embedding_table"  # type: ignore[union-attr]


def test_numbered_names_sub_layers_and_transforms() -> None:
    lstm = ("torch.nn.LSTM", "mindspore.nn.LSTM")
    assert FACTS.place(*lstm, "weight_hh_l1_reverse").ms == "weight_hh_l1_reverse"  # type: ignore[union-attr]
    assert "no weight fact" in str(FACTS.place(*lstm, "weight_hr_l0"))  # proj_size: no MindSpore counterpart
    enc = FACTS.place("torch.nn.TransformerEncoder", "mindspore.nn.TransformerEncoder", "layers.3.linear1.bias")
    assert isinstance(enc, Placed) and enc.ms == "layers.3.dense1.bias"
    assert enc.form == "torch.nn.Linear -> mindspore.nn.Dense"
    norm = FACTS.place("torch.nn.Transformer", "mindspore.nn.Transformer", "decoder.layers.0.norm3.weight")
    assert isinstance(norm, Placed) and norm.ms == "decoder.layers.0.norm3.gamma"
    conv = FACTS.place("torch.nn.Conv1d", "mindspore.nn.Conv1d", "weight")
    assert isinstance(conv, Placed) and conv.transform == (("unsqueeze", 2),)
    assert transformed_shape((8, 3, 5), conv.transform) == (8, 3, 1, 5)
    assert "no weight facts for torch.nn.Conv1d -> mindspore.nn.Dense" in str(
        FACTS.place("torch.nn.Conv1d", "mindspore.nn.Dense", "weight"))
    assert FACTS.ms_only("torch.nn.BatchNorm3d", "mindspore.nn.BatchNorm3d", "bn2d.moving_mean") is not None
    assert FACTS.ms_only("torch.nn.Linear", "mindspore.nn.Dense", "weight") is None


@pytest.mark.needs_numpy
def test_patterns_and_transforms_on_arrays() -> None:
    import numpy as np

    assert match("weight_ih_l{l}", "weight_ih_l12") == {"l": "12"}
    assert match("weight_ih_l{l}", "weight_ih_l0_reverse") is None
    assert match("a.{i}.b.{i}", "a.1.b.2") is None and match("a.{i}.b.{i}", "a.2.b.2") == {"i": "2"}
    array = np.arange(6).reshape(2, 3)
    assert apply_transform(array, (("transpose", (1, 0)),)).shape == (3, 2)
    assert apply_transform(array, (("unsqueeze", 1),)).shape == (2, 1, 3)


def test_every_weight_form_has_an_example_that_builds_it() -> None:
    for api, entry in TABLE.entries.items():
        for form in entry.weights:
            built = [e for e in entry.examples if (s := split_layer(e.mindspore)) and form.ms in s[0]]
            assert built or form.example is not None, f"{api} -> {form.ms}: nothing verifies its weight facts"
            specs = [s for s in example_specs(entry) if s.get("weights", {}).get("ms") == form.ms]
            assert specs, f"{api} -> {form.ms}: no job copies weights by these facts"


def test_a_sub_layer_without_facts_is_a_table_error(tmp_path: Any) -> None:
    files = table_files()
    name, text = next((n, t) for n, t in files if n == "torch.nn.yaml")
    broken = text.replace('"layer": "torch.nn.MultiheadAttention", "ms_layer": "mindspore.nn.MultiheadAttention"',
                          '"layer": "torch.nn.MultiheadAttention", "ms_layer": "mindspore.nn.NoSuchAttention"', 1)
    assert broken != text
    from importlib import resources

    root = resources.files("torch2ms.data")
    with pytest.raises(MappingError, match="NoSuchAttention"):
        build_table([(n, broken if n == name else t) for n, t in files],
                    root.joinpath("meta.yaml").read_text(encoding="utf-8"),
                    root.joinpath("inventory.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ run for real


@pytest.fixture(scope="module")
def pool():
    with Pool(jobs=2, timeout=60.0) as p:
        yield p


def _spec(api: str, ms_class: str) -> dict[str, Any]:
    """The job that checks the facts of api -> ms_class, as one pair of codes: the table's example that
    builds the class (what the fix writes is checked by `torch2ms verify`; here only the facts vary)."""
    entry = TABLE.entries[api]
    spec = copy.deepcopy(next(s for s in example_specs(entry) if s.get("weights", {}).get("ms") == ms_class))
    if "rewrite" in spec:
        form = entry.weight_form(ms_class)
        example = next((e for e in entry.examples if (s := split_layer(e.mindspore)) and ms_class in s[0]),
                       form.example if form is not None else None)
        assert example is not None
        for key in ("rewrite", "form", "for", "budget", "covers"):
            spec.pop(key, None)
        spec.update(torch=example.torch, mindspore=example.mindspore, inputs=dict(example.inputs))
    return spec


def _set(spec: dict[str, Any], layer: str, torch_name: str, **fact: Any) -> dict[str, Any]:
    form = next(f for f in spec["weights"]["forms"] if f["layer"] == layer)
    param = next(p for p in form["params"] if p.get("torch") == torch_name)
    param.update(fact)
    for key in [k for k, v in fact.items() if v is None and k != "ms"]:
        param.pop(key)
    spec["id"] = f"{spec['id']} with {torch_name} -> {fact}"
    return spec


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_layer_examples_copy_by_the_facts_and_a_wrong_fact_fails(pool: Pool) -> None:
    right = [_spec("torch.nn.BatchNorm2d", "mindspore.nn.BatchNorm2d"),
             _spec("torch.nn.LSTM", "mindspore.nn.LSTM"),
             _spec("torch.nn.Conv1d", "mindspore.nn.Conv1d"),
             _spec("torch.nn.TransformerEncoderLayer", "mindspore.nn.TransformerEncoderLayer")]
    wrong = [
        # the running statistics swapped: equal shapes, so only the inference-mode outputs tell
        _set(_set(copy.deepcopy(right[0]), "torch.nn.BatchNorm2d", "running_mean", ms="moving_variance"),
             "torch.nn.BatchNorm2d", "running_var", ms="moving_mean"),
        _set(copy.deepcopy(right[1]), "torch.nn.LSTM", "weight_ih_l{l}", ms="weight_hh_l{l}"),
        _set(copy.deepcopy(right[2]), "torch.nn.Conv1d", "weight", transform=None),  # the unsqueeze left out
        _set(copy.deepcopy(right[3]), "torch.nn.LayerNorm", "weight", ms="beta"),  # deep in a sub-layer
        _set(copy.deepcopy(right[0]), "torch.nn.BatchNorm2d", "bias", ms="no_such_name"),
    ]
    missing = copy.deepcopy(right[0])
    missing["weights"]["forms"][0]["params"] = [p for p in missing["weights"]["forms"][0]["params"]
                                                if p.get("torch") != "running_mean"]
    missing["id"] = "running_mean without a fact"
    results = pool.run(right + wrong + [missing])
    for spec, result in zip(right, results):
        assert result["status"] == "passed", (spec["id"], result)
        assert any("weights copied by the facts" in n for n in result["notes"]), result
        assert "inference mode compared" in result["notes"], result
    reasons = [str(r.get("reason")) for r in results[len(right):]]
    assert all(r["status"] == "failed" for r in results[len(right):]), results[len(right):]
    assert "inference mode: values differ" in reasons[0], reasons[0]
    assert "the cell's weight_hh_l0 is [20, 5]" in reasons[1], reasons[1]
    assert "becomes [8, 3, 3]" in reasons[2] and "[8, 3, 1, 3]" in reasons[2], reasons[2]
    assert "two torch tensors go to the cell's norm1.beta" in reasons[3], reasons[3]
    assert "names no parameter of the cell" in reasons[4] and "gamma" in reasons[4], reasons[4]
    assert "torch running_mean: no weight fact of torch.nn.BatchNorm2d -> mindspore.nn.BatchNorm2d" in reasons[5]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_cases_the_fix_writes_copy_by_the_facts_too(pool: Pool) -> None:
    """`torch2ms verify` runs an example's cases as the fix writes them for a device: each layer case copies
    torch's weights by the facts and compares inference mode too, so a wrong fact fails the form."""
    entry = TABLE.entries["torch.nn.BatchNorm2d"]
    cpu = entry.target_for((2, 10), "cpu")
    assert cpu is not None and cpu.api == "mindspore.nn.BatchNorm2d"
    spec = next(s for s in example_specs(entry, only=["cpu"]))
    assert spec["rewrite"]["device"] == "cpu" and spec["weights"]["ms"] == cpu.api
    swapped = _set(_set(copy.deepcopy(spec), "torch.nn.BatchNorm2d", "running_mean", ms="moving_variance"),
                   "torch.nn.BatchNorm2d", "running_var", ms="moving_mean")
    right, wrong = pool.run([spec, swapped])
    assert right["status"] == "passed" and right["agreed"] > 1, right
    assert any(n.startswith("weights copied by the facts of torch.nn.BatchNorm2d") for n in right["notes"]), right
    assert "inference mode compared" in right["notes"], right
    assert wrong["status"] == "failed" and "inference mode: values differ" in wrong["reason"], wrong
