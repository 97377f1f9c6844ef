"""`--baseline REPORT.json`: only findings that are not in an earlier JSON report are reported and fail."""

from __future__ import annotations

import json
from pathlib import Path

from torch2ms.baseline import context_index, fingerprint, normalise

from conftest import run_cli
from test_cli import finding_lines, write

CODE = '''import torch


def join(a, b):
    x = torch.cat([a, b], dim=0)
    return torch.histogram(x)


class Net:
    def forward(self, x):
        return torch.histogram(x)
'''


def baseline(tmp_path: Path) -> Path:
    out = tmp_path / "baseline.json"
    proc = run_cli("scan", "m.py", "--isolated", "--output-format", "json", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 1 and out.exists(), proc.stderr
    return out


def scan(tmp_path: Path, *extra: str):
    return run_cli("scan", "m.py", "--isolated", "--baseline", "baseline.json", *extra, cwd=tmp_path)


def test_an_unchanged_project_passes(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    doc = json.loads(baseline(tmp_path).read_text(encoding="utf-8"))
    contexts = [d["context"] for d in doc["files"][0]["diagnostics"]]
    assert contexts == ["join", "join", "Net.forward"]
    proc = scan(tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert finding_lines(proc.stdout) == []
    assert proc.stdout == "No new findings: all checks passed! (3 in the baseline not shown)\n"


def test_moved_code_still_matches_and_only_new_code_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    baseline(tmp_path)
    join, net = CODE.split("\n\nclass Net:")
    moved = ('"""Module doc."""\nimport os\n' + "\n\nclass Net:" + net + join.replace("import torch\n", "import torch\n\n")
             .replace("dim=0)", "dim=0)   # joined")  # an added comment and spaces do not matter
             + "\n\ndef more(x):\n    return torch.histogram(x)\n")
    write(tmp_path, "m.py", "import torch\n" + moved)
    proc = scan(tmp_path)
    assert proc.returncode == 1
    lines = finding_lines(proc.stdout)
    assert len(lines) == 1 and ":19:12: TMS103 error: torch.histogram" in lines[0], proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("Found 1 new finding (1 error;")
    assert proc.stdout.splitlines()[-1].endswith("; 3 in the baseline not shown.")


def test_each_baseline_finding_matches_once(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    baseline(tmp_path)
    # the same line twice in the same function: one is new
    write(tmp_path, "m.py", CODE.replace("    return torch.histogram(x)\n\n\nclass",
                                         "    y = torch.histogram(x)\n    return torch.histogram(x)\n\n\nclass"))
    assert len(finding_lines(scan(tmp_path).stdout)) == 1
    # the same line in another function is new, and so is a changed line
    write(tmp_path, "m.py", CODE.replace("dim=0", "dim=1") + "\n\ndef other(x):\n    return torch.histogram(x)\n")
    lines = finding_lines(scan(tmp_path).stdout)
    assert [line.split(": ")[1].split()[0] for line in lines] == ["TMS101", "TMS103"]


def test_fail_on_and_formats_apply_to_the_new_findings(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    baseline(tmp_path)
    write(tmp_path, "m.py", CODE + "\n\ny = torch.cat([1])\n")
    assert scan(tmp_path).returncode == 1
    assert scan(tmp_path, "--fail-on", "warning").returncode == 0  # only an info finding is new
    doc = json.loads(scan(tmp_path, "--output-format", "json").stdout)
    assert doc["summary"]["findings"] == 1 and doc["files"][0]["diagnostics"][0]["code"] == "TMS101"


def test_stdin_with_a_baseline(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    baseline(tmp_path)
    proc = run_cli("scan", "--stdin-filename", "m.py", "--isolated", "--baseline", "baseline.json",
                   cwd=tmp_path, input=CODE + "z = torch.histogram(1)\n")
    assert len(finding_lines(proc.stdout)) == 1


def test_unusable_baselines_are_errors(tmp_path: Path) -> None:
    write(tmp_path, "m.py", CODE)
    old = baseline(tmp_path)
    doc = json.loads(old.read_text(encoding="utf-8"))
    doc["schema_version"] = 3
    write(tmp_path, "old.json", json.dumps(doc))
    write(tmp_path, "broken.json", "{not json")
    for name, message in (("old.json", "schema 3 has no finding fingerprints"), ("broken.json", "is not JSON"),
                          ("missing.json", "cannot read the report")):
        proc = run_cli("scan", "m.py", "--isolated", "--baseline", name, cwd=tmp_path)
        assert proc.returncode == 2 and f"{name}: " in proc.stderr and message in proc.stderr, proc.stderr
    assert run_cli("scan", "m.py", "--baseline", "baseline.json", "--fix", cwd=tmp_path).returncode == 2


def test_context_and_fingerprint() -> None:
    text = ("import torch\n@torch.no_grad()\ndef f():\n    x = 1\n\n    class A:\n        async def g(self):\n"
            "            return 2\n    return x\ny = 3\n")
    at = context_index(text)
    assert [at(n) for n in range(1, 11)] == ["", "", "f", "f", "f", "f.A", "f.A.g", "f.A.g", "f", ""]
    assert context_index("def broken(:\n")(1) == ""
    assert normalise("  x  =  torch.cat( [a] )   # noqa: TMS101") == "x = torch.cat( [a] )"
    assert normalise('s = "#not a comment"') == 's = "#not a comment"'
    assert fingerprint("x = torch.cat([a])") == fingerprint("    x =  torch.cat([a])  # note") != fingerprint("x = 1")
