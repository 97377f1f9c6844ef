"""Data flow between functions, classes and files (torch2ms/dataflow.py, the resolver's symbols, the project pass)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.api import scan_paths
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.model import Confidence, FileResult


def _apis(result: FileResult, line: int) -> set[tuple[str | None, str]]:
    """(API, confidence) of the mapping findings (TMS1xx/TMS2xx) on `line`."""
    return {(d.torch_api, d.confidence.value) for d in result.diagnostics
            if d.span.start_line == line and d.code.startswith(("TMS1", "TMS2"))}


def _line(source: str, marker: str) -> int:
    for number, text in enumerate(source.splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(marker)


def _scan(source: str) -> tuple[str, FileResult]:
    source = textwrap.dedent(source)
    return source, scan_source(source, "m.py")


@pytest.mark.parametrize("marker, api", [
    ("# annotated-return", "torch.Tensor.view"),
    ("# inferred-return", "torch.Tensor.transpose"),
    ("# method-return", "torch.Tensor.view"),
    ("# chain-reshape", "torch.Tensor.reshape"),
    ("# chain-reshape", "torch.Tensor.contiguous"),
    ("# tuple-return", "torch.Tensor.permute"),
    ("# buffer", "torch.Tensor.to"),
    ("# buffer-size", "torch.Tensor.size"),
    ("# dataclass-field", "torch.Tensor.mean"),
    ("# parameter-from-caller", "torch.Tensor.view"),
    ("# registry-default", "torch.Tensor.reshape"),
    ("# super-forward", "torch.Tensor.permute"),
])
def test_tensor_receivers_through_helpers(marker: str, api: str) -> None:
    source, result = _scan("""
        from dataclasses import dataclass
        import torch
        from torch import nn


        def helper(x) -> torch.Tensor:
            return x


        def rot(x):
            return torch.cat([x, x])


        def split(x):
            return x[0], x[1]


        def attention(q, k):
            return torch.matmul(q, k), None


        def window(x, size):
            return x.view(-1, size)  # parameter-from-caller


        @dataclass
        class Output:
            hidden: torch.Tensor


        class Norm(nn.LayerNorm):
            def forward(self, x):
                x = super().forward(x).permute(0, 1)  # super-forward
                return x


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("inv_freq", torch.ones(4))
                self.pos = nn.Buffer(torch.arange(4))

            def _index(self):
                return torch.arange(4)

            def forward(self, x, registry):
                a = helper(x).view(2, 2)  # annotated-return
                b = rot(x).transpose(0, 1)  # inferred-return
                c = self._index().view(-1)  # method-return
                d = rot(x).reshape(2, -1).contiguous()  # chain-reshape
                first, second = split(x)
                e = second.permute(0)  # tuple-return
                f = self.inv_freq.to(x.dtype)  # buffer
                g = self.pos.size()  # buffer-size
                out = Output(x)
                h = out.hidden.mean()  # dataclass-field
                w = window(x, 2)
                fn = registry.get("impl", attention)
                o, weights = fn(x, x)
                o = o.reshape(4)  # registry-default
                return a
    """)
    assert (api, "high") in _apis(result, _line(source, marker))


def test_misnamed_receivers_are_tensor_methods() -> None:
    """A registered buffer's methods are Tensor methods, not nn.Module's or nn.Buffer's."""
    source, result = _scan("""
        import torch
        from torch import nn


        class Rope(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("inv_freq", torch.ones(4))
                self.position_ids = nn.Buffer(torch.arange(4))

            def forward(self, x):
                a = self.inv_freq.to(x.device)  # buffer-to
                return self.position_ids.size()  # buffer-size
    """)
    apis = {d.torch_api for d in result.diagnostics}
    assert "torch.nn.Module.to" not in apis and "torch.nn.Buffer.size" not in apis
    assert ("torch.Tensor.to", "high") in _apis(result, _line(source, "# buffer-to"))
    assert ("torch.Tensor.size", "high") in _apis(result, _line(source, "# buffer-size"))


@pytest.mark.parametrize("marker, api", [
    ("# default-class", "torch.nn.BatchNorm2d"),
    ("# or-default", "torch.nn.GELU"),
    ("# partial", "torch.nn.Conv2d"),
    ("# class-variable", "torch.nn.ReLU"),
])
def test_layers_passed_as_values(marker: str, api: str) -> None:
    source, result = _scan("""
        import functools
        from functools import partial
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self, dim, norm_layer=nn.BatchNorm2d, act_layer=None):
                super().__init__()
                self.norm = norm_layer(dim)  # default-class
                act_layer = act_layer or nn.GELU
                self.act = act_layer()  # or-default
                conv = partial(nn.Conv2d, kernel_size=3)
                self.conv = conv(dim, dim)  # partial
                wide = functools.partial(nn.Linear, bias=False)
                self.fc = wide(dim, dim)
                layer = nn.ReLU
                self.relu = layer(inplace=True)  # class-variable
    """)
    assert (api, "high") in _apis(result, _line(source, marker))


def test_values_that_are_not_tensors_stay_unreported() -> None:
    source, result = _scan("""
        import torch


        def names(x):
            return {"a": x}


        def count(items):
            return items.count(1)  # list


        def run(x: torch.Tensor):
            d = names(x)
            v = d.values()  # dict
            n = count([1, 2])
            return torch.relu(x)
    """)
    for marker in ("# dict", "# list"):
        assert _apis(result, _line(source, marker)) == set()


def test_a_parameter_with_callers_passing_other_things_is_not_a_tensor() -> None:
    source, result = _scan("""
        import torch


        def shape_of(x):
            return x.view(-1)  # mixed


        def run(t: torch.Tensor):
            shape_of(t)
            shape_of([1, 2])
    """)
    assert all(c != "high" for _, c in _apis(result, _line(source, "# mixed")))


def test_a_parameter_nobody_calls_keeps_its_low_confidence_finding() -> None:
    source, result = _scan("""
        import torch


        def lonely(thing):
            return thing.unsqueeze(0)  # lonely
    """)
    assert _apis(result, _line(source, "# lonely")) == {("torch.Tensor.unsqueeze", Confidence.LOW.value)}


def _project(tmp_path: Path, files: dict[str, str]) -> dict[str, FileResult]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    results = scan_paths([str(tmp_path)], Config(), jobs=1)
    return {Path(r.path).relative_to(tmp_path).as_posix(): r for r in results}


LAYERS = """
    import torch
    from torch import nn


    class Mlp(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            return self.fc(x)


    def create_conv(dim):
        return nn.Conv2d(dim, dim, 3)


    def rotate(x):
        return torch.cat([x, x])


    def window(x, size):
        return x.unsqueeze(size)  # caller-in-other-file


    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("inv_freq", torch.ones(4))
            self.proj = create_conv(4)
"""

MODEL = """
    import torch
    from .layers import Base, Mlp, create_conv, rotate, window


    class Net(Base):
        def __init__(self, dim):
            super().__init__()
            self.mlp = Mlp(dim)
            self.conv = create_conv(dim)

        def forward(self, x):
            a = self.mlp(x).reshape(3)  # imported-class
            b = self.conv(x).permute(0, 2, 1, 3).contiguous()  # helper-built
            c = rotate(x).view(-1)  # imported-function
            d = self.inv_freq.to(x.dtype)  # inherited-buffer
            e = self.proj(x).flatten(1)  # inherited-submodule
            f = window(x, 2)
            return a
"""


@pytest.mark.parametrize("marker, api", [
    ("# imported-class", "torch.Tensor.reshape"),
    ("# helper-built", "torch.Tensor.permute"),
    ("# helper-built", "torch.Tensor.contiguous"),
    ("# imported-function", "torch.Tensor.view"),
    ("# inherited-buffer", "torch.Tensor.to"),
    ("# inherited-submodule", "torch.Tensor.flatten"),
])
def test_across_files(tmp_path: Path, marker: str, api: str) -> None:
    results = _project(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/model.py": MODEL})
    assert (api, "high") in _apis(results["pkg/model.py"], _line(textwrap.dedent(MODEL), marker))


def test_a_parameter_takes_what_callers_in_other_files_pass(tmp_path: Path) -> None:
    results = _project(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/model.py": MODEL})
    line = _line(textwrap.dedent(LAYERS), "# caller-in-other-file")
    assert _apis(results["pkg/layers.py"], line) == {("torch.Tensor.unsqueeze", "high")}
    alone = scan_source(textwrap.dedent(LAYERS), "layers.py")  # without the project: a guess
    assert _apis(alone, line) == {("torch.Tensor.unsqueeze", "low")}


def test_project_findings_are_the_same_with_and_without_the_cache(tmp_path: Path) -> None:
    from torch2ms.cache import Cache
    from torch2ms.mappings import load_table

    files = {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/model.py": MODEL}
    fresh = _project(tmp_path, files)
    cache = Cache(tmp_path / "cache", Config(), load_table())
    first = scan_paths([str(tmp_path / "pkg")], Config(), cache=cache)
    cache = Cache(tmp_path / "cache", Config(), load_table())
    second = scan_paths([str(tmp_path / "pkg")], Config(), cache=cache)
    assert cache.hits == 3
    for results in (first, second):
        by_name = {Path(r.path).relative_to(tmp_path).as_posix(): r.diagnostics for r in results}
        assert by_name == {name: r.diagnostics for name, r in fresh.items()}


def test_a_comparison_of_a_parameter_is_what_the_parameter_is() -> None:
    """`(relative_position > 0).to(torch.long)` (T5's position buckets, a static method): a comparison of a
    tensor parameter is a tensor, so its methods are Tensor methods; of a number, nothing torch."""
    source, result = _scan("""
        import torch
        from torch import nn


        class Attention(nn.Module):
            @staticmethod
            def bucket(relative_position, limit):
                ahead = (relative_position > 0).to(torch.long)  # compared-tensor
                small = (limit < 8).bit_length()  # compared-number
                return ahead, small

            def bias(self, q, k):
                position = torch.arange(k)[None, :] - torch.arange(q)[:, None]
                return self.bucket(position, 16)
    """)
    assert ("torch.Tensor.to", "high") in _apis(result, _line(source, "# compared-tensor"))
    assert _apis(result, _line(source, "# compared-number")) == set()


def test_the_torch_data_model_the_resolver_uses_is_table_data() -> None:
    """Which tensor attributes hold tensors and which Module methods return the module are meta.yaml's facts:
    without them the same code resolves less (no name list in the resolver)."""
    from dataclasses import replace

    from torch2ms.config import Config
    from torch2ms.engine import scan_source
    from torch2ms.mappings import MappingTable, load_table

    table = load_table()
    source = ("import torch\nimport torch.nn as nn\n\nhead = nn.Linear(4, 2).eval()\nw = torch.ones(3)\n"
              "g = w.grad.sign()\nh = head.weight.abs()\n")

    def apis(t: MappingTable) -> set[str]:
        return {d.torch_api for d in scan_source(source, "m.py", Config(), t).diagnostics}

    assert {"torch.Tensor.sign", "torch.Tensor.abs"} <= apis(table)
    bare = replace(table, meta=replace(table.meta, tensor_valued_attributes=frozenset(), module_self_methods=frozenset()),
                   digest=table.digest + "-bare-meta")
    assert not {"torch.Tensor.sign", "torch.Tensor.abs"} & apis(bare)


def test_a_parameter_a_method_only_tensors_have_is_called_on_is_a_tensor() -> None:
    """`w.bernoulli_(p)` proves `w` a tensor, so every method the function calls on it is a Tensor method
    (nobody in the file calls the function); a parameter the body binds again, or one a nested function binds,
    proves nothing."""
    source, result = _scan("""
        import torch


        def sparsify(w, keep):
            w.bernoulli_(keep)
            w.div_(keep)
            return w.sum()  # proven


        def rebound(w, keep):
            w.bernoulli_(keep)
            w = w.tolist()
            return w.count(1)  # rebound


        def shadowed(w):
            def inner(w):
                return w.sqrt_()
            return w.unsqueeze(0)  # shadowed
    """)
    assert _apis(result, _line(source, "w.div_(keep)")) == {("torch.Tensor.div_", Confidence.HIGH.value)}
    assert _apis(result, _line(source, "# proven")) == {("torch.Tensor.sum", Confidence.HIGH.value)}
    assert _apis(result, _line(source, "# rebound")) == set()
    assert _apis(result, _line(source, "# shadowed")) == {("torch.Tensor.unsqueeze", Confidence.LOW.value)}


def test_a_proof_call_is_found_however_the_method_name_is_written() -> None:
    """The resolver walks a body for proof calls only where a line of it names a proof method: a name split
    from its receiver by a line continuation, a call in a nested function's default, or a name spelt with
    characters Python normalises to it (a non-ASCII text) still proves the parameter; a longer name that ends
    in a proof method's name does not."""
    source, result = _scan("""
        import torch


        def scaled(g, s):
            g.\\
                mul_(s)
            return g.exp()  # continued


        def nested(h):
            def inner(k=h.clamp_(0, 1)):
                return k
            return h.log()  # default


        def lookalike(v):
            v.my_zero_()
            return v.exp()  # lookalike
    """)
    assert _apis(result, _line(source, "# continued")) == {("torch.Tensor.exp", Confidence.HIGH.value)}
    assert _apis(result, _line(source, "# default")) == {("torch.Tensor.log", Confidence.HIGH.value)}
    assert _apis(result, _line(source, "# lookalike")) == {("torch.Tensor.exp", Confidence.LOW.value)}
    source, result = _scan("""
        import torch


        def fill(w, a, b):  # rempli: une m\u00e9thode
            w.\uff55niform_(a, b)
            return w.sum()  # normalised
    """)
    assert _apis(result, _line(source, "# normalised")) == {("torch.Tensor.sum", Confidence.HIGH.value)}


def test_proof_lines_are_the_lines_naming_a_proof_method() -> None:
    from torch2ms.resolve import _proof_lines
    from torch2ms.source import SourceText

    proof = frozenset({"add_", "uniform_"})
    text = "x.add_(1)\nmy_add_ = 2\nadd_\r\ny.uniform_ (0)\nadd_x = 1\n"
    assert _proof_lines(SourceText(text), proof) == [1, 3, 4]
    accented = "# \u00e9\nx = 1\n"
    assert _proof_lines(SourceText(accented), proof) == [1, 2, 3]  # any line: names may be spelt otherwise
    assert _proof_lines(SourceText(text), proof | {"exp"}) == [1, 2, 3, 4, 5, 6]


def test_the_methods_that_prove_a_tensor_are_tensor_methods_no_module_has() -> None:
    from torch2ms.mappings import load_table

    table = load_table()
    proof = table.meta.proof_methods
    assert "uniform_" in proof and "erfinv_" in proof and "copy_" not in proof
    assert proof <= table.inventory.tensor_members
    assert not proof & table.inventory.module_members
    assert not proof & table.meta.ambiguous_methods


def test_an_item_of_a_layer_sequence_is_a_layer_whose_call_is_a_tensor() -> None:
    source, result = _scan("""
        import torch
        from torch import nn


        class Heads(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3) for _ in range(2)])
                self.seq = nn.Sequential(nn.ReLU(), nn.Tanh())
                self.named = nn.ModuleDict({"a": nn.ReLU()})

            def forward(self, x):
                outs = [conv(x).amax(dim=2) for conv in self.convs]  # comprehension
                for layer in self.seq:
                    x = layer(x).clamp(min=0)  # loop
                keys = [name.split("_") for name in self.named]  # names
                return outs, x, keys
    """)
    assert _apis(result, _line(source, "# comprehension")) == {("torch.Tensor.amax", "high")}
    assert _apis(result, _line(source, "# loop")) == {("torch.Tensor.clamp", "high")}
    assert _apis(result, _line(source, "# names")) == set()  # a ModuleDict iterates over its names
