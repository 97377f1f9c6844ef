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
