"""`torch2ms.migrate.positions` gives every node the range libcst's own PositionProvider gives it."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torch2ms.migrate.positions import Positions, ranges, rewrite

PROGRAMS = [
    # decorators, parentheses around expressions, comments, a docstring, nested calls, keyword arguments
    '"""Doc."""\nimport os  # c\n\n\n@decorate(1)\nclass A(B, metaclass=M):\n    x: int = (1 +\n         2)\n\n'
    '    def f(self, a, *b, c=(3), **d) -> "A":\n        return ((a)).g(b[1:2, ...], key=[i for i in c if i])\n',
    # semicolons, backslash continuations, a lambda, f-strings, a with and a try, no final line break
    "a = 1; b = 2\nc = a + \\\n    b\nf = lambda x, y=2: (x, y)\ns = f'{a!r:>{b}} and {c}'\n"
    "with open(s) as h, open(s) as g:\n    try:\n        pass\n    except (OSError, ValueError) as e:\n"
    "        raise RuntimeError(e) from None\n    finally:\n        del a",
    # Windows line breaks, tabs, blank lines with whitespace, a multi-line string, a match statement
    "if x:\r\n\ty = '''one\r\ntwo'''\r\n  \r\n\tmatch y:\r\n\t\tcase [1, *rest] | {'k': _}:\r\n\t\t\tpass\r\n",
    "",
    "# only a comment\n",
]


def _theirs(module: cst.Module) -> dict[cst.CSTNode, object]:
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


@pytest.mark.parametrize("text", PROGRAMS)
def test_every_node_has_libcsts_range(text: str) -> None:
    module = cst.parse_module(text)
    theirs, ours = _theirs(module), ranges(module)
    assert len(theirs) > 0 and set(ours) == set(theirs)
    assert all(ours[node] == theirs[node] for node in theirs)
    wrapped = MetadataWrapper(module, unsafe_skip_copy=True).resolve(Positions)
    assert all(wrapped[node] == theirs[node] for node in theirs)


class _Lines(cst.CSTTransformer):
    """Numbers each call with its first line, as the migration's rewrites find calls by position."""

    METADATA_DEPENDENCIES = (Positions,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        line = self.get_metadata(Positions, original_node).start.line
        return updated_node.with_changes(args=[*updated_node.args, cst.Arg(cst.Integer(str(line)))])


def test_a_rewrite_reads_the_positions_of_the_module_it_rewrites() -> None:
    module = cst.parse_module("x = f(\n    g())\ny = h()\n")
    transformer = _Lines()
    assert rewrite(module, transformer).code == "x = f(\n    g(2), 1)\ny = h(3)\n"
    assert transformer.metadata == {}  # resolved for the walk only


_SITES = '''import torch
import torch.nn as nn


def helper(values):
    total = 0
    for v in values:
        total += v * 2
    return total


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm2d(4)
        self.scale = 3

    def reset(self):
        w = self.norm.weight  # no call here, but a renamed tensor of the class's layer
        return w

    @torch.no_grad()
    def forward(self, x):
        y = helper([1, 2])
        with torch.no_grad():
            z = x + y
        return self.norm(z)


class Plain:
    def area(self, w, h):
        return w * h
'''


def test_the_call_site_rewrite_walks_only_statements_that_hold_a_call_or_a_renamed_tensor(monkeypatch) -> None:
    from torch2ms.migrate import pipeline, transform

    names: list[str] = []
    leave_name = transform.CallSites.leave_Name

    def counted(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        names.append(original_node.value)
        return leave_name(self, original_node, updated_node)

    monkeypatch.setattr(transform.CallSites, "leave_Name", counted)
    pruned = pipeline.migrate_text(_SITES, "net.py").text
    walked = set(names)
    names.clear()
    monkeypatch.setattr(transform.CallSites, "on_visit", cst.CSTTransformer.on_visit)
    assert pipeline.migrate_text(_SITES, "net.py").text == pruned  # the same port as a walk of every node
    assert {"total", "area", "Plain", "helper"} <= set(names) - walked  # statements with no call: not walked
    assert {"norm", "weight", "no_grad"} <= walked  # a renamed tensor's statement, those with calls, decorators
    assert "w = self.norm.gamma" in pruned and "@torch" not in pruned and "with torch" not in pruned


def test_a_text_with_no_call_to_rewrite_is_not_walked(monkeypatch) -> None:
    from torch2ms.migrate import pipeline, positions

    def walked(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the call-site rewrite walked a text with no call to rewrite")

    text = "import os\nimport torch\n\n\ndef area(w, h):\n    return os.sep, w * h  # torch.zeros(1) in a comment\n"
    monkeypatch.setattr(positions, "rewrite", walked)
    assert pipeline.migrate_text(text, "area.py").text == text.replace("import torch\n", "")  # the unused import goes
