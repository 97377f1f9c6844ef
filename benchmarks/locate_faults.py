"""Print whether `verify-model --locate` finds a fault planted in a port: the layer, the port's line, the rewrite.

Usage: python benchmarks/locate_faults.py [--only NAME]

`torch2ms migrate` ports benchmarks/data/locate_nets.py (a convolutional network and a sequence
network). The correct port must pass `verify-model`, in inference (PyNative and GRAPH) and with a
training step. Then each of 20 faults is planted in a copy of the port, one at a time, at one line: a
scaled input, a swapped activation, a wrong stride, a dropped bias, a transposed weight, a wrong
epsilon, a wrong pooling, a changed default, swapped arguments, a dropped layer or residual,
reordered layers, a wrong reduction, a cut gradient (the backward)... `verify-model` must fail, and
its location counts as found when it names the layer the fault is at (the layer itself, or the layer
whose inputs the code before it changed) and a line range of the port that holds the planted line.
For a fault on a line `migrate` rewrote, the rewrite behind the line (NAME.migrate.json) must be named
too. Prints one row per fault and the totals.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NETS = ROOT / "benchmarks" / "data" / "locate_nets.py"
INPUTS = {"ConvNet": "2,3,8,8", "SeqNet": "2,6:int64:0:30"}


@dataclass(frozen=True)
class Fault:
    name: str
    net: str
    old: str  # text of the port (once in it) ...
    new: str  # ... replaced by this
    layers: tuple[str, ...]  # the layer(s) a right location names
    train: bool = False  # a fault of the backward: found by the training step


FAULTS = [
    Fault("scaled input", "ConvNet", "x = self.block(x)", "x = self.block(x * 1.01)", ("block",)),
    Fault("swapped activation", "ConvNet", "self.act = mindspore.mint.nn.ReLU()\n        self.pool",
          "self.act = mindspore.mint.nn.Sigmoid()\n        self.pool", ("act",)),
    Fault("wrong stride", "ConvNet", "3, stride=1, padding=1", "3, stride=2, padding=1", ("stem",)),
    Fault("dropped bias", "ConvNet", "self.fc = mindspore.mint.nn.Linear(8 * 4 * 4, 32)",
          "self.fc = mindspore.mint.nn.Linear(8 * 4 * 4, 32, bias=False)", ("fc",)),
    Fault("wrong epsilon (LayerNorm)", "ConvNet", "epsilon=1e-05", "epsilon=1e-03", ("ln",)),
    Fault("wrong epsilon (BatchNorm)", "ConvNet", "self.norm = mindspore.nn.BatchNorm2d(8)",
          "self.norm = mindspore.nn.BatchNorm2d(8, eps=1e-3)", ("norm",)),
    Fault("wrong pooling", "ConvNet", "mindspore.nn.MaxPool2d(2, stride=2, pad_mode='pad')",
          "mindspore.nn.AvgPool2d(2, stride=2, pad_mode='pad')", ("pool",)),
    Fault("changed default (has_bias)", "ConvNet", "pad_mode='pad', has_bias=True)\n        self.bn",
          "pad_mode='pad')\n        self.bn", ("block.conv",)),
    Fault("dropped residual", "ConvNet", "return self.act(y + x)", "return self.act(y)", ("block.act", "block")),
    Fault("reordered layers", "ConvNet", "self.pool(self.act(self.norm(self.stem(x))))",
          "self.pool(self.norm(self.act(self.stem(x))))", ("act", "norm")),
    Fault("dropped layer", "ConvNet", "x = self.ln(self.act2(self.fc(x)))", "x = self.ln(self.fc(x))", ("act2",)),
    Fault("cut gradient", "ConvNet", "x = self.block(x)", "x = self.block(mindspore.ops.stop_gradient(x))",
          ("norm", "stem"), train=True),
    Fault("transposed weight", "SeqNet", "return x @ self.w", "return x @ self.w.T", ("mix",)),
    Fault("swapped arguments", "SeqNet", "mindspore.mint.cat([a, b], dim=-1)", "mindspore.mint.cat([b, a], dim=-1)",
          ("gate",)),
    Fault("changed slope", "SeqNet", "LeakyReLU(0.01)", "LeakyReLU(0.1)", ("act",)),
    Fault("changed dim (Softmax)", "SeqNet", "Softmax(dim=-1)", "Softmax(dim=0)", ("soft",)),
    Fault("wrong reduction", "SeqNet", ".mean(dim=1)", ".sum(dim=1)", ("out",)),
    Fault("wrong constant", "SeqNet", "(1 - g) * b", "(1 + g) * b", ("out",)),
    Fault("dropped layer (gate)", "SeqNet", "g = self.sig(self.gate(", "g = (self.gate(", ("sig",)),
    Fault("cut gradient (sequence)", "SeqNet", "a = self.act(self.proj(h))",
          "a = self.act(self.proj(mindspore.ops.stop_gradient(h)))", ("embed",), train=True),
]


def _lines(where: str | None) -> tuple[str, int, int] | None:
    if not where:
        return None
    path, _, lines = where.rpartition(":")
    lo, _, hi = lines.partition("-")
    if not lo.isdigit():
        return None
    return path, int(lo), int(hi) if hi.isdigit() else int(lo)


def _holds(first: dict[str, Any], path: Path, line: int) -> bool:
    """Whether a line range the location names (the port's lines, its call, its layer's code) holds `line`."""
    for key in ("port", "port_call", "port_code", "port_built"):
        where = _lines(first.get(key))
        if where and Path(where[0]).resolve() == path.resolve() and where[1] <= line <= where[2]:
            return True
    return False


def _check(pools: dict[str, Any], original: Path, ported: Path, net: str, **options: Any) -> tuple[int, dict[str, Any]]:
    from torch2ms.verify.model import check

    return check(f"{original}:{net}", f"{ported}:{net}", [INPUTS[net]], pools,
                 map=str(ported)[:-3] + ".weights.json", weights=str(original.parent / f"{net}.pth"), **options)


def _checkpoints(original: Path) -> None:
    """A trained-looking checkpoint of each network beside it: BatchNorm's statistics and affine tensors away
    from their initial 0 and 1, so that a BatchNorm is no plain identity in inference."""
    import torch

    sys.path.insert(0, str(original.parent))
    try:
        import nets
    finally:
        sys.path.remove(str(original.parent))
    generator = torch.Generator().manual_seed(7)
    for net in INPUTS:
        torch.manual_seed(7)
        state = getattr(nets, net)().state_dict()
        for key, value in state.items():
            if key.endswith(("running_mean", "bias")):
                state[key] = torch.randn(value.shape, generator=generator) * 0.5
            elif key.endswith("running_var"):
                state[key] = torch.rand(value.shape, generator=generator) + 0.5
        torch.save(state, original.parent / f"{net}.pth")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="run the faults whose name contains this text")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from torch2ms.cli import main as cli
    from torch2ms.migrate.provenance import provenance_path
    from torch2ms.verify.model import side_pool

    start = time.perf_counter()
    pools = {"torch": side_pool("torch", timeout=300), "mindspore": side_pool("mindspore", timeout=300)}
    try:
        with tempfile.TemporaryDirectory(prefix="torch2ms-locate-") as tmp:
            work = Path(tmp)
            (work / "src").mkdir()
            shutil.copy(NETS, work / "src" / "nets.py")
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(["migrate", str(work / "src" / "nets.py"), "--out", str(work / "port"), "--isolated", "-q"])
            if code != 0:
                print(f"migrate exited {code}")
                return 1
            original, port = work / "src" / "nets.py", work / "port" / "nets.py"
            _checkpoints(original)
            passed = total = 0
            for net in INPUTS:
                for train in (False, True):
                    code, result = _check(pools, original, port, net, train_step=train)
                    total += 1
                    passed += code == 0
                    print(f"correct port {net}{' with a training step' if train else ''}: {result.get('status')}"
                          + ("" if code == 0 else f" {result.get('problems', [])[:3]}"))
            text = port.read_text(encoding="utf-8")
            found = found_rewrite = on_rewritten = failed = 0
            faults = [f for f in FAULTS if not options.only or options.only in f.name]
            for number, fault in enumerate(faults):
                if text.count(fault.old) != 1:
                    print(f"{fault.name}: the port does not hold {fault.old!r} once; not run")
                    continue
                case = work / f"fault{number}"
                case.mkdir()
                broken = case / "nets.py"
                broken.write_text(text.replace(fault.old, fault.new), encoding="utf-8")
                for suffix in (".weights.json", ".migrate.json"):
                    shutil.copy(str(port)[:-3] + suffix, str(broken)[:-3] + suffix)
                line = text[:text.index(fault.old)].count("\n") + 1
                code, result = _check(pools, original, broken, fault.net, train_step=fault.train, modes="pynative")
                failed += code == 1
                first = (result.get("locate") or {}).get("first") or {}
                named = first.get("layer") in fault.layers or first.get("after") in fault.layers
                here = _holds(first, broken, line)
                rewritten = any(item["line"] == line for item in _provenance(provenance_path(str(port))))
                rewrites = [r for item in first.get("rewrites") or [] if item["line"] == line
                            for r in item["rewrites"]]
                ok = code == 1 and named and here
                found += ok
                on_rewritten += rewritten
                found_rewrite += bool(ok and rewritten and rewrites)
                print(f"{fault.name:28} {fault.net:8} exit {code}  {first.get('kind', '-'):8} "
                      f"{first.get('layer') or '-':10} line {line:3} "
                      f"{'FOUND' if ok else 'MISSED'}"
                      + (f"  rewrite: {rewrites[0]['torch_api']} -> {rewrites[0]['mindspore_api']}" if rewrites else "")
                      + ("" if ok else f"  ({first.get('message', result.get('problems'))})"))
            print(f"correct ports passing: {passed}/{total}")
            print(f"faulty ports failing: {failed}/{len(faults)}")
            print(f"faults located at the right layer and line: {found}/{len(faults)}")
            print(f"faults on a line migrate rewrote, located with that rewrite: {found_rewrite}/{on_rewritten}")
            print(f"time: {time.perf_counter() - start:.0f} s")
            return 0 if passed == total and found >= len(faults) - 1 else 1
    finally:
        for pool in pools.values():
            pool.close()


def _provenance(path: str) -> list[dict[str, Any]]:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return list(json.load(handle)["lines"])
    except (OSError, ValueError, KeyError):
        return []


if __name__ == "__main__":
    sys.exit(main())
