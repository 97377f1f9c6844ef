"""Regenerate src/torch2ms/data/inventory.json from the installed torch.

Run: python scripts/gen_inventory.py   (needs the `verify` extra: torch==2.13.0)
The scanner itself never imports torch; it reads this file.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import torch

NAMESPACES = [
    "torch", "torch.nn", "torch.nn.functional", "torch.Tensor", "torch.linalg", "torch.fft",
    "torch.special", "torch.optim", "torch.optim.lr_scheduler", "torch.nn.init",
    "torch.distributions", "torch.utils.data", "torch.amp", "torch.distributed", "torch.autograd",
    "torch.cuda", "torch.nn.utils", "torch.sparse",
]


def public(obj: object) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def namespace_callables(name: str) -> list[str]:
    if name == "torch.Tensor":
        obj: object = torch.Tensor
    else:
        obj = importlib.import_module(name)
    names = getattr(obj, "__all__", None) if name != "torch.Tensor" else None
    out = []
    for attr in sorted(set(names or public(obj))):
        if attr.startswith("_"):
            continue
        try:
            value = getattr(obj, attr)
        except Exception:
            continue
        if inspect.ismodule(value) or not callable(value):
            continue
        out.append(attr)
    return out


def main() -> None:
    tensor_members = [n for n in dir(torch.Tensor) if not n.startswith("_")]
    module_members = [n for n in dir(torch.nn.Module) if not n.startswith("_")]
    data = {
        "torch_version": torch.__version__.split("+")[0],
        "tensor_members": sorted(tensor_members),
        "module_members": sorted(module_members),
        "top_level": public(torch),
        "namespaces": {ns: namespace_callables(ns) for ns in NAMESPACES},
    }
    out = Path(__file__).resolve().parent.parent / "src" / "torch2ms" / "data" / "inventory.json"
    out.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out.name}: {sum(len(v) for v in data['namespaces'].values())} public callables")


if __name__ == "__main__":
    main()
