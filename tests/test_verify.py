"""The verify backend, run for real: torch 2.13 and MindSpore 2.10 in worker processes.

One warm pool of two workers serves most tests (starting a worker imports torch and
MindSpore, seconds each); the crash and hang tests replace workers on purpose.
"""

from __future__ import annotations

import ast

import argparse
import io
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from torch2ms.mappings import load_table
from torch2ms.verify import command
from torch2ms.model import Category, Example, FactKind, MappingEntry, ParamFact, Target
from torch2ms.verify.cases import declared_dtypes, entry_verdict, example_specs, forms, own_forms, sample, select
from torch2ms.verify.compare import Arr, compare, compare_draws
from torch2ms.verify.generate import Signature, generate
from torch2ms.verify.locate import LocateError, free_names, locate, parse_shape
from torch2ms.verify.pool import Pool
from torch2ms.verify.record import (
    EntryRecord, FormRecord, Record, RecordError, default_path, load_record, merged, read_record, write_record,
)
from torch2ms.verify.worker import Rewriter, check_numpy, rewrites_for, writes_form

pytestmark = [pytest.mark.needs_torch, pytest.mark.needs_mindspore, pytest.mark.needs_numpy]  # the verify backend runs both

TABLE = load_table()
SAMPLE_SIZE = 50


@pytest.fixture(scope="module")
def pool():
    with Pool(jobs=2, timeout=30.0) as p:
        yield p


def _spec(torch_code: str, ms_code: str, **extra):
    spec = {"id": torch_code, "api": "test", "torch": torch_code, "mindspore": ms_code,
            "inputs": {"x": {"shape": [3, 4], "dtype": "float32"}, "y": {"shape": [3, 4], "dtype": "float32"}}}
    spec.update(extra)
    return spec


# ------------------------------------------------------------------ pure parts (no workers)
def test_compare_values_structure_nan_and_dtype() -> None:
    a = Arr(np.array([1.0, np.nan, np.inf], np.float32), "float32")
    assert compare(a, Arr(np.array([1.0 + 1e-7, np.nan, np.inf], np.float32), "float32")).ok
    assert "NaN positions" in compare(a, Arr(np.array([1.0, 2.0, np.inf], np.float32), "float32")).reason
    assert "inf" in compare(a, Arr(np.array([1.0, np.nan, -np.inf], np.float32), "float32")).reason
    far = compare(a, Arr(np.array([1.1, np.nan, np.inf], np.float32), "float32"))
    assert not far.ok and math.isclose(far.max_abs_err, 0.1, rel_tol=1e-5)
    assert compare(a, Arr(np.array([1.1, np.nan, np.inf], np.float32), "float32"), rtol=0.2).ok
    i64, i32 = Arr(np.array([1, 2]), "int64"), Arr(np.array([1, 2], np.int32), "int32")
    assert "dtype differs" in compare(i64, i32).reason
    assert compare(i64, i32, dtypes={"int64": "int32"}).ok
    assert "structure" in compare([i64, i64], i64).reason
    assert "returns 2 values" in compare([i64, i64], [i64]).reason
    assert compare(Arr(np.array(3.0), "py:float"), Arr(np.array(3.0, np.float32), "float32")).ok
    assert not compare(Arr(np.array(3), "py:int"), Arr(np.array(3.0, np.float32), "float32")).ok
    assert "shape differs" in compare(i64, Arr(np.array([[1, 2]]), "int64")).reason


def test_random_mode_compares_statistics_and_shape_mode_ignores_values() -> None:
    rng = np.random.default_rng(0)
    u1, u2 = rng.random(1000).astype(np.float32), rng.random(1000).astype(np.float32)
    assert compare(Arr(u1, "float32"), Arr(u2, "float32"), random=True).ok
    assert not compare(Arr(u1, "float32"), Arr(u2, "float32")).ok
    ones = Arr(np.ones(1000, np.float32), "float32")
    assert "different means" in compare(Arr(u1, "float32"), ones, random=True).reason
    assert compare(Arr(u1, "float32"), ones, mode="shape").ok


def test_draws_tell_a_dropout_rate_from_a_keep_probability() -> None:
    """One draw's mean cannot tell dropout(p) from dropout with keep_prob=p (both keep the mean); the
    fraction of zeros and the scale of the kept values over independent draws can."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 0.9, 12)

    def dropout(rate: float) -> Arr:
        keep = rng.random(12) >= rate
        return Arr(np.where(keep, x / (1 - rate), 0.0).astype(np.float32), "float32")

    torch_draws = [dropout(0.1) for _ in range(20)]
    assert compare_draws(torch_draws, [dropout(0.1) for _ in range(20)]).ok
    wrong = [dropout(0.9) for _ in range(20)]  # keep_prob=0.1 where torch meant p=0.1
    assert compare(torch_draws[0], wrong[0], random=True).ok  # the mean of one draw does not see it
    reason = compare_draws(torch_draws, wrong).reason
    assert "over 20 draws" in reason and ("fraction of zeros" in reason or "standard deviation" in reason), reason
    # a tuple result: each array on its own; a permutation (dependent elements) agrees with itself
    perms = [[Arr(rng.permutation(10), "int64"), Arr(rng.random(3), "float64")] for _ in range(20)]
    assert compare_draws(perms, [[Arr(rng.permutation(10), "int64"), Arr(rng.random(3), "float64")]
                                 for _ in range(20)]).ok
    assert "[1] differ in their mean" in compare_draws(perms, [[Arr(rng.permutation(10), "int64"),
                                                                 Arr(rng.random(3) + 1, "float64")]
                                                                for _ in range(20)]).reason


def test_sample_is_deterministic_and_covers_every_kind() -> None:
    entries = select(TABLE)
    first, second = sample(entries, SAMPLE_SIZE), sample(list(reversed(entries)), SAMPLE_SIZE)
    assert [e.api for e in first] == [e.api for e in second]
    assert len(first) == SAMPLE_SIZE and all(e.examples for e in first)
    kinds = {str(e.examples[0].extra.get("kind") or "function") for e in first}
    assert {"layer", "optimizer", "scheduler", "inplace", "method", "function"} <= kinds


def test_every_form_the_fix_writes_becomes_a_job_per_example() -> None:
    entry = TABLE.entries["torch.nn.Conv2d"]
    found = forms(entry)
    by_api = {f.target.api: f for f in found}
    cpu, ascend = entry.target_for((2, 10), "cpu"), entry.target_for((2, 10), "ascend")
    assert cpu is not None and ascend is not None and cpu is not ascend
    assert "cpu" in by_api[cpu.api].devices and "ascend" in by_api[ascend.api].devices
    specs = example_specs(entry)
    assert {spec["form"] for spec in specs} == set(by_api)
    for spec in specs:
        assert spec["torch"] == entry.examples[0].torch and "mindspore" not in spec  # the fix writes it
        form = by_api[spec["form"]]
        assert spec["rewrite"]["version"] == form.version_text and spec["rewrite"]["device"] == form.rewrite_device
        assert entry.target_for(form.version, form.rewrite_device) is form.target
        # the fix writes it for that device: there it has a kernel, or it is measured again as if it had
        assert spec["rewrite"]["measure"] == (form.rewrite_device in form.target.no_kernel)
    assert [s["form"] for s in example_specs(entry, only=["cpu"])] == [cpu.api]


def _conv_specs() -> list[dict]:
    return example_specs(TABLE.entries["torch.nn.Conv2d"])


def test_entry_verdict_is_the_form_written_for_the_device() -> None:
    entry = TABLE.entries["torch.nn.Conv2d"]
    specs = _conv_specs()
    cpu = entry.target_for((2, 10), "cpu")
    results = [{"status": "passed", "cases": 24, "agreed": 24, "runs": True} if spec["form"] == cpu.api else
               {"status": "skipped", "reason": "no CPU kernel", "runs": False} for spec in specs]
    verdict = entry_verdict(entry, "cpu", specs, results)
    assert verdict.status == "passed" and verdict.form_for("cpu").form == cpu.api  # type: ignore[union-attr]
    assert verdict.form_for("cpu").count("cases") == 24  # type: ignore[union-attr]
    ascend = verdict.form_for("ascend")
    assert ascend is not None and ascend.status == "skipped" and ascend.runs is False
    bad = [dict(r, status="failed", reason="boom", failed=1) if r["status"] == "passed" else r for r in results]
    assert entry_verdict(entry, "cpu", specs, bad).status == "failed"
    assert entry_verdict(MappingEntry(api="t.x", category=Category.EQUIVALENT), "cpu", [], []).reason == "no example"


def test_where_the_target_has_no_kernel_the_entrys_own_rewrite_is_a_form_of_its_own() -> None:
    entry = TABLE.entries["torch.rms_norm"]  # ops.rms_norm: Ascend only; the tables compose it on the CPU
    target = entry.target_for((2, 10), "cpu")
    assert target is not None and "cpu" in target.no_kernel and entry.rewrite is not None
    (own,) = own_forms(entry)
    assert own.name == "rewrite:compose" and "cpu" in own.devices and own.rewrite_device == "cpu"
    assert forms(entry)[-1] == own and forms(entry)[0].name == target.api  # the target is still measured
    specs = example_specs(entry)
    mine = [s for s in specs if s["form"] == "rewrite:compose"]
    assert mine and all(s["own"] and not s["rewrite"]["measure"] for s in mine)
    assert all("own" not in s for s in specs if s not in mine)
    assert own_forms(replace(entry, rewrite=None)) == []  # nothing of its own: only the target is measured
    assert own_forms(TABLE.entries["torch.nn.Conv2d"]) == []  # a form with a CPU kernel: written as it is
    # the entry's status on the CPU: its own rewrite where that ran, else the target's reason
    ran = [{"status": "passed", "cases": 20, "agreed": 20, "runs": True} if s in mine else
           {"status": "skipped", "reason": "no CPU kernel for RmsNorm", "runs": False} for s in specs]
    verdict = entry_verdict(entry, "cpu", specs, ran)
    assert verdict.status == "passed" and verdict.forms[0].runs is False  # (the target: no kernel, recorded)
    idle = [{"status": "skipped", "reason": "no case to run", "no_fix": 3} if s in mine else r for s, r in zip(specs, ran)]
    assert entry_verdict(entry, "cpu", specs, idle).reason.endswith("no CPU kernel for RmsNorm")


def _argmin_target(result_dtype: tuple[str, str] | None, note: str = "") -> Target:
    facts = [ParamFact(kind=FactKind.RENAMED, torch="dim", ms="axis")]
    if result_dtype is not None or note:
        facts.append(ParamFact(kind=FactKind.SEMANTICS_DIFFER, note=note, result_dtype=result_dtype))
    return Target(api="mindspore.ops.argmin", category=Category.DIFF_PARAMS, params=tuple(facts))


ARGMIN_EXAMPLE = Example(torch="torch.argmin(x)", mindspore="mindspore.ops.argmin(x)",
                         inputs={"x": {"shape": [3, 4], "dtype": "float32"}}, extra={"dtypes": {"int64": "int32"}})


def test_a_dtype_difference_counts_only_where_the_table_states_it() -> None:
    stated = _argmin_target(("int64", "int32"))
    assert declared_dtypes(stated, ARGMIN_EXAMPLE) == {"int64": "int32"}
    # The example's `dtypes` alone declares nothing: without a fact, or with a fact naming other dtypes,
    # the difference is not passed on and the comparison still fails on it.
    assert declared_dtypes(_argmin_target(None), ARGMIN_EXAMPLE) == {}
    assert declared_dtypes(_argmin_target(("int64", "float32")), ARGMIN_EXAMPLE) == {}
    assert declared_dtypes(_argmin_target(None, "returns int32 indices"), ARGMIN_EXAMPLE) == {}  # not about the dtype pair
    # The fact is the structured field, not prose: a note alone states nothing.
    assert declared_dtypes(_argmin_target(None, "result dtype differs (torch int64, MindSpore int32)"),
                           ARGMIN_EXAMPLE) == {}
    # A declared pair accepts exactly that pair, one way round, and the values must still agree.
    declared = {"int64": "int32"}
    i64, i32 = Arr(np.array([1, 2]), "int64"), Arr(np.array([1, 2], np.int32), "int32")
    assert compare(i64, i32, dtypes=declared).ok
    assert "values differ" in compare(i64, Arr(np.array([1, 3], np.int32), "int32"), dtypes=declared).reason
    assert "dtype differs" in compare(i64, Arr(np.array([1, 2], np.int16), "int16"), dtypes=declared).reason
    assert "dtype differs" in compare(i32, Arr(np.array([1, 2]), "int64"), dtypes=declared).reason
    assert "dtype differs" in compare([i64, i64], [i64, Arr(np.array([1.0, 2.0], np.float32), "float32")],
                                      dtypes=declared).reason


def _tags(cases) -> set[str]:
    return {tag for case in cases for tag in case.tags}


def test_generated_cases_cover_dtypes_shapes_dims_and_call_forms() -> None:
    spec = {"torch": "torch.sum(x, 1)", "inputs": {"x": {"shape": [3, 4], "dtype": "float32"},
                                                     "i": {"value": [0, 1], "dtype": "int64"}}}
    sig = Signature((("input", False), ("dim", True), ("keepdim", True)), keyword_only=frozenset({"dtype"}))
    cases = generate(spec, sig)
    assert cases[0].tags == ["example"] and cases[0].torch == "torch.sum(x, 1)"
    assert len(cases) >= 24
    tags = _tags(cases)
    assert {"dtype=float64", "dtype=int32", "dtype=int64", "dtype=bool", "0-d", "empty", "noncontiguous",
            "dim<0", "dim=tuple", "keepdim", "keyword", "defaults", "grad", "zeros"} <= tags
    code = {case.tags[0]: case for case in cases}
    assert code["dim<0"].torch == "torch.sum(x, -1)"
    assert code["dim=tuple"].torch == "torch.sum(x, (0, 1))"
    assert code["keyword"].torch == "torch.sum(x, dim=1)"
    assert code["defaults"].torch == "torch.sum(x)"
    assert code["keepdim"].torch == "torch.sum(x, 1, keepdim=True)"
    assert code["0-d"].inputs["x"]["shape"] == [] and code["empty"].inputs["x"]["shape"] == [0, 4]
    assert code["0-d"].inputs["i"] == spec["inputs"]["i"]  # fixed values stay as they are
    assert code["dtype=int32"].inputs["x"]["dtype"] == "int32" and code["dtype=int32"].inputs["i"]["dtype"] == "int64"
    assert code["ints=int32"].inputs["i"]["dtype"] == "int32" and code["ints=int32"].inputs["x"]["dtype"] == "float32"
    assert code["noncontiguous"].inputs["x"]["layout"] == "noncontiguous"
    zeros = [case for case in cases if case.tags[0] == "zeros"]
    assert [c.inputs["x"].get("dtype", "float32") for c in zeros] == ["float32", "int32"]
    assert all(c.inputs["x"]["zeros"] == 0.5 for c in zeros)
    assert all(case.grad for case in cases if "grad" in case.tags)
    # a method: the receiver is not an argument; a dim the example leaves out is passed explicitly
    method = generate({"torch": "x.any()", "kind": "method", "inputs": {"x": {"shape": [3, 4]}}},
                      Signature((("dim", True), ("keepdim", True))))
    forms_ = {case.torch for case in method}
    assert {"x.any(dim=0)", "x.any(dim=-1)", "x.any(dim=0, keepdim=True)"} <= forms_
    # two inputs of one shape: a broadcast case; a layer's constructor arguments change, its input stays
    binary = generate({"torch": "torch.add(x, y)", "inputs": {"x": {"shape": [3, 4]}, "y": {"shape": [3, 4]}}}, None)
    assert any(case.tags == ["broadcast"] and case.inputs["y"]["shape"] == [4] for case in binary)
    layer = generate({"torch": "torch.nn.Linear(4, 5)(x)", "kind": "layer", "inputs": {"x": {"shape": [3, 4]}}},
                     Signature((("in_features", False), ("out_features", False), ("bias", True))))
    assert "torch.nn.Linear(4, 6)(x)" in {case.torch for case in layer}
    assert "torch.nn.Linear(in_features=4, out_features=5)(x)" in {case.torch for case in layer}


def test_no_case_passes_a_parameter_whose_name_python_reserves_by_keyword() -> None:
    # torch's Tensor.uniform_(from=0, to=1): `from` cannot be written as a keyword; one such case made every
    # case of the entry unrewritable (they are fixed as one program)
    cases = generate({"torch": "x.uniform_(0.0, 1.0)", "kind": "inplace", "inputs": {"x": {"shape": [3, 4]}}},
                     Signature((("from", True), ("to", True)), defaults=(("from", 0.0), ("to", 1.0))))
    assert cases and all(ast.parse(case.torch, mode="eval") for case in cases)
    assert "x.uniform_()" in {case.torch for case in cases}  # the other forms are still made


def test_fixed_inputs_give_no_seed_cases_and_random_ones_give_enough() -> None:
    fixed = generate({"torch": "torch.abs(m)", "inputs": {"m": {"value": [[1.0, -2.0]], "dtype": "float32"}}}, None)
    assert not any(tag.startswith("seed=") for tag in _tags(fixed))
    random = generate({"torch": "torch.abs(x)", "inputs": {"x": {"shape": [2]}}}, None)
    assert len(random) >= 24 and sum(1 for c in random if c.tags[0].startswith("seed=")) >= 1
    assert len({(c.torch, json.dumps(c.inputs, sort_keys=True), c.seed, c.grad) for c in random}) == len(random)


def test_writes_form_names_functions_by_path_and_methods_by_name() -> None:
    assert writes_form("mindspore.nn.Conv2d(3, 8, 3, has_bias=True)(x)", "mindspore.nn.Conv2d")
    assert not writes_form("mindspore.mint.nn.Conv2d(3, 8, 3)(x)", "mindspore.nn.Conv2d")
    assert writes_form("x.cumsum(1)", "mindspore.Tensor.cumsum")
    assert not writes_form("x.cumsum_(1)", "mindspore.Tensor.cumsum")
    assert writes_form("net.set_train(False)", "mindspore.nn.Cell.set_train")


def test_an_entrys_own_rewrite_is_measured_for_the_form_the_fix_chooses_on_the_device_the_cases_run_on() -> None:
    table = load_table()
    # diag's composition (diag_embed or diagonal by the input's rank) stands for ops.diag, the CPU's choice
    assert rewrites_for(table, "torch.diag", "mindspore.ops.diag", "2.10", "cpu")
    assert not rewrites_for(table, "torch.diag", "mindspore.mint.diag", "2.10", "cpu")  # no CPU kernel: not chosen
    assert not rewrites_for(table, "torch.sin", "mindspore.mint.sin", "2.10", "cpu")  # no rewrite: its name is written
    rewriter = Rewriter()
    written, why = rewriter.rewrite(["torch.diag(v)"], ["v"], "2.10", "cpu", "mindspore.ops.diag", "torch.diag",
                                    runs_on="cpu")["torch.diag(v)"]
    assert written is not None and "diag_embed(v, 0)" in written and "diagonal(v, 0)" in written and why == ""
    # rewritten for another device than the cases run on, or re-measuring a kernel: the form's name is needed
    for runs_on, measure in (("gpu", False), ("cpu", True)):
        written, why = rewriter.rewrite(["torch.diag(v)"], ["v"], "2.10", "cpu", "mindspore.ops.diag", "torch.diag",
                                        measure, runs_on)["torch.diag(v)"]
        assert written is None and why.startswith("the fix writes another form")


def test_numpy_2_is_refused_with_a_clear_reason() -> None:
    check_numpy("1.26.4")
    with pytest.raises(RuntimeError, match=r"NumPy 2\.0\.1 is installed, but MindSpore 2\.10 needs NumPy 1\.x"):
        check_numpy("2.0.1")


def _form(form: str, status: str, devices: tuple[str, ...], **counts: int) -> FormRecord:
    return FormRecord(form=form, status=status, devices=devices, version="2.10", counts=counts,
                      max_abs_err=0.0, max_rel_err=0.0, reason="" if status == "passed" else "bad",
                      runs=status != "skipped")


def test_record_reader_round_trip_labels_and_errors(tmp_path: Path) -> None:
    conv = EntryRecord("passed", "", (_form("mindspore.nn.Conv2d", "passed", ("cpu", "gpu"), cases=26, agreed=26),
                                      _form("mindspore.mint.nn.Conv2d", "skipped", ("ascend",))))
    bad = EntryRecord("failed", "bad", (_form("mindspore.Tensor.any", "failed", ("cpu", "gpu", "ascend"),
                                              cases=24, agreed=20, failed=4),))
    record = Record("2.13.0", "2.10.0", ("cpu",), "2026-01-01",
                    {"torch.nn.Conv2d": {"cpu": conv}, "torch.Tensor.any": {"cpu": bad},
                     "torch.x": {"cpu": EntryRecord("skipped", "no example")}})
    path = tmp_path / "verification.json"
    write_record(record, path, "test")
    doc = json.loads(path.read_text())
    assert doc["summary"] == {"cpu": {"passed": 1, "differs": 0, "failed": 1, "error": 0, "skipped": 1, "cases": 50}}
    assert sum(1 for line in path.read_text().splitlines() if line.startswith('  "torch.')) == 3  # one line each
    again = load_record(path)
    assert again is not None
    assert again.label("torch.nn.Conv2d", "cpu") == \
        "verified on MindSpore 2.10.0, CPU: mindspore.nn.Conv2d as the fix writes it, 26 of 26 cases agree"
    # a device verify did not run on: which form is written there, and that it was not run there
    assert again.label("torch.nn.Conv2d", "ascend") == \
        "not verified on Ascend: mindspore.mint.nn.Conv2d, the form written for Ascend, ran on CPU only"
    assert again.label("torch.nn.Conv2d", "gpu").startswith("not verified on GPU: mindspore.nn.Conv2d")
    assert again.status("torch.nn.Conv2d", "gpu") == "none" and again.status("torch.nn.Conv2d", "cpu") == "passed"
    assert again.label("torch.Tensor.any", "cpu").startswith(
        "verification FAILED on MindSpore 2.10.0, CPU: mindspore.Tensor.any as the fix writes it, 4 of 24 cases disagree")
    assert again.label("torch.x", "cpu") == "not verified on CPU (no example)"
    assert again.label("torch.absent", "cpu") is None
    # a partial run on another device keeps the CPU part; a full run on CPU replaces it
    gpu = merged(again, "2.13.0", "2.10.0", "gpu", {"torch.nn.Conv2d": conv}, False, "2026-01-02")
    assert gpu.devices == ("cpu", "gpu") and set(gpu.entries["torch.nn.Conv2d"]) == {"cpu", "gpu"}
    full = merged(gpu, "2.13.0", "2.10.0", "cpu", {"torch.x": EntryRecord("skipped", "no example")}, True, "d")
    assert "cpu" not in full.entries["torch.nn.Conv2d"] and "gpu" in full.entries["torch.nn.Conv2d"]
    assert merged(gpu, "2.14.0", "2.10.0", "cpu", {}, False, "d").entries == {}  # other versions: not kept
    path.write_text('{"torch_version": "1"}')
    with pytest.raises(RecordError, match="verification.json: missing key 'mindspore_version'"):
        read_record(path)
    path.write_text("{not json")
    with pytest.raises(RecordError, match=r"verification.json:1: invalid JSON"):
        read_record(path)
    assert load_record(tmp_path / "absent.json") is None


def test_a_partial_run_keeps_a_missing_kernel_the_fix_no_longer_writes_the_form_for() -> None:
    """A form measured to have no CPU kernel, which a later run does not run (the fix now writes another text
    for it: a composed form), keeps that measurement; a form the later run does run takes the new result."""
    no_kernel = replace(_form("mindspore.mint.scatter_add", "skipped", ("ascend",)), runs=False,
                        reason="MindSpore 2.10.0 has no CPU kernel for ScatterAddExt")
    before = EntryRecord("skipped", "no case", (_form("mindspore.ops.tensor_scatter_elements", "skipped", ("cpu",)),
                                                no_kernel))
    ran = replace(_form("mindspore.ops.tensor_scatter_elements", "passed", ("cpu",), cases=18, agreed=18), runs=True)
    not_run = replace(_form("mindspore.mint.scatter_add", "skipped", ("ascend",)), runs=None,
                      reason="the fix writes another form")
    after = EntryRecord("passed", "", (ran, not_run))
    old = Record("2.13.0", "2.10.0", ("cpu",), "d", {"torch.scatter_add": {"cpu": before}})
    kept = merged(old, "2.13.0", "2.10.0", "cpu", {"torch.scatter_add": after}, False, "e")
    assert kept.entries["torch.scatter_add"]["cpu"].forms == (ran, no_kernel)
    # other library versions: nothing is kept
    fresh = merged(old, "2.13.0", "2.11.0", "cpu", {"torch.scatter_add": after}, False, "e")
    assert fresh.entries["torch.scatter_add"]["cpu"] == after


def test_record_reader_imports_neither_torch_nor_mindspore() -> None:
    code = ("import sys; from torch2ms.verify import load_record; import torch2ms.cli; load_record(); "
            "print('torch' in sys.modules or 'mindspore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_committed_record_covers_the_table_and_the_tables_agree_with_it() -> None:
    record = read_record(default_path())
    assert "cpu" in record.devices and record.torch_version.startswith("2.") and record.mindspore_version.startswith("2.")
    with_examples = [e.api for e in select(TABLE) if e.examples]
    covered = [api for api in with_examples if record.get(api, "cpu") is not None]
    assert len(covered) >= 0.9 * len(with_examples)
    assert sum(e.cases for runs in record.entries.values() for e in runs.values()) >= 20_000
    for api, runs in record.entries.items():
        for device, entry in runs.items():
            if entry.status in ("failed", "error"):
                assert entry.reason, f"{api}: a failure must say why"
            # `verified` in the tables (what the scanner's choice reads) is exactly what passed here
            table_entry = TABLE.entries.get(api)
            if table_entry is None:
                continue
            for form in entry.forms:
                target = next((t for t in table_entry.targets if t.api == form.form), None)
                if target is not None:
                    assert (device in target.verified) == (form.status == "passed"), (api, form.form, device)


def test_locate_turns_a_call_into_a_job(tmp_path: Path) -> None:
    src = tmp_path / "model.py"
    src.write_text("import torch\nimport torch.nn.functional as F\n\n"
                   "def f(x, w):\n    return F.relu(x) + torch.amax(x, dim=1)\n", encoding="utf-8")
    found = locate(str(src), 5, TABLE, {"x": parse_shape("x=2,5")[1]})
    assert found.spec["inputs"] == {"x": {"shape": [2, 5], "dtype": "float32"}}
    assert "mindspore" in found.spec["mindspore"] and "torch" not in found.spec["mindspore"]
    with pytest.raises(LocateError, match=r"model.py:3: no torch call"):
        locate(str(src), 3, TABLE)
    with pytest.raises(LocateError, match="absent.py: no such file"):
        locate(str(tmp_path / "absent.py"), 1, TABLE)
    assert free_names("torch.cat([a, b], dim=k)", {"torch"}) == ["a", "b", "k"]
    with pytest.raises(ValueError, match="NAME=DIM"):
        parse_shape("2,3")


@pytest.mark.parametrize("breaks", ["\x0c\x0c", "\x1c\x1d", "\x85\u2028", "\u2029\x0b"])
def test_locate_counts_lines_as_python_and_runs_only_the_call(tmp_path: Path, breaks: str) -> None:
    # str.splitlines() breaks at these characters, Python's tokenizer does not: a line map built
    # with it put the span of the call on line 5 onto line 3, whose columns 4..16 hold print("pwn").
    src = tmp_path / "model.py"
    src.write_text(f'import torch\n# {breaks}\nSS=\'print("pwn")\'\nx = torch.ones(2)\ny = torch.abs(x)\n',
                   encoding="utf-8")
    found = locate(str(src), 5, TABLE, {"x": parse_shape("x=2")[1]})
    assert found.spec["torch"] == "(torch.abs(x))"
    assert found.spec["mindspore"] == "(mindspore.mint.abs(x))"
    assert "pwn" not in json.dumps(found.spec)


def test_locate_refuses_a_span_that_is_not_exactly_one_call() -> None:
    from torch2ms.model import Span
    from torch2ms.source import SourceText
    from torch2ms.verify.locate import _call_at, _one_call

    text = "import torch\ny = torch.abs(x) + print('pwn')\n"
    tree = __import__("ast").parse(text)
    src = SourceText(text)
    assert _call_at(tree, src, Span(2, 4, 2, 16)) is not None
    assert _call_at(tree, src, Span(2, 4, 2, 30)) is None  # a span over more than the call
    assert _one_call("torch.abs(x) + print('pwn')") is None
    assert _one_call("torch.abs(x); print('pwn')") is None
    assert _one_call("torch.abs(x)") is not None


# ------------------------------------------------------------------ real torch and MindSpore
def test_examples_run_in_real_torch_and_mindspore(pool: Pool) -> None:
    specs = [
        _spec("torch.sin(x)", "mindspore.mint.sin(x)"),
        _spec("torch.sin(x)", "mindspore.mint.cos(x)"),  # a wrong mapping
        _spec("torch.max(x, 1)", "mindspore.mint.max(x, 1)"),  # a named tuple against a tuple
        _spec("torch.nn.Linear(4, 5)(x)", "mindspore.mint.nn.Linear(4, 5)(x)", kind="layer"),
        _spec("torch.nn.BatchNorm1d(4)(x)", "mindspore.nn.BatchNorm1d(4)(x)", kind="layer"),
        _spec("x.add_(y)", "x.add_(y)", kind="inplace"),  # MindSpore 2.10 on CPU leaves x as it was
        _spec("x.eq_(y)", "x.eq(y)", kind="inplace"),  # torch keeps float32, MindSpore gives bool
        _spec("torch.argmin(x)", "mindspore.ops.argmin(x)"),
        _spec("torch.argmin(x)", "mindspore.ops.argmin(x)", dtypes={"int64": "int32"}),
        _spec("torch.rand(50, 20)", "mindspore.ops.rand(50, 20)", random=True),
        _spec("torch.rand(50, 20)", "mindspore.ops.ones((50, 20), mindspore.float32)", random=True),
        _spec("torch.nn.functional.mse_loss(x, y)", "mindspore.ops.mse_loss(x, y)", grad=True),
        _spec("torch.optim.SGD([torch.nn.Parameter(x)], lr=0.1, momentum=0.9)",
              "mindspore.experimental.optim.SGD([mindspore.Parameter(x)], lr=0.1, momentum=0.9)", kind="optimizer"),
        _spec("torch.optim.SGD([torch.nn.Parameter(x)], lr=0.1)",
              "mindspore.experimental.optim.SGD([mindspore.Parameter(x)], lr=0.2)", kind="optimizer"),
        _spec("torch.optim.lr_scheduler.StepLR(torch.optim.SGD([torch.nn.Parameter(x)], lr=0.1), 2)",
              "mindspore.experimental.optim.lr_scheduler.StepLR("
              "mindspore.experimental.optim.SGD([mindspore.Parameter(x)], lr=0.1), 2)", kind="scheduler"),
        _spec("torch.sqrt(x)", "mindspore.mint.sqrt(x)"),  # NaN where x < 0, on both sides
        _spec("torch.nosuchop(x)", "mindspore.mint.sin(x)"),
        _spec("__import__('numpy').ones(10**11)", "1"),  # beyond the worker's memory limit
        _spec("torch.abs(x)", "mindspore.ops.stop_gradient(mindspore.mint.abs(x))", grad=True),  # same values
        # MindSpore's copy_ returns a new tensor object over the receiver's memory: it is the receiver
        _spec("x.copy_(y)", "x.copy_(y)", kind="inplace"),
        _spec("x.sub(y)", "x.sub(y)", inputs={"x": {"shape": [3, 4], "layout": "noncontiguous"},
                                              "y": {"shape": [3, 4]}}),  # torch gets a strided view
        _spec("torch.roll(x, 1)", "mindspore.mint.roll(x, 1)"),  # no CPU kernel in MindSpore 2.10
        _spec("x.copy_(y)", "x.copy_(y).add(0)", kind="inplace"),  # the values arrive, but in a new tensor
        # MindSpore's nn.Dropout takes keep_prob first: Dropout(0.1) keeps a tenth where torch drops a tenth
        _spec("torch.nn.Dropout(0.1)(x)", "mindspore.nn.Dropout(0.1)(x)", kind="layer", random=True),
        _spec("torch.nn.Dropout(0.1)(x)", "mindspore.nn.Dropout(p=0.1)(x)", kind="layer", random=True),
        _spec("torch.nn.Dropout()(x)", "mindspore.nn.Dropout()(x)", kind="layer", random=True,
              inputs={"x": {"shape": [], "dtype": "float32", "low": 0.1, "high": 0.9}}),  # one element a draw
    ]
    res = pool.run(specs)
    assert res[0]["status"] == "passed" and res[0]["max_abs_err"] < 1e-6
    assert res[1]["status"] == "failed" and "values differ" in res[1]["reason"]
    assert res[2]["status"] == "passed"
    assert res[3]["status"] == "passed" and res[3]["max_abs_err"] < 1e-5  # torch's weights copied
    assert res[4]["status"] == "passed"  # running_mean/var and weight/bias copied by name
    assert res[5]["status"] == "failed" and "the receiver after the in-place call" in res[5]["reason"]
    assert res[6]["status"] == "failed" and "dtype differs: torch float32, MindSpore bool" in res[6]["reason"]
    assert res[7]["status"] == "failed" and "int64, MindSpore int32" in res[7]["reason"]
    assert res[8]["status"] == "passed"
    assert res[9]["status"] == "passed" and res[9]["compare"] == "statistics"
    assert res[10]["status"] == "failed" and "differ in their mean over 20 draws" in res[10]["reason"]
    assert res[11]["status"] == "passed" and any("gradient wrt x" in n for n in res[11]["notes"])
    assert res[12]["status"] == "passed" and any("optimizer steps" in n for n in res[12]["notes"])
    assert res[13]["status"] == "failed" and "after step 1" in res[13]["reason"]
    assert res[14]["status"] == "passed"
    assert res[15]["status"] == "passed"
    assert res[16]["status"] == "error" and "torch code raised AttributeError" in res[16]["reason"]
    assert res[17]["status"] == "failed" and "memory" in res[17]["reason"]
    assert res[18]["status"] == "failed" and "gradient wrt x" in res[18]["reason"]
    assert res[19]["status"] == "passed", res[19]
    assert res[20]["status"] == "passed", res[20]
    assert res[21]["status"] == "skipped" and "no CPU kernel for Roll" in res[21]["reason"]
    assert res[22]["status"] == "failed" and res[22]["reason"] == "torch returns its receiver, MindSpore a new tensor"
    assert res[23]["status"] == "failed" and "over 20 draws" in res[23]["reason"], res[23]
    assert res[24]["status"] == "passed" and any("over 20 draws" in n for n in res[24]["notes"]), res[24]
    assert res[25]["status"] == "passed", res[25]


def _generated(api: str, device: str = "cpu") -> dict:
    entry = TABLE.entries[api]
    return next(s for s in example_specs(entry) if device in s["for"])


def test_generated_cases_run_as_the_fix_writes_them(pool: Pool) -> None:
    """Jobs of the tables' own entries: the fix engine writes the MindSpore side of every case."""
    abs_spec, add_spec, conv_spec = _generated("torch.abs"), _generated("torch.Tensor.add_"), _generated("torch.nn.Conv2d")
    ascend_conv = _generated("torch.nn.Conv2d", "ascend")
    uncovered = dict(_generated("torch.Tensor.add_"), covers=[])  # as if the form had no fact
    res = pool.run([abs_spec, add_spec, conv_spec, ascend_conv, uncovered])
    done = res[0]
    assert done["status"] == "passed" and done["cases"] >= 20 and done["failed"] == 0, done
    assert done["agreed"] == done["cases"] and done["runs"] is True
    assert done["written"] and all(abs_spec["form"] in w for w in done["written"])
    # MindSpore 2.10's CPU Tensor.add_ leaves its receiver as it was: the fix writes x.copy_(x.add(y)),
    # which agrees except on a non-contiguous receiver (copy_ leaves that unchanged), as the form's fact
    # (covers: noncontiguous, from the record) states
    inplace = res[1]
    assert inplace["status"] == "passed" and inplace["agreed"] >= 20 and inplace["stated"] >= 1, inplace
    assert "x.copy_(x.add(y))" in inplace["written"] and all(w.startswith("x.copy_(x.add(") for w in inplace["written"])
    # the CPU form of Conv2d runs on the CPU; the Ascend form (mint) has no CPU kernel and stops at once
    assert res[2]["cases"] >= 1 and res[2]["runs"] is True, res[2]
    assert res[3]["status"] == "skipped" and res[3]["runs"] is False and "no CPU kernel" in res[3]["reason"]
    assert res[3]["cases"] == 0
    # cases whose tags a fact covers differ "as stated"; without the fact they fail
    assert res[4]["stated"] == 0 and res[4]["failed"] == inplace["stated"] and res[4]["status"] == "failed"
    assert "the receiver after the in-place call" in res[4]["failures"][0]["reason"]


def test_an_entrys_own_rewrite_runs_where_its_target_has_no_kernel(pool: Pool) -> None:
    """layer_norm: no CPU kernel for mint's LayerNormExt; the tables' composed form (mean, variance) runs there."""
    entry = TABLE.entries["torch.nn.functional.layer_norm"]
    specs = [s for s in example_specs(entry) if s["form"] == "rewrite:compose"]
    assert specs
    done = pool.run(specs[:1])[0]
    assert done["status"] == "passed" and done["runs"] is True and done["agreed"] >= 15, done
    assert all("mindspore.ops.sqrt" in w and "layer_norm" not in w for w in done["written"])
    # index_add: the fix writes its composition (Tensor.index_add, the index cast) even where it chooses mint's
    # function, so the cases measure that rewrite and say nothing of mint.index_add's kernel
    index_add = next(s for s in example_specs(TABLE.entries["torch.index_add"]) if s["form"] == "mindspore.mint.index_add")
    done = pool.run([index_add])[0]
    assert done["status"] == "passed" and done["agreed"] >= 10 and done["runs"] is None, done
    assert all("mint" not in w and ".index_add(" in w for w in done["written"])


def test_a_case_that_crashes_the_worker_is_one_disagreeing_case(pool: Pool) -> None:
    """MindSpore 2.10's geqrf kills the process (SIGFPE) on an empty input: the pool restarts the
    worker and resubmits the job without that case, which counts as one disagreement."""
    spec = _generated("torch.geqrf")
    restarts = pool.restarts
    (result,) = pool.run([spec])
    assert pool.restarts == restarts + 1
    assert result["cases"] >= 15 and result["agreed"] == result["cases"] - 1, result
    assert "fatal error: the worker crashed (killed by signal SIGFPE" in result["differences"]["empty"]
    assert result["failed"] + result["stated"] == 1


def test_declared_dtype_difference_passes_and_undeclared_fails_for_real(pool: Pool) -> None:
    stated = _spec("torch.argmin(x)", "mindspore.ops.argmin(x)",
                   dtypes=declared_dtypes(_argmin_target(("int64", "int32")), ARGMIN_EXAMPLE))
    unstated = _spec("torch.argmin(x)", "mindspore.ops.argmin(x)",
                     dtypes=declared_dtypes(_argmin_target(None), ARGMIN_EXAMPLE))
    res = pool.run([stated, unstated])
    assert res[0]["status"] == "passed", res[0]
    assert res[1]["status"] == "failed" and "dtype differs: torch int64, MindSpore int32" in res[1]["reason"]


def test_crash_and_hang_are_failed_results_and_the_run_completes(pool: Pool) -> None:
    ignore_alarm = "__import__('signal').signal(__import__('signal').SIGALRM, __import__('signal').SIG_IGN)"
    specs = [
        _spec("__import__('os')._exit(3)", "1"),
        _spec("torch.sin(x)", "mindspore.mint.sin(x)"),
        _spec("__import__('time').sleep(60)", "1", timeout=1),  # stopped by the worker's own alarm
        _spec(f"({ignore_alarm}, __import__('time').sleep(60))", "1", timeout=1),  # killed by the pool
        _spec("torch.cos(x)", "mindspore.mint.cos(x)"),
    ]
    restarts = pool.restarts
    res = pool.run(specs)
    assert res[0]["status"] == "failed" and "crashed" in res[0]["reason"] and "exit code 3" in res[0]["reason"]
    assert res[1]["status"] == "passed"
    assert res[2]["status"] == "failed" and "timed out after 1 s" in res[2]["reason"]
    assert res[3]["status"] == "failed" and "the worker was killed" in res[3]["reason"]
    assert res[4]["status"] == "passed"
    assert pool.restarts == restarts + 2


def test_sample_of_the_tables_agrees_with_the_record(pool: Pool) -> None:
    """CI's sample: about 50 entries, deterministic, each on its generated cases as the fix writes them;
    an entry the committed record says passed on the CPU still passes, with the same form."""
    entries = select(TABLE, sample_size=SAMPLE_SIZE)
    verdicts, results = command.run_entries(entries, pool)
    assert len(verdicts) == SAMPLE_SIZE
    assert not [r for r in results if "verify backend error" in str(r.get("reason"))]
    assert sum(int(r.get("cases") or 0) for r in results) >= 20 * sum(1 for e in entries if e.examples) // 2
    record = load_record()
    assert record is not None
    regressed = {api: v.reason for api, v in verdicts.items()
                 if v.status != "passed" and record.status(api, "cpu") == "passed"}
    assert not regressed, regressed
    for api, verdict in verdicts.items():
        old, new = record.get(api, "cpu"), verdict.form_for("cpu")
        if old is not None and old.form_for("cpu") is not None and new is not None:
            assert old.form_for("cpu").form == new.form, api  # type: ignore[union-attr]


def test_cli_verifies_a_file_location(pool: Pool, tmp_path: Path) -> None:
    src = tmp_path / "net.py"
    src.write_text("import torch\nimport torch.nn as nn\n\n"
                   "layer = nn.Linear(4, 5)\ny = torch.sin(z)\n", encoding="utf-8")
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    out = io.StringIO()
    code = command.run(parser.parse_args([f"{src}:5", f"{src}:4", "--shape", "z=3,7"]), out, pool)
    text = out.getvalue()
    assert code == 0, text
    assert "torch.sin" in text and "z=[3, 7] float32" in text and text.count("PASSED") == 2
    assert "copying torch's weights" in text
    out = io.StringIO()
    assert command.run(parser.parse_args([f"{src}:2"]), out, pool) == 2


def test_cli_usage_errors() -> None:
    from torch2ms.cli import main

    assert main(["verify"]) == 2
    assert main(["verify", "torch.no_such_api"]) == 2
    assert main(["verify", "--sample", "0"]) == 2


def test_defaults_cases_leave_out_each_trailing_default() -> None:
    # torch.std(x, 1, True) -> ops.std(x, 1, True) agreed while torch.std(x) relied on ddof's other
    # default: every shorter call that leans on the defaults is a case of its own
    sig = Signature((("input", False), ("dim", True), ("unbiased", True), ("keepdim", True)))
    cases = generate({"torch": "torch.std(x, 1, True)", "inputs": {"x": {"shape": [3, 4], "dtype": "float32"}}}, sig)
    assert {"torch.std(x, 1)", "torch.std(x)"} <= {c.torch for c in cases if "defaults" in c.tags}
    keywords = generate({"torch": "torch.std(x, 1, keepdim=True)", "inputs": {"x": {"shape": [3, 4]}}}, sig)
    assert {"torch.std(x, 1)", "torch.std(x)"} <= {c.torch for c in keywords if "defaults" in c.tags}
    required = generate({"torch": "torch.dot(v, w)", "inputs": {"v": {"shape": [3]}, "w": {"shape": [3]}}},
                        Signature((("input", False), ("tensor", False))))
    assert not [c for c in required if "defaults" in c.tags]  # nothing torch requires is left out


def test_write_record_does_not_swallow_a_target() -> None:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--write-record", "torch.sin", "torch.cos"])
    command.record_target(args)
    assert args.targets == ["torch.sin", "torch.cos"] and args.write_record == ""  # the default record
    args = parser.parse_args(["--write-record", "out.json", "torch.sin"])
    command.record_target(args)
    assert args.targets == ["torch.sin"] and args.write_record == "out.json"


def test_optional_parameters_the_example_leaves_out_are_passed_at_other_values() -> None:
    # torch.nn.functional.conv2d(x, w) never passed padding, so ops.conv2d's pad_mode went unseen
    sig = Signature((("input", False), ("weight", False), ("bias", True), ("stride", True), ("padding", True),
                     ("groups", True), ("out", True)),
                    defaults=(("stride", 1), ("padding", 0), ("groups", 1), ("out", 0)))
    spec = {"torch": "torch.nn.functional.conv2d(x, w, stride=2)",
            "inputs": {"x": {"shape": [1, 3, 8, 8]}, "w": {"shape": [4, 3, 3, 3]}}}
    optional = {c.tags[0]: c.torch for c in generate(spec, sig) if c.tags[0].startswith("opt=")}
    assert optional == {"opt=padding": "torch.nn.functional.conv2d(x, w, stride=2, padding=1)",
                        "opt=groups": "torch.nn.functional.conv2d(x, w, stride=2, groups=2)"}
    # a bool is flipped, a float doubled; a method's receiver and the parameters passed by position are left
    method = Signature((("dim", True), ("keepdim", True), ("scale", True)),
                       defaults=(("keepdim", False), ("scale", 0.25)))
    cases = generate({"torch": "x.max(1)", "kind": "method", "inputs": {"x": {"shape": [3, 4]}}}, method)
    assert {c.torch for c in cases if c.tags[0].startswith("opt=")} == {"x.max(1, scale=0.5)"}
    assert "x.max(1, keepdim=True)" in {c.torch for c in cases}  # the same call as the keepdim case: run once


def test_where_the_fix_stops_the_cases_run_as_migrate_writes_them(pool: Pool) -> None:
    """Forms only `migrate` writes (its structural passes: nn.init as an initializer copied into the tensor; the
    support module's functions: bicubic interpolation, which MindSpore's CPU lacks) are measured as migrate
    writes them, with the support module that migrate writes into a port importable in the worker."""
    rewriter = Rewriter()
    bicubic = "torch.nn.functional.interpolate(x, scale_factor=2, mode='bicubic')"
    written, why = rewriter.rewrite([bicubic], ["x"], "2.10", "cpu", None, "torch.nn.functional.interpolate",
                                    runs_on="cpu")[bicubic]
    assert why == "migrate" and written == "t2ms_support.interpolate(x, scale_factor=2, mode='bicubic')"
    assert "t2ms_support" not in sys.modules  # the module is built in a worker only
    zeros = _generated("torch.nn.init.zeros_")
    interpolate = dict(_generated("torch.nn.functional.interpolate"), torch=bicubic,
                       inputs={"x": {"shape": [1, 2, 3, 3], "dtype": "float32"}})
    res = pool.run([zeros, interpolate])
    for done in res:
        assert done["status"] == "passed" and done["failed"] == 0 and done["agreed"] >= 3, done
        assert any("as `migrate` writes them" in note for note in done["notes"]), done["notes"]
    assert res[0]["written"] and all(w.startswith("x.copy_(") for w in res[0]["written"])
    assert res[0]["stated"] >= 1  # the empty tensor MindSpore's initializer refuses, as the entry's fact states
    bicubic_written = [w for w in res[1]["written"] if "bicubic" in w]  # other cases leave the mode to its default
    assert bicubic_written and all(w.startswith("t2ms_support.interpolate(") for w in bicubic_written)
