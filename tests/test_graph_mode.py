"""TMS441: each rule of src/torch2ms/data/graph_mode.yaml is a construct that MindSpore's GRAPH mode really
rejects (compiled here with the installed MindSpore), and the port check reports it in construct and in
what construct calls."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

from torch2ms.engine import scan_source
from torch2ms.portcheck.graph import load_rules

_MODULE = '''\
import mindspore
import numpy as np
from mindspore import nn, ops


class Net({base}):
    def __init__(self):
        super().__init__()
        self.p = mindspore.Parameter(ops.ones((2, 3)))

    def construct(self, x):
{body}
'''
_BODY_LINE = 12  # the first line of construct's body in _MODULE


def _module(body: str, base: str = "nn.Cell") -> str:
    """A module whose Net (deriving from `base`) runs `body` as construct."""
    return _MODULE.format(body=textwrap.indent(body, " " * 8), base=base)


def _compile(path: Path, text: str) -> Any:
    """Net()(x) in GRAPH mode, from a real file (the graph compiler reads construct's source)."""
    import mindspore
    import numpy as np

    warnings.simplefilter("ignore")
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"graph_case_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (the graph compiler looks the module up by name)
    spec.loader.exec_module(module)
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    here = os.getcwd()
    os.chdir(path.parent)  # (a failed compile writes its analysis files, rank_0/, into the working folder)
    try:
        return module.Net()(mindspore.Tensor(np.ones((2, 3), np.float32)))
    finally:
        os.chdir(here)
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        del sys.modules[spec.name]


def _graph_findings(text: str) -> list[int]:
    return [d.span.start_line for d in scan_source(text, "net.py").diagnostics if d.code == "TMS441"]


RULES = load_rules()


@pytest.mark.needs_mindspore
@pytest.mark.parametrize("rule", RULES, ids=[r.node or r.member + (":" + r.cell if r.cell else "") for r in RULES])
def test_each_rule_is_rejected_by_graph_mode_and_reported(rule: Any, tmp_path: Path) -> None:
    text = _module(rule.example, rule.cell or "nn.Cell")
    lines = _graph_findings(text)
    assert lines and all(_BODY_LINE <= line < _BODY_LINE + rule.example.count("\n") for line in lines), lines
    with pytest.raises(Exception, match=rule.raises):  # noqa: B017 - the compiler's own error types vary
        _compile(tmp_path / f"case_{rule.node or rule.member}.py", text)


@pytest.mark.needs_mindspore
def test_code_graph_mode_compiles_has_no_finding(tmp_path: Path) -> None:
    body = "out = [x * i for i in range(3)]\nd = {'a': 1}\nassert x.shape[0] == 2\nreturn ops.stack(out) + d['a']\n"
    text = _module(body)
    assert _graph_findings(text) == []
    assert _compile(tmp_path / "ok.py", text).shape == (3, 2, 3)


def test_what_construct_calls_is_graph_code_and_other_methods_are_not() -> None:
    text = textwrap.dedent('''\
        import mindspore
        from mindspore import nn


        def helper(x):
            try:
                return x + 1
            except ValueError:
                return x


        class Net(nn.Cell):
            def prepare(self):
                import math
                return math.pi

            def step(self, x):
                return helper(x)

            def construct(self, x):
                return self.step(x)


        class Child(Net):
            def extra(self):
                del self.p
    ''')
    found = {(d.span.start_line, d.message) for d in scan_source(text, "net.py").diagnostics if d.code == "TMS441"}
    assert [line for line, _ in found] == [6]
    assert "(in helper, called from Net.construct)" in next(iter(found))[1]


@pytest.mark.needs_mindspore
def test_member_rules_match_their_argument_shapes_only(tmp_path: Path) -> None:
    """transpose with the whole permutation (or a 2-D tensor's swap written as one) compiles and has no finding; two
    axes other than that are reported, and on a 2-D tensor GRAPH mode silently keeps the tensor as it is."""
    body = "y = x.transpose(1, 0)\nz = x.reshape(1, 2, 3).transpose(0, 2, 1)\nreturn y.sum() + z.sum() + x.swapaxes(0, 1)\n"
    text = _module(body)
    assert _graph_findings(text) == []
    assert _compile(tmp_path / "ok.py", text).shape == (3, 2)
    swapped = _module("return x.transpose(0, 1)\n")
    assert _graph_findings(swapped) == [_BODY_LINE]
    assert _compile(tmp_path / "kept.py", swapped).shape == (2, 3)  # torch and PyNative: (3, 2)


def test_a_member_rule_is_graph_codes_only() -> None:
    text = textwrap.dedent('''\
        from mindspore import nn, ops


        def widen(x):
            return x.expand(4, 2, 3).transpose(1, 2)


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.transpose = ops.Transpose()

            def construct(self, x):
                y = self.transpose(x, (0, 2, 1)) + ops.transpose(x, (0, 2, 1))
                return x.broadcast_to((4, 2, 3)).swapaxes(1, 2) + y
    ''')
    assert _graph_findings(text) == []  # a module's function and the Cell's own operator are not a tensor's method


@pytest.mark.needs_mindspore
def test_a_rule_on_the_cells_own_method_holds_for_its_base_only(tmp_path: Path) -> None:
    """A CellDict subclass cannot iterate its own items() in GRAPH mode; a Cell holding a CellDict iterates the
    attribute's, and a plain Cell's own items() (a method of the file's) is not judged."""
    body = "for name, cell in self.items():\n    x = cell(x)\nreturn x + self.p\n"
    assert _graph_findings(_module(body, "mindspore.nn.CellDict")) == [_BODY_LINE]
    held = _module("for name, cell in self.cells_by_name.items():\n    x = cell(x)\nreturn x + self.p\n").replace(
        "self.p = mindspore.Parameter(ops.ones((2, 3)))",
        "self.p = mindspore.Parameter(ops.ones((2, 3))); self.cells_by_name = nn.CellDict({'act': nn.ReLU()})")
    assert _graph_findings(held) == []
    assert _compile(tmp_path / "held.py", held).shape == (2, 3)
    own = _module(body).replace("    def construct", "    def items(self):\n        return ()\n\n    def construct")
    assert _graph_findings(own) == []
