"""`torch2ms trace` (runs a script with torch calls recorded; needs torch) and `torch2ms scan --trace`.

The end-to-end test runs a small torch-only script on CPU under the tracer, then joins the trace to
a scan of the same file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from torch2ms import trace
from torch2ms.cli import main
from torch2ms.engine import scan_source

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.register_buffer("scale", torch.ones(3))

        def forward(self, x):
            y = self.fc(x)
            y = F.gelu(y) * self.scale
            picked = getattr(torch, "tanh")(y)
            k = x.nonzero()
            return picked.sum() + k.float().sum()


    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for i in range(3):
        x = torch.ones(2, 4)
        x[0, : i + 1] = 0
        loss = net(x)
        loss.backward()
        opt.step()
        opt.zero_grad()
""")


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(SCRIPT.splitlines(), 1) if marker in text)


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "torch2ms", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    folder = tmp_path_factory.mktemp("traced")
    (folder / "train.py").write_text(SCRIPT, encoding="utf-8")
    done = _run("trace", "-o", "trace.json", "--", "python", "train.py", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, json.loads((folder / "trace.json").read_text(encoding="utf-8"))


def _calls(doc: dict[str, object], line: int) -> dict[str, dict[str, object]]:
    calls = doc["calls"]
    assert isinstance(calls, list)
    return {c["api"]: c for c in calls if c["line"] == line}


@pytest.mark.needs_torch
@pytest.mark.e2e
def test_trace_records_the_calls_user_code_makes(traced: tuple[Path, dict[str, object]]) -> None:
    folder, doc = traced
    assert doc["format"] == trace.FORMAT and doc["exit_status"] == 0
    assert _calls(doc, _line("self.fc = nn.Linear"))["torch.nn.Linear"]["kind"] == "layer"
    assert _calls(doc, _line("register_buffer"))["torch.nn.Module.register_buffer"]["kind"] == "object_method"
    layer_call = _calls(doc, _line("y = self.fc(x)"))
    assert layer_call["torch.nn.Linear"]["kind"] == "layer_call"
    assert layer_call["torch.nn.Linear"]["count"] == 3
    assert layer_call["torch.nn.Linear"]["shapes"] == [{"in": [[2, 4]], "out": [[2, 3]]}]
    assert "torch.nn.functional.linear" not in layer_call  # inside nn.Linear.forward: torch's own call
    gelu = _calls(doc, _line("F.gelu(y)"))
    assert gelu["torch.nn.functional.gelu"]["kind"] == "functional"
    assert gelu["torch.Tensor.mul"]["kind"] == "operator"  # `*` is not a method call of the user
    assert _calls(doc, _line("getattr(torch"))["torch.tanh"]["kind"] == "function"
    nonzero = _calls(doc, _line("x.nonzero()"))["torch.Tensor.nonzero"]
    assert [s["out"] for s in nonzero["shapes"]] == [[[7, 2]], [[6, 2]], [[5, 2]]]  # varies with the values
    assert _calls(doc, _line("opt.step()"))["torch.optim.Optimizer.step"]["aliases"] == ["torch.optim.SGD.step"]
    assert _calls(doc, _line("torch.optim.SGD("))["torch.optim.SGD"]["kind"] == "class"
    assert all(Path(c["file"]).name == "train.py" for c in doc["calls"])  # type: ignore[attr-defined,index]


@pytest.mark.needs_torch
@pytest.mark.e2e
def test_scan_joins_the_trace(traced: tuple[Path, dict[str, object]]) -> None:
    folder, _ = traced
    done = _run("scan", "train.py", "--trace", "trace.json", "--format", "json", "--no-cache", cwd=folder)
    assert done.returncode == 1, done.stderr
    assert "finding(s) confirmed at runtime" in done.stderr
    document = json.loads(done.stdout)
    jsonschema.validate(document, json.loads((ROOT / "docs" / "json-schema.json").read_text(encoding="utf-8")))
    findings = document["files"][0]["diagnostics"]
    by = {(f["span"]["start_line"], f["torch_api"]): f for f in findings}
    assert by[(_line("self.fc = nn.Linear"), "torch.nn.Linear")]["runtime"] == "confirmed"
    assert by[(_line("F.gelu(y)"), "torch.nn.functional.gelu")]["runtime"] == "confirmed"
    tanh = by[(_line("getattr(torch"), "torch.tanh")]  # only the run saw it
    written = scan_source("import torch\ntorch.tanh(x)\n", "t.py").diagnostics[0]  # what the tables say of it
    assert tanh["runtime"] == "runtime_only" and tanh["code"] == written.code
    assert tanh["message"].startswith("seen only at runtime (3 calls): torch.tanh ->")
    nonzero = by[(_line("x.nonzero()"), "torch.Tensor.nonzero")]
    assert nonzero["code"] == "TMS201" and nonzero["runtime"] == "shape_varied"
    plain = _run("scan", "train.py", "--format", "json", "--no-cache", cwd=folder)
    assert not any("runtime" in f for f in json.loads(plain.stdout)["files"][0]["diagnostics"])
    assert (_line("getattr(torch"), "torch.tanh") not in {
        (f["span"]["start_line"], f["torch_api"]) for f in json.loads(plain.stdout)["files"][0]["diagnostics"]}


@pytest.mark.needs_torch
@pytest.mark.e2e
def test_html_report_shows_what_ran(traced: tuple[Path, dict[str, object]]) -> None:
    folder, _ = traced
    done = _run("scan", "train.py", "--trace", "trace.json", "--html", "report.html", "--no-cache",
                "--date", "2026-01-01", cwd=folder)
    assert done.returncode == 1, done.stderr
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert 'id="card-runtime"' in page and "Confirmed at runtime" in page
    assert "confirmed at runtime" in page and "seen only at runtime" in page  # the findings' labels
    untraced = _run("scan", "train.py", "--html", "plain.html", "--no-cache", "--date", "2026-01-01", cwd=folder)
    assert untraced.returncode == 1
    assert 'id="card-runtime"' not in (folder / "plain.html").read_text(encoding="utf-8")


@pytest.mark.needs_torch
@pytest.mark.e2e
def test_trace_keeps_the_trace_of_a_failing_script(tmp_path: Path) -> None:
    (tmp_path / "fails.py").write_text("import torch\ntorch.zeros(2)\nraise SystemExit(3)\n", encoding="utf-8")
    done = _run("trace", "-o", "t.json", "--", "python", "fails.py", cwd=tmp_path)
    assert done.returncode == 3
    doc = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert doc["exit_status"] == 3 and [c["api"] for c in doc["calls"]] == ["torch.zeros"]


@pytest.mark.needs_torch
@pytest.mark.e2e
@pytest.mark.parametrize("argv, message", [
    (["--", "python"], "nothing to run"),
    (["--", "python", "missing.py"], "missing.py: no such script"),
    (["--", "python", "-c", "print(1)"], "unsupported interpreter option '-c'"),
])
def test_trace_usage_errors(tmp_path: Path, argv: list[str], message: str) -> None:
    done = _run("trace", *argv, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize("text, reason", [
    ("{not json", "not a trace file: invalid JSON"),
    ('{"format": "other"}', "not a trace file"),
    ('{"format": "torch2ms-trace", "version": 99, "calls": []}', "version 99 is not supported"),
    ('{"format": "torch2ms-trace", "version": 1, "calls": [{"file": "a.py"}]}', "calls[0].api: expected str"),
])
def test_bad_trace_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                         reason: str) -> None:
    (tmp_path / "a.py").write_text("import torch\ntorch.zeros(2)\n", encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    assert main(["scan", str(tmp_path / "a.py"), "--trace", str(bad), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and reason in err


def test_conditional_dynamic_shape_cleared_when_shapes_follow_inputs() -> None:
    from torch2ms.config import Config
    from torch2ms.engine import scan_source
    from torch2ms.mappings import load_table

    source = "import torch\n\ndef f(x: torch.Tensor, k):\n    return x.topk(k)\n"
    result = scan_source(source, "/abs/f.py")
    assert any(d.code == "TMS252" for d in result.diagnostics)
    calls = [{"file": "/abs/f.py", "line": 4, "col": 11, "end_line": 4, "end_col": 19, "api": "torch.Tensor.topk",
              "kind": "method", "count": 4, "shapes": [{"in": [[5], []], "out": [[2], [2]]},
                                                         {"in": [[7], []], "out": [[2], [2]]}]}]
    doc = trace.parse(json.dumps({"format": trace.FORMAT, "version": trace.VERSION, "calls": calls}), "t.json")
    joined = trace.apply([result], doc, load_table(), Config(), lambda path: source)
    assert joined.cleared == 1
    assert not any(d.code == "TMS252" for d in joined.results[0].diagnostics)


def test_a_misnamed_finding_is_replaced_by_the_api_that_ran() -> None:
    from torch2ms.config import Config
    from torch2ms.mappings import load_table
    from torch2ms.model import Category, Diagnostic, FileResult, Severity, Span

    source = "import torch\n\ndef f(holder, x):\n    return holder.state.to(x.dtype)\n"
    wrong = Diagnostic("TMS103", Severity.ERROR, Category.MISSING, Span(4, 11, 4, 35), "...",
                       torch_api="torch.nn.Module.to")
    calls = [{"file": "/abs/g.py", "line": 4, "col": 24, "end_line": 4, "end_col": 35, "api": "torch.Tensor.to",
              "kind": "method", "count": 1}]
    doc = trace.parse(json.dumps({"format": trace.FORMAT, "version": trace.VERSION, "calls": calls}), "t.json")
    joined = trace.apply([FileResult("/abs/g.py", (wrong,), 4)], doc, load_table(), Config(), lambda path: source)
    (diag,) = joined.results[0].diagnostics
    assert (diag.torch_api, diag.runtime, diag.code) == ("torch.Tensor.to", trace.RUNTIME_ONLY, "TMS102")
