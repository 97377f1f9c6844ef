"""Hostile JSON inputs (weight maps, traces, baselines and --compare reports, verification and model
records): bounded depth and size, checked structure, every failure one line naming the file and the key,
exit code 2; a FIFO is refused like a source is; a map stating a huge tensor is refused. Also the
destination of `convert-weights --out`: never the checkpoint, never through a link unless asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torch2ms.verify.record import RecordError, read_record

from conftest import run_cli

GOOD_MAP: dict[str, Any] = {
    "format": "torch2ms-weight-map", "version": 1, "torch_source": "net.py", "ported_source": "net_ms.py",
    "roots": {"Net": {"entries": [{"torch": "fc.weight", "ms": "fc.weight", "kind": "parameter"}], "rules": []}},
}
SOURCE = "import torch\nx = torch.zeros(3)\n"


def convert(tmp_path: Path, weight_map: str | dict[str, Any], out: str = "out.ckpt",
            *extra: str) -> tuple[int, str]:
    checkpoint = tmp_path / "w.pth"
    if not checkpoint.exists():
        checkpoint.write_bytes(b"not read: the map is checked first")
    if isinstance(weight_map, dict):
        (tmp_path / "map.json").write_text(json.dumps(weight_map))
        weight_map = str(tmp_path / "map.json")
    proc = run_cli("convert-weights", str(checkpoint), "--map", weight_map, "--out", str(tmp_path / out), *extra)
    return proc.returncode, proc.stderr


def one_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


def with_entry(**entry: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(GOOD_MAP))
    doc["roots"]["Net"]["entries"][0].update(entry)
    return doc


# ---------------------------------------------------------------- weight maps
def test_a_map_nested_a_million_deep(tmp_path: Path) -> None:
    (tmp_path / "map.json").write_text("[" * 1_000_000 + "]" * 1_000_000)
    line = one_error(*convert(tmp_path, str(tmp_path / "map.json")))
    assert f"{tmp_path / 'map.json'}: the map is not valid: nested 1000000 levels deep (at most 100)" in line


def test_a_map_with_a_huge_integer(tmp_path: Path) -> None:
    (tmp_path / "map.json").write_text(json.dumps(GOOD_MAP).replace('"version": 1', '"version": 1' + "0" * 5000))
    line = one_error(*convert(tmp_path, str(tmp_path / "map.json")))
    assert "map.json: the map is not valid: an integer of 5001 digits" in line


@pytest.mark.parametrize("entry, key, message", [
    ({"torch": ["fc", "weight"]}, "roots.Net.entries[0].torch", "expected a string, found a list"),
    ({"torch": "layers.{0}.weight"}, "roots.Net.entries[0].torch", "placeholder {0} is not a name"),
    ({"kind": "tie", "tied_to": 7}, "roots.Net.entries[0].tied_to", "expected a string, found an integer"),
    ({"kind": "weird"}, "roots.Net.entries[0].kind", "'weird' is not one of parameter"),
    ({"transform": {"transpose": [0, 0, 0]}}, "roots.Net.entries[0].transform.transpose", "[0, 0, 0] is not a permutation"),
    ({"transform": {"unsqueeze": 10**9}}, "roots.Net.entries[0].transform.unsqueeze", "1000000000 is out of range"),
    ({"transform": {"explode": 1}}, "roots.Net.entries[0].transform.explode", "unknown transform"),
    ({"shape": [1000, 1000, 1000, 1000, 1000]}, "roots.Net.entries[0].shape", "a tensor of 1,000,000,000,000,000 elements is refused"),
])
def test_a_map_of_the_wrong_structure_names_the_key(tmp_path: Path, entry: dict[str, Any], key: str,
                                                    message: str) -> None:
    line = one_error(*convert(tmp_path, with_entry(**entry)))
    assert f"map.json: {key}: {message}" in line
    assert not (tmp_path / "out.ckpt").exists()


def test_roots_that_are_not_an_object(tmp_path: Path) -> None:
    line = one_error(*convert(tmp_path, {**GOOD_MAP, "roots": [1, 2]}))
    assert "map.json: roots: expected an object, found a list" in line


def test_a_fifo_as_map_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "map.fifo"
    os.mkfifo(fifo)
    (tmp_path / "w.pth").write_bytes(b"x")
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "convert-weights", str(tmp_path / "w.pth"), "--map",
                           str(fifo), "--out", str(tmp_path / "o.ckpt")], capture_output=True, text=True, timeout=60)
    line = one_error(proc.returncode, proc.stderr)
    assert f"{fifo}: cannot read the map: is a FIFO (named pipe), not a regular file" in line


# ---------------------------------------------------------------- convert-weights --out
def test_convert_weights_never_replaces_its_checkpoint(tmp_path: Path) -> None:
    line = one_error(*convert(tmp_path, GOOD_MAP, "w.pth"))
    assert "w.pth: is an input of this run; not overwritten" in line
    assert (tmp_path / "w.pth").read_bytes() == b"not read: the map is checked first"


def test_convert_weights_out_through_links(tmp_path: Path) -> None:
    (tmp_path / "dev.ckpt").symlink_to("/dev/zero")
    line = one_error(*convert(tmp_path, GOOD_MAP, "dev.ckpt", "--write-through-links"))
    assert "dev.ckpt: is a symbolic link to /dev/zero, a character device; not replaced" in line
    (tmp_path / "real.ckpt").write_bytes(b"old")
    (tmp_path / "link.ckpt").symlink_to("real.ckpt")
    line = one_error(*convert(tmp_path, GOOD_MAP, "link.ckpt"))
    assert "link.ckpt: is a symbolic link" in line and "--write-through-links" in line
    assert (tmp_path / "link.ckpt").is_symlink() and (tmp_path / "real.ckpt").read_bytes() == b"old"


# ---------------------------------------------------------------- traces
@pytest.mark.parametrize("text, message", [
    ("[" * 200_000 + "]" * 200_000, "not a trace file: nested 200000 levels deep"),
    ('{"format": "torch2ms-trace", "version": 1, "calls": [], "x": ' + "9" * 4000 + "}",
     "not a trace file: an integer of 4000 digits"),
])
def test_a_hostile_trace_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "t.json").write_text(text)
    proc = run_cli("scan", str(tmp_path / "a.py"), "--trace", str(tmp_path / "t.json"), "--no-cache", "--isolated")
    assert message in one_error(proc.returncode, proc.stderr)


# ---------------------------------------------------------------- baselines and --compare
def report(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "a.py").write_text(SOURCE)
    proc = run_cli("scan", str(tmp_path / "a.py"), "--output-format", "json", "-o", str(tmp_path / "r.json"),
                   "--no-cache", "--isolated")
    assert proc.returncode == 1, proc.stderr
    doc: dict[str, Any] = json.loads((tmp_path / "r.json").read_text())
    return doc


@pytest.mark.parametrize("change, key, message", [
    (lambda d: d["files"][0]["diagnostics"][0].update(code=["TMS"]), "files[0].diagnostics[0].code",
     "expected a string, found a list"),
    (lambda d: d["files"][0].update(diagnostics={"a": 1}), "files[0].diagnostics.a", "expected an object"),
    (lambda d: d.update(summary=[1]), "summary", "expected an object, found a list"),
    (lambda d: d["summary"].update(readiness={"percent": "high"}), "summary.readiness.percent", "expected a number"),
])
def test_a_hostile_baseline_or_compare_report_names_the_key(tmp_path: Path, change: Any, key: str,
                                                            message: str) -> None:
    doc = report(tmp_path)
    change(doc)
    (tmp_path / "old.json").write_text(json.dumps(doc))
    for option in (["--baseline", str(tmp_path / "old.json")],
                   ["--compare", str(tmp_path / "old.json"), "--html", str(tmp_path / "r.html")]):
        proc = run_cli("scan", str(tmp_path / "a.py"), *option, "--no-cache", "--isolated")
        assert f"old.json: {key}: {message}" in one_error(proc.returncode, proc.stderr)


def test_a_deep_model_record_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "m.json").write_text("{\"a\":" * 500_000 + "1" + "}" * 500_000)
    proc = run_cli("scan", str(tmp_path / "a.py"), "--html", str(tmp_path / "r.html"), "--model-record",
                   str(tmp_path / "m.json"), "--no-cache", "--isolated")
    assert "m.json: the model record is not valid: nested 500000 levels deep" in one_error(proc.returncode, proc.stderr)


# ---------------------------------------------------------------- verification records
@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
    (json.dumps({"torch_version": "1", "mindspore_version": "2", "devices": ["cpu"], "date": "d", "entries": {
        "torch.abs": {"cpu": {"status": "passed", "forms": [{"form": "x", "status": "passed", "cases": "many"}]}}}}),
     "entries.torch.abs.cpu: 'cases' must be a count"),
])
def test_a_hostile_verification_record(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "v.json").write_text(text)
    with pytest.raises(RecordError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        read_record(tmp_path / "v.json")
