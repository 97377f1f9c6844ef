"""`verify-model --locate`: both networks run with a hook on every layer; the first layer whose output
differs while its inputs agree is named with the port's line and the rewrite `migrate` recorded for it.
Run for real (torch and MindSpore workers) on a small network ported by `migrate`, broken at one place."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from torch2ms.migrate.provenance import build, line_origins, provenance_path
from torch2ms.verify import model as verify_model
from torch2ms.verify.layers import first_divergence, module_pairs
from torch2ms.verify.tolerance import judge, measure, relative_bound
from torch2ms.weights.place import Placement

import test_verify_model

pools = test_verify_model.pools  # the warm torch and MindSpore workers (a fixture)
pytestmark = [pytest.mark.needs_torch, pytest.mark.needs_mindspore,
              pytest.mark.needs_numpy]  # the workers, and verify.tolerance's arrays

TORCH_NET = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        x = self.act(self.fc1(x))
        return self.fc2(x)
'''


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from torch2ms.cli import main

    root = tmp_path_factory.mktemp("locate")
    (root / "src").mkdir()
    (root / "src" / "net.py").write_text(TORCH_NET, encoding="utf-8")
    assert main(["migrate", str(root / "src" / "net.py"), "--out", str(root / "port"), "--isolated", "-q"]) == 0
    return root / "src" / "net.py", root / "port" / "net.py"


def _broken(port: tuple[Path, Path], tmp: Path, old: str, new: str) -> Path:
    """A copy of the port (and its provenance) with one text replaced."""
    text = port[1].read_text(encoding="utf-8")
    assert old in text
    target = tmp / "net.py"
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    shutil.copy(provenance_path(str(port[1])), provenance_path(str(target)))
    shutil.copy(str(port[1])[:-3] + ".weights.json", str(target)[:-3] + ".weights.json")
    return target


def _line(path: Path, text: str) -> int:
    return next(k for k, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _verify(pools: Any, original: Path, ported: Path, **options: Any) -> tuple[int, dict[str, Any]]:
    return verify_model.check(f"{original}:Net", f"{ported}:Net", ["3,8"], pools, modes="pynative", **options)


def test_migrate_records_which_finding_each_written_line_answers(port: tuple[Path, Path]) -> None:
    data = json.loads(Path(provenance_path(str(port[1]))).read_text())
    assert data["format"] == "torch2ms-migrate-provenance"
    line = _line(port[1], "self.act =")
    entry = next(item for item in data["lines"] if item["line"] == line)
    assert entry["original_lines"] == [_line(port[0], "self.act ="), _line(port[0], "self.act =")]
    assert [(r["torch_api"], r["mindspore_api"]) for r in entry["rewrites"]] == \
        [("torch.nn.ReLU", "mindspore.mint.nn.ReLU")]
    assert all(item["line"] != _line(port[1], "def construct") + 1 for item in data["lines"])  # unchanged line
    # the line diff: a replaced block maps to the lines it replaces, an added line to where it was added
    assert line_origins("a\nb\nc\n", "a\nB\nc\nd\n") == {2: (2, 2), 4: (3, 3)}  # added at the end: the last
    assert build("a\n", "a\n", [])["lines"] == []


def test_a_correct_port_passes_and_every_layer_agrees(pools, port: tuple[Path, Path]) -> None:
    code, result = _verify(pools, *port, locate=True)
    assert code == 0, result["problems"]
    rows = result["locate"]["layers"]
    assert [r["torch"] for r in rows] == ["fc1", "act", "fc2", ""]
    assert all(r["verdict"] == "ok" for r in rows) and "first" not in result["locate"]
    output = result["modes"]["pynative"]["outputs"][0]  # msprobe's measures beside the verdict
    assert output["cosine"] > 0.999999 and output["relative"] < 1e-5


def test_a_wrong_layer_is_named_with_its_line_and_rewrite(pools, port: tuple[Path, Path], tmp_path: Path) -> None:
    broken = _broken(port, tmp_path, "mint.nn.ReLU()", "mint.nn.Sigmoid()")
    code, result = _verify(pools, port[0], broken)
    assert code == 1
    first = result["locate"]["first"]
    assert first["kind"] == "layer" and first["layer"] == "act" and first["class"] == "ReLU"
    assert first["port"] == f"{broken}:{_line(broken, 'self.act =')}"
    assert first["original"] == f"{port[0]}:{_line(port[0], 'self.act =')}"
    assert [r["torch_api"] for item in first["rewrites"] for r in item["rewrites"]] == ["torch.nn.ReLU"]


def test_functional_code_between_layers_is_located_as_the_lines_between(pools, port: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    broken = _broken(port, tmp_path, "return self.fc2(x)", "return self.fc2(x * 1.01)")
    code, result = _verify(pools, port[0], broken, locate=False)
    assert code == 1 and "locate" not in result  # --no-locate: no trace
    code, result = _verify(pools, port[0], broken)
    first = result["locate"]["first"]
    assert first["kind"] == "between" and first["layer"] == "fc2" and first["after"] == "act"
    assert first["port"] == f"{broken}:{_line(broken, 'self.act(')}-{_line(broken, 'self.fc2(x')}"


def test_a_gradient_broken_in_the_backward_is_located(pools, port: tuple[Path, Path], tmp_path: Path) -> None:
    broken = _broken(port, tmp_path, "return self.fc2(x)", "return self.fc2(mindspore.ops.stop_gradient(x))")
    code, result = _verify(pools, port[0], broken, train_step=True)
    assert code == 1 and all(r["verdict"] == "ok" for r in result["locate"]["layers"])
    first = result["locate"]["first"]
    assert first["kind"] == "backward" and first["layer"] == "fc1"
    lo, hi = first["port"].rpartition(":")[2].split("-")
    assert int(lo) <= _line(broken, "stop_gradient") <= int(hi)


def test_tolerance_scales_with_dtype_and_reduction_and_pairs_follow_the_map() -> None:
    assert relative_bound("float32", 10000) > relative_bound("float32", 1) > relative_bound("float64", 1)
    assert relative_bound("float32", 1, rtol=1e-3) == 1e-3
    m = measure([1.0, 2.0], [1.0, 2.0001])
    assert m.relative == pytest.approx(5e-5) and m.cosine == pytest.approx(1.0)
    assert judge(m, "float32", 1, 1e-5).startswith("relative error") and judge(m, "float32", 1, 1e-4) == ""
    assert judge(measure([1.0], [1.0, 2.0]), "float32") == "shape differs"
    pairs = module_pairs({"embed.weight": Placement("embed.weight", "embed.embedding_table"),
                          "bn.weight": Placement("bn.weight", "bn.bn2d.gamma"),
                          "head.weight": Placement("head.weight", "embed.embedding_table", kind="tie")})
    assert pairs == {"embed": "embed", "bn": "bn"}
    rows = [{"torch": "a", "verdict": "ok"}, {"torch": "b.c", "verdict": "ok"},
            {"torch": "b", "verdict": "differs", "input_rule": ""}]
    found = first_divergence(rows)
    assert found is not None and found["kind"] == "inside" and found["after"]["torch"] == "b.c"


def test_a_training_step_runs_dropout_at_zero_on_both_sides(pools, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "m").mkdir()
    (tmp_path / "t" / "net.py").write_text(TORCH_NET.replace("nn.ReLU()", "nn.Sequential(nn.ReLU(), nn.Dropout(0.5))"))
    (tmp_path / "m" / "net.py").write_text(
        "from mindspore import nn, mint\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc1 = mint.nn.Linear(8, 16)\n        self.act = nn.SequentialCell(mint.nn.ReLU(), mint.nn.Dropout(0.5))\n"
        "        self.fc2 = mint.nn.Linear(16, 4)\n\n    def construct(self, x):\n        return self.fc2(self.act(self.fc1(x)))\n")
    code, result = _verify(pools, tmp_path / "t" / "net.py", tmp_path / "m" / "net.py", train_step=True)
    assert code == 0, result["problems"]
    assert result["modes"]["pynative"]["train"]["compared"] == 4


RNN_TORCH = '''import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5, batch_first=True)
        self.fc = nn.Linear(5, 3)

    def forward(self, x, hidden):
        out, (h, c) = self.lstm(x, hidden)
        return self.fc(out), (h, c)
'''
RNN_MS = '''from mindspore import nn, mint


class Tagger(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5, batch_first=True)
        self.fc = mint.nn.Linear(5, 3)

    def construct(self, x, hidden):
        out, (h, c) = self.lstm(x, hidden)
        return self.fc(out), (h, c)
'''
INPUTS = '''import numpy as np


def make(seed):
    rng = np.random.default_rng(seed)
    state = rng.standard_normal((1, 2, 5)).astype(np.float32)
    return [rng.standard_normal((2, 4, 6)).astype(np.float32), (state, state * 0.5)]
'''


def test_a_recurrent_state_given_as_a_tuple_or_by_an_input_factory(pools, tmp_path: Path) -> None:
    for side, text in (("t", RNN_TORCH), ("m", RNN_MS)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "tagger.py").write_text(text, encoding="utf-8")
    (tmp_path / "inputs.py").write_text(INPUTS, encoding="utf-8")
    original, ported = f"{tmp_path / 't' / 'tagger.py'}:Tagger", f"{tmp_path / 'm' / 'tagger.py'}:Tagger"
    code, result = verify_model.check(original, ported, ["2,4,6", "(1,2,5;1,2,5)"], pools, train_step=True)
    assert code == 0, result["problems"]
    assert [row["path"] for row in result["modes"]["graph"]["outputs"]] == ["[0]", "[1][0]", "[1][1]"]
    assert result["inputs"][1] == {"tuple": [{"shape": [1, 2, 5], "dtype": "float32"}] * 2}
    code, result = verify_model.check(original, ported, [], pools, inputs_from=f"{tmp_path / 'inputs.py'}:make",
                                      modes="pynative")
    assert code == 0, result["problems"]
    # a broken state is located: the LSTM's own inputs differ from torch's
    (tmp_path / "m" / "tagger.py").write_text(RNN_MS.replace("self.lstm(x, hidden)", "self.lstm(x * 2, hidden)"))
    code, result = verify_model.check(original, ported, ["2,4,6", "(1,2,5;1,2,5)"], pools, modes="pynative")
    assert code == 1 and result["locate"]["first"]["kind"] == "between"
    assert result["locate"]["first"]["layer"] == "lstm"
    with pytest.raises(verify_model.UsageError):
        verify_model.parse_input("((1,2);3)")


def test_a_spec_file_checks_every_network_of_a_tree_in_one_run(pools, port: tuple[Path, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    broken = _broken(port, tmp_path, "mint.nn.ReLU()", "mint.nn.Sigmoid()")
    spec = {"networks": [
        {"name": "good", "original": f"{port[0]}:Net", "ported": f"{port[1]}:Net", "inputs": ["3,8"]},
        {"name": "broken", "original": f"{port[0]}:Net", "ported": "net.py:Net", "inputs": ["3,8"],
         "options": {"modes": "pynative"}}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    parser = argparse.ArgumentParser()
    verify_model.add_arguments(parser)
    args = parser.parse_args(["--spec", str(tmp_path / "spec.json"), "--json"])
    out = io.StringIO()
    assert verify_model.run(args, out, pools) == 1
    doc = json.loads(out.getvalue())
    assert (doc["passed"], doc["total"]) == (1, 2)
    assert [(r["name"], r["status"]) for r in doc["networks"]] == [("good", "passed"), ("broken", "failed")]
    assert doc["networks"][1]["port"] == f"{broken}:{_line(broken, 'self.act =')}"  # relative to the spec
    (tmp_path / "bad.json").write_text('{"networks": [{"original": 3}]}', encoding="utf-8")
    assert verify_model.run(parser.parse_args(["--spec", str(tmp_path / "bad.json")]), out, pools) == 2
    assert "networks[0]: needs" in capsys.readouterr().err
