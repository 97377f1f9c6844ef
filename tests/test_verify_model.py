"""`torch2ms verify-model` and `torch2ms convert-weights`, run for real: torch in one worker process,
MindSpore (refusing `import torch`) in another, on three hand-written networks and their hand-written ports
in tests/data/models: a residual network with BatchNorm, a recurrent one, a transformer with tied embeddings."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torch2ms.verify import model as verify_model
from torch2ms.verify import convert_weights as convert
from torch2ms.weights import write_map

MODELS = Path(__file__).resolve().parent / "data" / "models"


@pytest.fixture(scope="module")
def pools():
    warm = {"torch": verify_model.side_pool("torch", timeout=300),
            "mindspore": verify_model.side_pool("mindspore", timeout=300)}
    yield warm
    for pool in warm.values():
        pool.close()


def _parser(add: Any) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add(parser)
    return parser


def _verify(pools: dict[str, Any], original: str, ported: str, *inputs: str, **options: Any) -> tuple[int, dict[str, Any]]:
    return verify_model.check(original, ported, list(inputs), pools, **options)


def _m(name: str) -> str:
    return str(MODELS / name)


def _rows(result: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    return result["modes"][mode]["outputs"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_convnet_with_batchnorm_agrees_in_pynative_and_graph_with_a_training_step(pools, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    code, result = _verify(pools, _m("convnet_torch.py") + ":small_resnet(num_classes=7)",
                           _m("convnet_ms.py") + ":small_resnet(num_classes=7)", "2,3,16,16",
                           train_step=True, record=str(record))
    assert code == 0, result["problems"]
    assert result["status"] == "passed" and set(result["modes"]) == {"pynative", "graph"}
    assert result["warnings"] == []  # its output depends on its input
    for mode in ("pynative", "graph"):
        (row,) = _rows(result, mode)
        assert row["ok"] and row["torch"] == {"shape": [2, 7], "dtype": "float32"} == row["mindspore"]
        train = result["modes"][mode]["train"]
        assert train["loss"]["ok"] and train["compared"] == 38 + 20  # every gradient and every running statistic
    weights = result["weights"]
    assert weights["torch_tensors"] == 68 and weights["copied"] == 58 and len(weights["dropped"]) == 10
    assert not weights["unplaced"] and not weights["not_loaded"] and weights["complete"] is True
    assert json.loads(record.read_text(encoding="utf-8"))["status"] == "passed"
    # the record in the HTML report
    html = tmp_path / "report.html"
    scan = subprocess.run([sys.executable, "-m", "torch2ms", "scan", _m("convnet_torch.py"), "--html", str(html),
                           "--model-record", str(record), "--no-cache"], capture_output=True, text=True, timeout=300)
    assert scan.returncode == 1, scan.stderr  # findings
    page = html.read_text(encoding="utf-8")
    assert 'id="models"' in page and "convnet_ms.py:small_resnet(num_classes=7)" in page and "PASSED" in page


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_recurrent_network_and_a_wrong_weight_in_the_map(pools, tmp_path: Path) -> None:
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN", _m("rnn_ms.py") + ":TextRNN", "3,7:int64:0:50",
                           train_step=True, loss="sum", write_map=str(tmp_path / "rnn.map.json"))
    assert code == 0, result["problems"]
    assert [r["path"] for r in _rows(result, "graph")] == ["[0]", "[1]"]  # (logits, h)
    assert result["weights"]["copied"] == 25
    resolved = json.loads((tmp_path / "rnn.map.json").read_text(encoding="utf-8"))
    entries = {e["torch"]: e for e in resolved["roots"]["TextRNN"]["entries"] if e["torch"]}
    assert entries["embed.weight"]["ms"] == "embed.embedding_table" and entries["embed.weight"]["shape"] == [50, 16]
    # a map that sends the LayerNorm's weight and bias to each other's place: the outputs tell
    entries["norm.weight"]["ms"], entries["norm.bias"]["ms"] = "norm.beta", "norm.gamma"
    (tmp_path / "wrong.json").write_text(json.dumps(resolved), encoding="utf-8")
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN", _m("rnn_ms.py") + ":TextRNN", "3,7:int64:0:50",
                           map=str(tmp_path / "wrong.json"), modes="pynative")
    assert code == 1 and result["status"] == "failed"
    assert any(p.startswith("pynative: output[0]: values differ") for p in result["problems"]), result["problems"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_transformer_with_tied_embeddings_and_its_buffer(pools) -> None:
    code, result = _verify(pools, _m("transformer_torch.py") + ":TinyLM(layers=2)",
                           _m("transformer_ms.py") + ":TinyLM(layers=2)", "2,10:int64:0:40", train_step=True)
    assert code == 0, result["problems"]
    assert result["weights"]["tied"] == [{"torch": "head.weight", "tied_to": "embed.weight",
                                          "ms": "embed.embedding_table"}]
    for mode in ("pynative", "graph"):
        assert result["modes"][mode]["train"]["compared"] == 27 + 1  # 27 parameters, the position buffer


def _port(tmp_path: Path, name: str, old: str, new: str) -> str:
    text = (MODELS / name).read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return str(path)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_missing_layer_and_a_shape_mismatch_fail_with_the_reason(pools, tmp_path: Path) -> None:
    renamed = _port(tmp_path, "rnn_ms.py", "self.fc = nn.Dense(hidden, classes)", "self.out = nn.Dense(hidden, classes)")
    Path(renamed).write_text(Path(renamed).read_text(encoding="utf-8").replace("self.fc(", "self.out("),
                             encoding="utf-8")
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN", renamed + ":TextRNN", "3,7:int64:0:50",
                           modes="pynative")
    assert code == 1
    assert result["weights"]["unplaced"]["fc.weight"].endswith("the port's TextRNN has no attribute fc")
    assert "the MindSpore parameter out.weight gets no torch tensor (it keeps its initial value)" in result["problems"]
    (tmp_path / "narrow").mkdir()
    narrow = _port(tmp_path / "narrow", "rnn_ms.py", "embed=16, hidden=12", "embed=16, hidden=10")
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN", narrow + ":TextRNN", "3,7:int64:0:50",
                           modes="pynative")
    assert code == 1
    assert "norm.weight [12] -> norm.gamma [10]: shape mismatch" in result["problems"], result["problems"]


DAMPED_TORCH = '''
import torch.nn as nn


class Damped(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(self.body(x) * 1e-7)
'''


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_outputs_that_agree_while_tensors_were_not_copied_do_not_pass(pools, tmp_path: Path) -> None:
    """A network whose output hardly depends on one layer (as a deep random network's hardly depends on its
    middle layers): the port names that layer differently, so the map leaves its tensors uncopied. The outputs
    agree within the tolerance anyway; verify-model still fails, and says the weights were incomplete."""
    (tmp_path / "damped_torch.py").write_text(DAMPED_TORCH, encoding="utf-8")
    ported = DAMPED_TORCH.replace("import torch.nn as nn", "import mindspore.nn as nn").replace(
        "nn.Module", "nn.Cell").replace("nn.Linear", "nn.Dense").replace("def forward", "def construct")
    (tmp_path / "damped_ms.py").write_text(ported.replace("self.body", "self.trunk"), encoding="utf-8")
    code, result = _verify(pools, str(tmp_path / "damped_torch.py") + ":Damped",
                           str(tmp_path / "damped_ms.py") + ":Damped", "4,6", modes="pynative")
    (row,) = _rows(result, "pynative")
    assert row["ok"]  # the outputs agree: the comparison alone cannot tell
    assert code == 1 and result["status"] == "failed"
    assert result["weights"]["complete"] is False and set(result["weights"]["unplaced"]) == {"body.weight",
                                                                                            "body.bias"}
    assert "the MindSpore parameter trunk.weight gets no torch tensor (it keeps its initial value)" in \
        result["problems"]
    (tmp_path / "damped_ms.py").write_text(ported, encoding="utf-8")  # the same port with the layer's own name
    code, result = _verify(pools, str(tmp_path / "damped_torch.py") + ":Damped",
                           str(tmp_path / "damped_ms.py") + ":Damped", "4,6", modes="pynative")
    assert code == 0 and result["weights"]["complete"] is True, result["problems"]
    # it passes, with a warning: another input moves torch's output by less than the tolerance
    (warning,) = result["warnings"]
    assert warning.startswith("torch's output barely depends on the input: for another random input it moves by ")
    text = io.StringIO()
    verify_model.print_text(result, text)
    assert f"warning:   {warning}\n" in text.getvalue()


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_port_whose_parameters_no_checkpoint_can_address_fails(pools, tmp_path: Path) -> None:
    # Cells appended to a CellList after it is assigned get names without the list's prefix in MindSpore
    # ("0.weight" for extra.0.weight): the outputs agree, but no converted checkpoint can fill them.
    appended = _port(tmp_path, "convnet_ms.py", """        self.extra = nn.CellList([nn.Conv1d(width * 2, width * 2, 3, pad_mode="pad", padding=1, has_bias=True)
                                  for _ in range(2)])""", """        self.extra = nn.CellList()
        for _ in range(2):
            self.extra.append(nn.Conv1d(width * 2, width * 2, 3, pad_mode="pad", padding=1, has_bias=True))""")
    code, result = _verify(pools, _m("convnet_torch.py") + ":small_resnet", appended + ":small_resnet", "1,3,8,8",
                           modes="pynative")
    assert code == 1
    assert all(row["ok"] for row in _rows(result, "pynative"))
    assert any(p.startswith("MindSpore names the parameter at extra.0.weight '0.weight'") for p in result["problems"])


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_mindspore_side_runs_without_torch(pools, tmp_path: Path) -> None:
    leaky = _port(tmp_path, "rnn_ms.py", "from mindspore import nn", "from mindspore import nn\nimport torch")
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN", leaky + ":TextRNN", "3,7:int64:0:50")
    assert code == 1
    assert any("No module named 'torch'" in p and "runs without torch" in p for p in result["problems"])


def test_usage_errors_exit_2_before_anything_runs(tmp_path: Path) -> None:
    from torch2ms.cli import main

    torch_target, ms_target = _m("rnn_torch.py") + ":TextRNN", _m("rnn_ms.py") + ":TextRNN"
    assert main(["verify-model", _m("rnn_torch.py") + ":NoSuchNet", ms_target, "--input", "2,3"]) == 2
    assert main(["verify-model", _m("rnn_torch.py") + ":TextRNN(vocab=n)", ms_target, "--input", "2,3"]) == 2
    assert main(["verify-model", "rnn_torch.py", ms_target, "--input", "2,3"]) == 2
    assert main(["verify-model", torch_target, ms_target]) == 2  # no --input
    assert main(["verify-model", torch_target, ms_target, "--input", "2,x"]) == 2
    assert main(["verify-model", torch_target, ms_target, "--input", "2,3:complex7"]) == 2
    assert main(["verify-model", torch_target, ms_target, "--input", "2,3", "--map", str(tmp_path / "none")]) == 2
    assert main(["verify-model", str(tmp_path / "gone.py") + ":Net", ms_target, "--input", "2,3"]) == 2


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_factory_that_torch_cannot_build_exits_2(pools) -> None:
    code, result = _verify(pools, _m("rnn_torch.py") + ":TextRNN(no_such_argument=1)", _m("rnn_ms.py") + ":TextRNN",
                           "3,7:int64:0:50")
    assert code == 2 and result == {}


# ------------------------------------------------------------------ convert-weights


def _convert(pools: dict[str, Any], *argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = convert.run(_parser(convert.add_arguments).parse_args([*argv, "--json"]), out, pools)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}


def _ms_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint as MindSpore reads it (in a process of its own)."""
    code = ("import json, sys, mindspore\n"
            "c = mindspore.load_checkpoint(sys.argv[1])\n"
            "print(json.dumps({k: v.asnumpy().ravel().tolist() for k, v in c.items()}))\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_convert_weights_round_trip_pth_and_safetensors(pools, tmp_path: Path) -> None:
    import torch
    from safetensors.torch import save_file

    sys.path.insert(0, str(MODELS))
    try:
        import convnet_torch
        import rnn_torch
    finally:
        sys.path.remove(str(MODELS))
    torch.manual_seed(3)
    convnet = convnet_torch.small_resnet(num_classes=7)
    torch.save({"model": convnet.state_dict(), "epoch": 3}, tmp_path / "convnet.pth")
    write_map(_m("convnet_torch.py"), _m("convnet_ms.py"), str(tmp_path / "convnet.map.json"))
    code, report = _convert(pools, str(tmp_path / "convnet.pth"), "--map", str(tmp_path / "convnet.map.json"),
                            "--out", str(tmp_path / "convnet.ckpt"))
    assert code == 0, report
    assert report["root"] == "SmallResNet" and report["written"] and not report["unplaced"]
    assert report["notes"] == ["the state_dict is under 'model' of the checkpoint"]
    assert len(report["placed"]) == 58 and len(report["dropped"]) == 10
    saved = _ms_checkpoint(tmp_path / "convnet.ckpt")
    state = convnet.state_dict()
    assert saved["layer2.0.downsample.1.moving_variance"] == state["layer2.0.downsample.1.running_var"].tolist()
    assert saved["extra.1.weight"] == state["extra.1.weight"].ravel().tolist()  # unsqueezed: same values
    assert "stem.1.num_batches_tracked" not in saved and len(saved) == 58

    rnn = rnn_torch.TextRNN()
    save_file(rnn.state_dict(), str(tmp_path / "rnn.safetensors"))
    write_map(_m("rnn_torch.py"), _m("rnn_ms.py"), str(tmp_path / "rnn.map.json"))
    code, report = _convert(pools, str(tmp_path / "rnn.safetensors"), "--map", str(tmp_path / "rnn.map.json"),
                            "--out", str(tmp_path / "rnn.ckpt"))
    assert code == 0 and report["written"], report
    saved = _ms_checkpoint(tmp_path / "rnn.ckpt")
    assert saved["embed.embedding_table"] == rnn.state_dict()["embed.weight"].ravel().tolist()
    assert saved["lstm.weight_hh_l1_reverse"] == rnn.state_dict()["lstm.weight_hh_l1_reverse"].ravel().tolist()

    # safetensors keeps one name of a tied tensor: whichever it keeps, MindSpore's one parameter gets the values
    from safetensors.torch import save_model

    sys.path.insert(0, str(MODELS))
    try:
        import transformer_torch
    finally:
        sys.path.remove(str(MODELS))
    lm = transformer_torch.TinyLM()
    save_model(lm, str(tmp_path / "lm.safetensors"))  # keeps embed.weight
    head_only = {k: v.clone() for k, v in lm.state_dict().items() if k != "embed.weight"}
    save_file(head_only, str(tmp_path / "head.safetensors"))
    write_map(_m("transformer_torch.py"), _m("transformer_ms.py"), str(tmp_path / "lm.map.json"))
    for name in ("lm", "head"):
        code, report = _convert(pools, str(tmp_path / f"{name}.safetensors"), "--map", str(tmp_path / "lm.map.json"),
                                "--out", str(tmp_path / f"{name}.ckpt"))
        assert code == 0 and report["written"] and report["buffers"] == [{"torch": "pos", "ms": "pos"}], report
        saved = _ms_checkpoint(tmp_path / f"{name}.ckpt")
        assert saved["embed.embedding_table"] == lm.embed.weight.ravel().tolist(), name
        assert "pos" not in saved and len(saved) == 27


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_convert_weights_reports_unplaced_keys_and_bad_files(pools, tmp_path: Path) -> None:
    import torch

    sys.path.insert(0, str(MODELS))
    try:
        import rnn_torch
    finally:
        sys.path.remove(str(MODELS))
    state = rnn_torch.TextRNN().state_dict()
    state["classifier.weight"] = torch.zeros(3, 3)
    torch.save(state, tmp_path / "extra.pth")
    write_map(_m("rnn_torch.py"), _m("rnn_ms.py"), str(tmp_path / "map.json"))
    args = ["--map", str(tmp_path / "map.json"), "--out", str(tmp_path / "out.ckpt")]
    code, report = _convert(pools, str(tmp_path / "extra.pth"), *args)
    assert code == 1 and not report["written"] and not (tmp_path / "out.ckpt").exists()
    assert report["unplaced"] == {"classifier.weight": "the map has no entry for it"}
    code, report = _convert(pools, str(tmp_path / "extra.pth"), *args, "--allow-unplaced")
    assert code == 0 and report["written"] and (tmp_path / "out.ckpt").exists()
    # a resolved map (verify-model --write-map) knows the shapes: another shape is reported
    resolved = {"format": "torch2ms-weight-map", "version": 1, "torch_source": "", "ported_source": "",
                "roots": {"Net": {"entries": [{"torch": "classifier.weight", "ms": "head.weight", "shape": [3, 4]}],
                                  "rules": []}}}
    (tmp_path / "resolved.json").write_text(json.dumps(resolved), encoding="utf-8")
    code, report = _convert(pools, str(tmp_path / "extra.pth"), "--map", str(tmp_path / "resolved.json"), "--out",
                            str(tmp_path / "x.ckpt"), "--root", "Net")
    assert code == 1
    assert report["unplaced"]["classifier.weight"] == ("shape mismatch: the checkpoint's classifier.weight is [3, 3], "
                                                       "the map expects [3, 4] for head.weight")
    # unreadable checkpoint, missing map, unknown root: usage errors
    (tmp_path / "junk.pth").write_bytes(b"not a checkpoint at all")
    assert _convert(pools, str(tmp_path / "junk.pth"), *args)[0] == 2
    assert _convert(pools, str(tmp_path / "none.pth"), *args)[0] == 2
    assert _convert(pools, str(tmp_path / "extra.pth"), "--map", str(tmp_path / "none.json"), "--out", "x.ckpt")[0] == 2
    assert _convert(pools, str(tmp_path / "extra.pth"), *args, "--root", "Nope")[0] == 2
    shutil.rmtree(tmp_path / "gone", ignore_errors=True)
    assert _convert(pools, str(tmp_path / "extra.pth"), "--map", str(tmp_path / "map.json"), "--out",
                    str(tmp_path / "gone" / "x.ckpt"))[0] == 2


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_network_split_over_the_files_of_a_package(pools, tmp_path: Path) -> None:
    from test_weight_map import PORTED_PACKAGE, TORCH_PACKAGE, _package

    _package(tmp_path / "orig" / "proj", TORCH_PACKAGE)
    _package(tmp_path / "port" / "proj", PORTED_PACKAGE)  # the same package name: each side imports its own
    code, result = _verify(pools, str(tmp_path / "orig" / "proj" / "net.py") + ":Net(depth=3)",
                           str(tmp_path / "port" / "proj" / "net.py") + ":Net(depth=3)", "2,4", modes="graph")
    assert code == 0, result["problems"]
    assert result["weights"]["copied"] == 16 and not result["weights"]["unplaced"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_three_commands_of_a_port_migrate_convert_weights_verify_model(pools, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """What the README shows: `migrate` writes the port and, beside it, the parameter-name map of its cells;
    `convert-weights` turns a torch checkpoint into a MindSpore one by that map; `verify-model` runs both."""
    import torch

    from torch2ms.cli import main

    shutil.copy(MODELS / "rnn_torch.py", tmp_path / "rnn_torch.py")
    (tmp_path / "plain.py").write_text("import torch\n\ndef double(x):\n    return torch.mul(x, 2)\n")
    ported = tmp_path / "ported"
    assert main(["migrate", str(tmp_path / "rnn_torch.py"), str(tmp_path / "plain.py"), "--out", str(ported),
                 "--isolated", "-q"]) == 0
    map_path = ported / "rnn_torch.weights.json"
    assert f"parameter-name map of 1 cell class(es): {map_path}" in capsys.readouterr().out
    assert not (ported / "plain.weights.json").exists()  # no cell class: no map
    written = json.loads(map_path.read_text())
    entries = {e["torch"]: e["ms"] for e in written["roots"]["TextRNN"]["entries"] if e.get("torch")}
    assert entries["embed.weight"] == "embed.embedding_table"  # from the tables' weight facts
    assert written["torch_source"] == str(tmp_path / "rnn_torch.py") and written["ported_source"] == str(ported / "rnn_torch.py")

    sys.path.insert(0, str(MODELS))
    try:
        import rnn_torch
    finally:
        sys.path.remove(str(MODELS))
    torch.manual_seed(5)
    torch.save(rnn_torch.TextRNN().state_dict(), tmp_path / "model.pth")
    code, report = _convert(pools, str(tmp_path / "model.pth"), "--map", str(map_path), "--out", str(tmp_path / "m.ckpt"))
    assert code == 0 and report["written"] and not report["unplaced"], report
    assert _ms_checkpoint(tmp_path / "m.ckpt")["embed.embedding_table"] == \
        torch.load(tmp_path / "model.pth")["embed.weight"].ravel().tolist()
    code, result = _verify(pools, f"{tmp_path / 'rnn_torch.py'}:TextRNN", f"{ported / 'rnn_torch.py'}:TextRNN",
                           "4,20:int64:0:50", map=str(map_path), weights=str(tmp_path / "model.pth"))
    assert code == 0 and result["status"] == "passed", result["problems"]
    assert result["map_root"] == "TextRNN" and result["weights"]["copied"] == 25
    assert set(result["modes"]) == {"pynative", "graph"}

    # --diff writes nothing, no map either (nor does --in-place: the map is of a parallel tree, both files kept)
    assert main(["migrate", str(tmp_path / "rnn_torch.py"), "--diff", "--isolated"]) == 0
    assert not (tmp_path / "rnn_torch.weights.json").exists()


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_convert_weights_refuses_a_partial_checkpoint_and_narrows_float64(pools, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A checkpoint holding part of the network, or the weights of a wider one, writes nothing and exits 1
    (--allow-partial writes what it can); float64 weights are written as float32, which the cell loads."""
    import torch

    sys.path.insert(0, str(MODELS))
    try:
        import convnet_torch
        import rnn_torch
    finally:
        sys.path.remove(str(MODELS))
    write_map(_m("rnn_torch.py"), _m("rnn_ms.py"), str(tmp_path / "map.json"))
    full = rnn_torch.TextRNN().state_dict()
    torch.save({k: v for k, v in full.items() if k.startswith("fc.")}, tmp_path / "part.pth")  # 2 of 25
    args = ["--map", str(tmp_path / "map.json"), "--out", str(tmp_path / "out.ckpt")]
    code, report = _convert(pools, str(tmp_path / "part.pth"), *args)
    assert code == 1 and not report["written"] and not (tmp_path / "out.ckpt").exists()
    assert not report["unplaced"]
    assert {name.partition(".")[0] for name in report["uncovered"]} == {"embed", "lstm", "gru", "norm"}
    assert len(report["uncovered"]) == 19 and report["uncovered"]["lstm.weight_ih_l{l}"] == "lstm.weight_ih_l{l}"
    assert report["uncovered"]["embed.embedding_table"] == "embed.weight"
    code, report = _convert(pools, str(tmp_path / "part.pth"), *args, "--allow-partial")
    assert code == 0 and report["written"] and len(_ms_checkpoint(tmp_path / "out.ckpt")) == 2

    # float64 weights: written as float32, and MindSpore's cell loads them
    torch.save(rnn_torch.TextRNN().double().state_dict(), tmp_path / "double.pth")
    code, report = _convert(pools, str(tmp_path / "double.pth"), *args)
    assert code == 0 and report["written"], report
    assert any("25 float64 tensor(s) written as float32" in n for n in report["notes"])
    load = ("import sys, mindspore\nsys.path.insert(0, sys.argv[2])\nimport rnn_ms\n"
            "net = rnn_ms.TextRNN()\n"
            "missing, _ = mindspore.load_param_into_net(net, mindspore.load_checkpoint(sys.argv[1]), strict_load=True)\n"
            "print(len(missing), str(net.embed.embedding_table.dtype))\n")
    done = subprocess.run([sys.executable, "-c", load, str(tmp_path / "out.ckpt"), str(MODELS)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split()[-2:] == ["0", "Float32"], done.stderr[-2000:]

    # a resolved map states shapes and dtypes: a wider network's weights and an integer tensor are refused
    resolved = {"format": "torch2ms-weight-map", "version": 1, "torch_source": "", "ported_source": "",
                "roots": {"Net": {"entries": [
                    {"torch": "fc.weight", "ms": "fc.weight", "shape": [5, 12], "dtype": "float32"},
                    {"torch": "fc.bias", "ms": "fc.bias", "shape": [5], "dtype": "float32"}], "rules": []}}}
    (tmp_path / "resolved.json").write_text(json.dumps(resolved), encoding="utf-8")
    torch.save({"fc.weight": torch.zeros(5, 16), "fc.bias": torch.zeros(5, dtype=torch.int64)}, tmp_path / "wide.pth")
    code, report = _convert(pools, str(tmp_path / "wide.pth"), "--map", str(tmp_path / "resolved.json"), "--out",
                            str(tmp_path / "wide.ckpt"))
    assert code == 1 and not (tmp_path / "wide.ckpt").exists()
    assert report["unplaced"]["fc.weight"].startswith("shape mismatch: the checkpoint's fc.weight is [5, 16]")
    assert report["unplaced"]["fc.bias"] == ("dtype mismatch: the checkpoint's fc.bias is int64, the map expects "
                                             "float32 for fc.bias")
    assert report["uncovered"] == {"fc.weight": "fc.weight", "fc.bias": "fc.bias"}

    # the text output groups one reason given for many tensors into one line
    torch.save(convnet_torch.small_resnet(num_classes=7).state_dict(), tmp_path / "convnet.pth")
    write_map(_m("convnet_torch.py"), _m("convnet_ms.py"), str(tmp_path / "convnet.map.json"))
    argv = [str(tmp_path / "convnet.pth"), "--map", str(tmp_path / "convnet.map.json"), "--out",
            str(tmp_path / "convnet.ckpt")]
    out = io.StringIO()
    assert convert.run(_parser(convert.add_arguments).parse_args(argv), out, pools) == 0
    dropped = [line for line in out.getvalue().splitlines() if line.startswith("dropped")]
    assert dropped == ["dropped 10 tensors (*.num_batches_tracked): MindSpore's BatchNorm counts no batches "
                       "(it uses momentum only)"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_convert_weights_reverse_round_trips_a_state_dict(pools, tmp_path: Path) -> None:
    """torch -> MindSpore -> torch through one map gives back every tensor MindSpore keeps, bit for bit: the
    transforms undone (Conv1d's unit axis), a tied tensor under both its torch names."""
    import torch

    sys.path.insert(0, str(MODELS))
    try:
        import convnet_torch
        import transformer_torch
    finally:
        sys.path.remove(str(MODELS))
    for name, net, factory in (("convnet", convnet_torch.small_resnet(num_classes=7), "convnet"),
                               ("lm", transformer_torch.TinyLM(), "transformer")):
        state = net.state_dict()
        torch.save(state, tmp_path / f"{name}.pth")
        write_map(_m(f"{factory}_torch.py"), _m(f"{factory}_ms.py"), str(tmp_path / f"{name}.map.json"))
        args = ["--map", str(tmp_path / f"{name}.map.json")]
        code, report = _convert(pools, str(tmp_path / f"{name}.pth"), *args, "--out", str(tmp_path / f"{name}.ckpt"))
        assert code == 0, report
        code, report = _convert(pools, str(tmp_path / f"{name}.ckpt"), *args, "--reverse", "--out",
                                str(tmp_path / f"{name}.back.safetensors"))
        assert code == 0 and report["written"] and not report["unplaced"], report
        from safetensors.torch import load_file

        back = load_file(str(tmp_path / f"{name}.back.safetensors"))
        kept = {k for k in state if not k.endswith("num_batches_tracked") and k != "pos"}  # MindSpore's checkpoint
        assert set(back) == kept, set(back) ^ kept
        assert all(torch.equal(back[k], state[k]) for k in kept)
    assert torch.equal(back["head.weight"], back["embed.weight"])
    # a name the map does not know stays unplaced: exit 1 and nothing written
    code, report = _convert(pools, str(tmp_path / "lm.ckpt"), "--map", str(tmp_path / "convnet.map.json"),
                            "--reverse", "--out", str(tmp_path / "wrong.pt"))
    assert code == 1 and not (tmp_path / "wrong.pt").exists() and report["unplaced"]
