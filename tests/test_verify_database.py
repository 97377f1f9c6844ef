"""Cases from torch's own test database (OpInfo, ModuleInfo): the call writing, the jobs, the record's
sources, and a slice of ops and layers run for real in torch 2.13 and MindSpore 2.10."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch2ms.mappings import load_table
from torch2ms.verify.calls import Dtype, Tensor, Unwritable, call_text, case_tags, layer_text, literal
from torch2ms.verify.cases import entry_verdict
from torch2ms.verify.database import catalog_spec, reached, sample_specs, source_counts
from torch2ms.verify.record import EntryRecord, FormRecord, Record, read_record, write_record

TABLE = load_table()


# ------------------------------------------------------------------ writing a sample as code
def test_literals_spell_every_value_code_can_write() -> None:
    assert literal(Tensor("x3")) == "x3"
    assert literal(Dtype("float64")) == "torch.float64"
    assert literal((2,)) == "(2,)" and literal(()) == "()" and literal([1, (2, 3)]) == "[1, (2, 3)]"
    assert literal(float("nan")) == "float('nan')"
    assert literal(-float("inf")) == "-float('inf')" and literal(float("inf")) == "float('inf')"
    assert eval(literal(0.1)) == 0.1 and literal(True) == "True" and literal(None) == "None"
    assert eval(literal(complex(1.5, -2.0))) == complex(1.5, -2.0)
    assert literal("fro") == "'fro'"
    with pytest.raises(Unwritable):
        literal(lambda v: v)
    with pytest.raises(Unwritable):
        literal({"a": 1})


def test_a_sample_is_written_as_the_function_or_the_method_call() -> None:
    x0, x1 = Tensor("x0"), Tensor("x1")
    assert call_text("nn.functional.pad", x0, ((1, 1),), {"mode": "reflect"}, False) == \
        "torch.nn.functional.pad(x0, (1, 1), mode='reflect')"
    assert call_text("add", x0, (x1,), {"alpha": 2}, True) == "x0.add(x1, alpha=2)"
    assert call_text("cat", [x0, x1], (), {"dim": -1}, False) == "torch.cat([x0, x1], dim=-1)"
    assert call_text("sum", x0, (), {"dtype": Dtype("float64")}, False) == "torch.sum(x0, dtype=torch.float64)"
    with pytest.raises(Unwritable):  # a list of tensors has no method form
        call_text("cat", [x0, x1], (), {}, True)
    assert layer_text("torch.nn.Linear", (3, 4), {"bias": False}, (x0,), {}) == "torch.nn.Linear(3, 4, bias=False)(x0)"


def test_case_tags_name_the_source_dtype_keywords_and_shapes() -> None:
    x, y = Tensor("x0", (2, 3)), Tensor("x1", (2, 3))
    assert case_tags("opinfo", "float32", [x, 2, y], {"dim": 1}) == ["opinfo", "dtype=float32", "opt=dim", "rank=2"]
    assert case_tags("moduleinfo", "float64", [[Tensor("x0", (0, 3))]], {}) == \
        ["moduleinfo", "dtype=float64", "rank=2", "empty"]
    assert case_tags("opinfo", "float32", [x, Tensor("x1", (3,))], {}) == ["opinfo", "dtype=float32", "rank=2", "broadcast"]
    assert case_tags("opinfo", "float32", [False, 4, True], {"dtype": 1}) == ["opinfo", "dtype=float32", "opt=dtype", "bool-arg"]
    assert "bool-arg" not in case_tags("opinfo", "float32", [x, 1], {"keepdim": True})  # by keyword: opt=keepdim
    assert case_tags("opinfo", "float32", [Tensor("x0", ())], {}) == ["opinfo", "dtype=float32", "rank=0", "0-d"]
    # a matrix product's shapes differ without broadcasting
    assert case_tags("opinfo", "float32", [Tensor("x0", (5, 0)), Tensor("x1", (0, 5))], {}) == \
        ["opinfo", "dtype=float32", "rank=2", "empty"]
    # the rank is the first tensor's (a layer's input without its batch dimension: one less), not a later one's
    assert "rank=1" in case_tags("moduleinfo", "float32", [Tensor("x0", (4,)), Tensor("x1", (2, 4))], {})
    assert not any(t.startswith("rank=") for t in case_tags("opinfo", "float32", [2, 3.0], {}))


# ------------------------------------------------------------------ jobs
CATALOG = {
    "ops": [{"name": "add", "variant": "", "method": True, "dtypes": ["float32", "float64", "int64"]},
            {"name": "nn.functional.relu", "variant": "", "method": False, "dtypes": ["float32"]},
            {"name": "no_such_op_anywhere", "variant": "", "method": True, "dtypes": ["float32"]}],
    "modules": [{"name": "torch.nn.Linear", "variant": "", "dtypes": ["float32", "float64"]}],
}


def test_each_database_item_reaches_its_function_method_and_layer_entries() -> None:
    pairs = {(api, kind) for api, kind, _ in reached(TABLE, CATALOG)}
    assert pairs == {("torch.add", "function"), ("torch.Tensor.add", "method"),
                     ("torch.nn.functional.relu", "function"), ("torch.nn.Linear", "layer")}


def test_one_job_per_entry_written_form_and_dtype_in_the_form_for_the_device() -> None:
    specs = sample_specs(TABLE, CATALOG, "cpu", every_dtype=False)
    assert sorted(s["id"].split("@")[0] for s in specs) == sorted([
        "torch.add#opinfo:add:float32", "torch.Tensor.add#opinfo:add:float32",
        "torch.nn.functional.relu#opinfo:nn.functional.relu:float32",
        "torch.nn.Linear#moduleinfo:torch.nn.Linear:float32"])
    linear = next(s for s in specs if s["api"] == "torch.nn.Linear")
    assert linear["kind"] == "layer" and linear["source"] == "moduleinfo"
    assert linear["rewrite"]["device"] == "cpu" and "cpu" in linear["for"]
    every = sample_specs(TABLE, CATALOG, "cpu", every_dtype=True, apis={"torch.add"})
    assert [s["dtype"] for s in every] == ["float32", "float64", "int64"]  # float32 first


def test_samples_are_compared_as_the_entrys_own_example() -> None:
    """torch.empty_like's example compares shapes only (uninitialised memory): so do its samples."""
    catalog = {"ops": [{"name": "empty_like", "variant": "", "method": False, "dtypes": ["float32"]}]}
    (spec,) = sample_specs(TABLE, catalog, "cpu")
    assert TABLE.entries["torch.empty_like"].examples[0].extra["compare"] == "shape"
    assert spec["compare"] == "shape"


def test_a_layer_job_carries_the_weight_facts_of_the_form_it_runs() -> None:
    """MindSpore's nn.BatchNorm3d keeps its tensors in an inner cell (bn2d.gamma, ...): the worker copies
    torch's tensors by the form's facts, as for the entry's own example, not by name (which would leave the
    cell's initial values and compare other layers)."""
    catalog = {"modules": [{"name": "torch.nn.BatchNorm3d", "variant": "", "dtypes": ["float32"]},
                           {"name": "torch.nn.ReLU", "variant": "", "dtypes": ["float32"]}]}
    specs = {s["api"]: s for s in sample_specs(TABLE, catalog, "cpu")}
    bn = specs["torch.nn.BatchNorm3d"]
    assert bn["weights"]["layer"] == "torch.nn.BatchNorm3d" and bn["weights"]["ms"] == bn["form"]
    assert "bn2d.gamma" in json.dumps(bn["weights"]["forms"])
    assert "weights" not in specs["torch.nn.ReLU"]  # no tensors, no facts


def test_record_keeps_the_cases_of_each_source(tmp_path: Path) -> None:
    form = FormRecord(form="mindspore.mint.add", status="passed", devices=("cpu",), version="2.10",
                      counts={"cases": 30, "agreed": 30}, sources={"generator": 19, "opinfo": 11})
    record = Record("2.13.0", "2.10.0", ("cpu",), "2026-11-29",
                    {"torch.add": {"cpu": EntryRecord("passed", forms=(form,))}})
    write_record(record, tmp_path / "r.json")
    again = read_record(tmp_path / "r.json").get("torch.add", "cpu")
    assert again is not None and again.forms[0].sources == {"generator": 19, "opinfo": 11}
    spec = {"form": "mindspore.mint.add", "for": ["cpu"], "rewrite": {"version": "2.10"}}
    results = [{"status": "passed", "cases": 19, "agreed": 19, "source": "generator"},
               {"status": "passed", "cases": 11, "agreed": 11, "source": "opinfo"}]
    verdict = entry_verdict(TABLE.entries["torch.add"], "cpu", [spec, spec], results)
    assert verdict.forms[0].sources == {"generator": 19, "opinfo": 11}
    assert source_counts(results + [{"cases": 4, "source": "moduleinfo"}]) == \
        {"generator": 19, "opinfo": 11, "moduleinfo": 4}


# ------------------------------------------------------------------ for real
@pytest.fixture(scope="module")
def pool():
    from torch2ms.verify.pool import Pool

    with Pool(jobs=1, timeout=30.0) as p:
        yield p


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_a_slice_of_the_database_runs_as_the_fix_writes_it(pool) -> None:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    (catalog,) = pool.run([catalog_spec()])
    assert catalog["status"] == "passed", catalog
    names = {op["name"] for op in catalog["ops"]}
    assert {"add", "abs", "nn.functional.relu"} <= names
    assert "torch.nn.BatchNorm1d" in {m["name"] for m in catalog["modules"]}
    apis = {"torch.add", "torch.Tensor.add", "torch.nn.functional.relu", "torch.nn.BatchNorm1d", "torch.nn.BatchNorm3d"}
    specs = sample_specs(TABLE, catalog, "cpu", apis=apis)
    assert {s["api"] for s in specs} == apis
    results = {s["api"]: r for s, r in zip(specs, pool.run(specs))}
    listed = len(list(next(o for o in op_db if o.name == "add").sample_inputs("cpu", torch.float32)))
    for api in ("torch.add", "torch.Tensor.add"):
        result = results[api]
        assert result["status"] == "passed" and result["source"] == "opinfo", result
        assert result["cases"] + result["no_fix"] + result["rejected"] == listed, result
        assert result["agreed"] == result["cases"] > 0
    assert "mindspore.Tensor.add" in results["torch.Tensor.add"]["form"]
    bn = results["torch.nn.BatchNorm1d"]
    assert bn["source"] == "moduleinfo" and bn["cases"] > 0 and bn["failed"] == 0, bn
    assert "buffers compared after the call" in bn["notes"], bn  # running statistics after a training step
    bn3 = results["torch.nn.BatchNorm3d"]  # its tensors copied by the weight facts (an inner bn2d cell)
    assert bn3["cases"] > 0 and bn3["failed"] == 0 and any(n.startswith("weights copied by the facts of") for n in bn3["notes"]), bn3
    verdict = entry_verdict(TABLE.entries["torch.add"], "cpu", [s for s in specs if s["api"] == "torch.add"],
                            [results["torch.add"]])
    assert verdict.status == "passed" and verdict.forms[0].sources == {"opinfo": results["torch.add"]["cases"]}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_running_statistics_after_a_training_step_are_compared(pool) -> None:
    """The output of a batch norm in training uses the batch's statistics, the same whatever the
    momentum; the running mean after the step shows MindSpore's momentum is 1 - torch's."""
    def spec(ms_momentum: float) -> dict:
        return {"id": f"bn{ms_momentum}", "api": "test", "kind": "layer", "train": True,
                "torch": "torch.nn.BatchNorm1d(3, momentum=0.3)(x)",
                "mindspore": f"mindspore.nn.BatchNorm1d(3, momentum={ms_momentum})(x)",
                "inputs": {"x": {"shape": [8, 3], "dtype": "float32"}}}

    same, wrong = pool.run([spec(0.7), spec(0.3)])
    assert same["status"] == "passed", same
    assert "buffers compared after the call" in same["notes"]
    assert wrong["status"] == "failed" and "running_mean after the call" in wrong["reason"], wrong


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_verify_takes_its_cases_from_the_sources_named(pool) -> None:
    """`torch2ms verify API --source opinfo` runs torch's samples of the entry (not its examples' generated
    cases); an unknown source is a usage error."""
    import argparse
    import io

    from torch2ms.cli import main
    from torch2ms.verify import command

    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    out = io.StringIO()
    args = parser.parse_args(["torch.nn.functional.relu", "--source", "opinfo", "--json"])
    assert command.run(args, out=out, pool=pool) == 0
    results = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    assert results and {r["source"] for r in results} == {"opinfo"}
    assert sum(r["cases"] for r in results) > 0 and all(r["status"] == "passed" for r in results), results
    both = io.StringIO()
    args = parser.parse_args(["torch.nn.functional.relu", "--source", "opinfo", "--source", "generator", "--json"])
    assert command.run(args, out=both, pool=pool) == 0
    assert {json.loads(line)["source"] for line in both.getvalue().splitlines() if line.startswith("{")} == \
        {"opinfo", "generator"}
    with pytest.raises(SystemExit) as exc:
        main(["verify", "torch.abs", "--source", "elsewhere"])
    assert exc.value.code == 2
