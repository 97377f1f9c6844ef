"""The verify backend, run for real: torch 2.13 and MindSpore 2.10 in worker processes.

One warm pool of two workers serves most tests (starting a worker imports torch and
MindSpore, seconds each); the crash and hang tests replace workers on purpose.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torch2ms.mappings import load_table
from torch2ms.verify import command
from torch2ms.model import Category, Example, MappingEntry, ParamFact, Target
from torch2ms.verify.cases import entry_verdict, example_specs, example_target, sample, select
from torch2ms.verify.compare import Arr, compare
from torch2ms.verify.locate import LocateError, free_names, locate, parse_shape
from torch2ms.verify.pool import Pool
from torch2ms.verify.record import (
    EntryRecord, Record, RecordError, default_path, load_record, read_record, write_record,
)

TABLE = load_table()
SAMPLE_SIZE = 50
SAMPLE_MIN_PASS_RATE = 0.90  # the full run's target (98%) is checked by `torch2ms verify --all`


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


def test_sample_is_deterministic_and_covers_every_kind() -> None:
    entries = select(TABLE)
    first, second = sample(entries, SAMPLE_SIZE), sample(list(reversed(entries)), SAMPLE_SIZE)
    assert [e.api for e in first] == [e.api for e in second]
    assert len(first) == SAMPLE_SIZE and all(e.examples for e in first)
    kinds = {str(e.examples[0].extra.get("kind") or "function") for e in first}
    assert {"layer", "optimizer", "scheduler", "inplace", "method", "function"} <= kinds


def test_every_example_becomes_a_job_spec() -> None:
    entry = TABLE.entries["torch.abs"]
    specs = example_specs(entry)
    assert specs[0]["torch"] == entry.examples[0].torch and specs[0]["id"] == "torch.abs#0"
    verdict = entry_verdict(entry, [{"status": "failed", "reason": "boom", "max_abs_err": 1.0}])
    assert verdict.status == "failed" and verdict.max_abs_err == 1.0


def _argmin_entry(dtype_note: str | None) -> MappingEntry:
    """torch.argmin whose CPU example runs mindspore.ops.argmin (int32 where torch gives int64)."""
    facts = [ParamFact(kind="renamed", torch="dim", ms="axis")]
    if dtype_note is not None:
        facts.append(ParamFact(kind="semantics_differ", note=dtype_note))
    return MappingEntry(
        api="torch.argmin", category=Category.EQUIVALENT,
        targets=(Target(api="mindspore.mint.argmin", since=(2, 3)),
                 Target(api="mindspore.ops.argmin", until=(2, 3), category=Category.DIFF_PARAMS, params=tuple(facts))),
        examples=(Example(torch="torch.argmin(x)", mindspore="mindspore.ops.argmin(x)",
                          inputs={"x": {"shape": [3, 4], "dtype": "float32"}}, extra={"dtypes": {"int64": "int32"}}),))


def _pad_entry() -> MappingEntry:
    """F.pad: the default target keeps torch's names, the older mindspore.ops.pad (the CPU example) renames pad."""
    return MappingEntry(
        api="torch.nn.functional.pad", category=Category.EQUIVALENT,
        targets=(Target(api="mindspore.mint.nn.functional.pad", since=(2, 3)),
                 Target(api="mindspore.ops.pad", until=(2, 3), category=Category.DIFF_PARAMS,
                        params=(ParamFact(kind="renamed", torch="pad", ms="padding"),))),
        examples=(Example(torch="torch.nn.functional.pad(x, (1, 0))", mindspore="mindspore.ops.pad(x, (1, 0))",
                          inputs={"x": {"shape": [3, 4], "dtype": "float32"}}),))


def test_a_dtype_difference_counts_only_where_the_table_states_it() -> None:
    stated = _argmin_entry("result dtype differs (torch int64, MindSpore int32)")
    assert example_target(stated, stated.examples[0]).api == "mindspore.ops.argmin"  # the target the code runs
    assert example_specs(stated)[0]["dtypes"] == {"int64": "int32"}
    # The example's `dtypes` alone declares nothing: without a fact, or with a fact naming other dtypes,
    # the difference is not passed on and the comparison still fails on it.
    assert "dtypes" not in example_specs(_argmin_entry(None))[0]
    assert "dtypes" not in example_specs(_argmin_entry("result dtype differs (torch int64, MindSpore float32)"))[0]
    assert "dtypes" not in example_specs(_argmin_entry("returns int32 indices"))[0]  # not about the dtype pair
    # A declared pair accepts exactly that pair, one way round, and the values must still agree.
    declared = {"int64": "int32"}
    i64, i32 = Arr(np.array([1, 2]), "int64"), Arr(np.array([1, 2], np.int32), "int32")
    assert compare(i64, i32, dtypes=declared).ok
    assert "values differ" in compare(i64, Arr(np.array([1, 3], np.int32), "int32"), dtypes=declared).reason
    assert "dtype differs" in compare(i64, Arr(np.array([1, 2], np.int16), "int16"), dtypes=declared).reason
    assert "dtype differs" in compare(i32, Arr(np.array([1, 2]), "int64"), dtypes=declared).reason
    assert "dtype differs" in compare([i64, i64], [i64, Arr(np.array([1.0, 2.0], np.float32), "float32")],
                                      dtypes=declared).reason


def test_call_forms_use_the_facts_of_the_target_the_example_runs() -> None:
    entry = _pad_entry()
    assert example_target(entry, entry.examples[0]).api == "mindspore.ops.pad"
    assert example_specs(entry)[0]["renames"] == {"pad": "padding"}
    mint = Example(torch="torch.nn.functional.pad(x, (1, 0))",
                   mindspore="mindspore.mint.nn.functional.pad(x, (1, 0))")
    assert "renames" not in example_specs(dataclasses.replace(entry, examples=(mint,)))[0]
    method = MappingEntry(api="torch.Tensor.eq_", category=Category.DIFF_PARAMS,
                          targets=(Target(api="mindspore.Tensor.eq"),),
                          examples=(Example(torch="x.eq_(y)", mindspore="x.eq(y)"),))
    assert example_target(method, method.examples[0]).api == "mindspore.Tensor.eq"


def test_record_reader_round_trip_and_errors(tmp_path: Path) -> None:
    record = Record("2.13.0", "2.10.0", "cpu", "2026-01-01",
                    {"torch.abs": EntryRecord("passed", 0.0, 0.0), "torch.x": EntryRecord("failed", math.inf, None, "bad")})
    path = tmp_path / "verification.json"
    write_record(record, path, "test")
    doc = json.loads(path.read_text())
    assert doc["entries"]["torch.x"]["max_abs_err"] is None  # JSON has no inf
    assert doc["summary"] == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}
    again = load_record(path)
    assert again is not None and again.label("torch.abs") == "verified on MindSpore 2.10.0, CPU"
    assert again.label("torch.x").startswith("verification FAILED")
    path.write_text('{"torch_version": "1"}')
    with pytest.raises(RecordError, match="verification.json: missing key 'mindspore_version'"):
        read_record(path)
    path.write_text("{not json")
    with pytest.raises(RecordError, match=r"verification.json:1: invalid JSON"):
        read_record(path)
    assert load_record(tmp_path / "absent.json") is None


def test_record_reader_imports_neither_torch_nor_mindspore() -> None:
    code = ("import sys; from torch2ms.verify import load_record; import torch2ms.cli; load_record(); "
            "print('torch' in sys.modules or 'mindspore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_committed_record_covers_the_table() -> None:
    record = read_record(default_path())
    assert record.device and record.torch_version.startswith("2.") and record.mindspore_version.startswith("2.")
    with_examples = [e.api for e in select(TABLE) if e.examples]
    covered = [api for api in with_examples if api in record.entries]
    assert len(covered) >= 0.9 * len(with_examples)
    for api, entry in record.entries.items():
        if entry.status in ("failed", "error"):
            assert entry.reason, f"{api}: a failure must say why"


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
        _spec("x.add_(y)", "x.add(y)", kind="inplace"),
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
        # call forms: the keyword form names torch's parameter; MindSpore calls it `padding`
        _spec("torch.nn.functional.pad(x, (1, 0))", "mindspore.ops.pad(x, (1, 0))"),
        _spec("torch.nn.functional.pad(x, (1, 0))", "mindspore.ops.pad(x, (1, 0))", renames={"pad": "padding"}),
        _spec("torch.roll(x, 1)", "mindspore.mint.roll(x, 1)"),  # no CPU kernel in MindSpore 2.10
    ]
    res = pool.run(specs)
    assert res[0]["status"] == "passed" and res[0]["max_abs_err"] < 1e-6
    assert res[1]["status"] == "failed" and "values differ" in res[1]["reason"]
    assert res[2]["status"] == "passed"
    assert res[3]["status"] == "passed" and res[3]["max_abs_err"] < 1e-5  # torch's weights copied
    assert res[4]["status"] == "passed"  # running_mean/var and weight/bias copied by name
    assert res[5]["status"] == "passed"
    assert res[6]["status"] == "failed" and "dtype differs: torch float32, MindSpore bool" in res[6]["reason"]
    assert res[7]["status"] == "failed" and "int64, MindSpore int32" in res[7]["reason"]
    assert res[8]["status"] == "passed"
    assert res[9]["status"] == "passed" and res[9]["compare"] == "statistics"
    assert res[10]["status"] == "failed" and "means" in res[10]["reason"]
    assert res[11]["status"] == "passed" and any("gradient wrt x" in n for n in res[11]["notes"])
    assert res[12]["status"] == "passed" and any("optimizer steps" in n for n in res[12]["notes"])
    assert res[13]["status"] == "failed" and "after step 1" in res[13]["reason"]
    assert res[14]["status"] == "passed"
    assert res[15]["status"] == "passed"
    assert res[16]["status"] == "error" and "torch code raised AttributeError" in res[16]["reason"]
    assert res[17]["status"] == "failed" and "memory" in res[17]["reason"]
    assert res[18]["status"] == "failed" and "gradient wrt x" in res[18]["reason"]
    assert res[19]["status"] == "failed" and "keyword form" in res[19]["reason"] and "'pad'" in res[19]["reason"]
    assert res[20]["status"] == "passed" and any("keyword form passed" in n for n in res[20]["notes"])
    assert res[21]["status"] == "skipped" and "no CPU kernel for Roll" in res[21]["reason"]


def test_declared_dtype_difference_passes_and_undeclared_fails_for_real(pool: Pool) -> None:
    stated = example_specs(_argmin_entry("result dtype differs (torch int64, MindSpore int32)"))
    unstated = example_specs(_argmin_entry(None))
    pad = example_specs(_pad_entry())
    res = pool.run(stated + unstated + pad)
    assert res[0]["status"] == "passed", res[0]
    assert res[1]["status"] == "failed" and "dtype differs: torch int64, MindSpore int32" in res[1]["reason"]
    assert res[2]["status"] == "passed", res[2]  # the keyword form calls mindspore.ops.pad(x, padding=(1, 0))
    assert any("keyword form passed" in n for n in res[2]["notes"])


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


def test_sample_of_the_tables_passes(pool: Pool) -> None:
    """CI's sample: about 50 entries, deterministic; no regressions against the committed record."""
    entries = select(TABLE, sample_size=SAMPLE_SIZE)
    verdicts, results = command.run_entries(entries, pool)
    assert len(verdicts) == SAMPLE_SIZE
    assert not [r for r in results if "verify backend error" in str(r.get("reason"))]
    ran = [v for v in verdicts.values() if v.status != "skipped"]
    passed = [api for api, v in verdicts.items() if v.status == "passed"]
    assert len(passed) >= SAMPLE_MIN_PASS_RATE * len(ran), {a: v.reason for a, v in verdicts.items()}
    record = load_record()
    if record is not None:
        regressed = {api: v.reason for api, v in verdicts.items()
                     if v.status != "passed" and (old := record.get(api)) is not None and old.status == "passed"}
        assert not regressed, regressed


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
