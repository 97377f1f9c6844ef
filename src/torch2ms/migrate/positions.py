"""Where each node of a libcst module is written: the ranges of libcst's own `PositionProvider`, at a fraction of
its cost.

The structural rewrites (`transform.CallSites`, `data_loaders`, `training`) match libcst nodes to the scanner's
facts by line and column. libcst's provider writes the module's code once and, for every node, builds its
positions as the tokens go by (a regular expression per token, two position objects and a range per node, a
generator per syntactic range): on a large file it cost twice the parse. `Positions` writes the code once as
well, but records for each node only the numbers of the tokens written before it and after it; the line and
column of a token number are counted once per token, and a node's range is built only when a rewrite asks for it.
The ranges are the same as libcst's: the same token boundaries, the same rules for the syntactic part of a
node (``record_syntactic_position``: what its parentheses and whitespace leave out) and for the first range
recorded for a node winning.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState  # the state libcst's own position provider extends
from libcst.metadata import BaseMetadataProvider, CodePosition, CodeRange

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst counts as a line break

# id(node) -> (tokens written before the node, tokens written by its end, the node); keyed by id: a node's own hash
# is a Python function, called for every node otherwise
Spans = dict[int, tuple[int, int, cst.CSTNode]]


class _Syntactic:
    """The range of a node's syntactic part, recorded around the code that writes it (libcst's
    ``record_syntactic_position``, which a node enters as a context manager)."""

    __slots__ = ("_state", "_node", "_start_node", "_end_node", "_start")

    def __init__(self, state: _State, node: cst.CSTNode, start_node: cst.CSTNode | None,
                 end_node: cst.CSTNode | None) -> None:
        self._state, self._node, self._start_node, self._end_node = state, node, start_node, end_node
        self._start = 0

    def __enter__(self) -> None:
        self._start = len(self._state.tokens)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        spans = self._state.spans
        start = spans[id(self._start_node)][0] if self._start_node is not None else self._start
        end = spans[id(self._end_node)][1] if self._end_node is not None else len(self._state.tokens)
        spans[id(self._node)] = (start, end, self._node)


class _State(CodegenState):
    """Codegen that notes token numbers instead of positions (see the module's docstring)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.spans: Spans = {}
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if id(node) not in self.spans:  # a syntactic range recorded inside the node stays
            self.spans[id(node)] = (start, len(self.tokens), node)

    def record_syntactic_position(  # type: ignore[override]  # a context manager without a generator
            self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)

    def pop_trailing_newline(self) -> None:
        """Kept: libcst's positions count the module's last line break whether or not it is written."""


class _Ranges(Mapping[cst.CSTNode, CodeRange]):
    """Node -> its CodeRange, built when asked for."""

    def __init__(self, spans: Spans, tokens: list[str]) -> None:
        self._spans = spans
        lines, columns = [1], [0]
        line, column = 1, 0
        for token in tokens:
            if "\n" in token or "\r" in token:
                parts = _NEWLINE.split(token)
                line += len(parts) - 1
                column = len(parts[-1])
            else:
                column += len(token)
            lines.append(line)
            columns.append(column)
        self._lines, self._columns = lines, columns

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end, _ = self._spans[id(node)]
        return CodeRange(CodePosition(self._lines[start], self._columns[start]),
                         CodePosition(self._lines[end], self._columns[end]))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for _, _, node in self._spans.values())

    def __len__(self) -> int:
        return len(self._spans)


class Positions(BaseMetadataProvider[CodeRange]):
    """libcst's `PositionProvider` ranges (lines from 1, columns from 0, whitespace that is not syntactically
    significant left out), computed as the module's docstring says."""

    def _gen(self, wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, CodeRange]:
        return ranges(wrapper.module)


def ranges(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """The range of every node of `module` (`Positions`)."""
    state = _State(module)
    module._codegen(state)
    return _Ranges(state.spans, state.tokens)


_T = TypeVar("_T", bound=cst.CSTTransformer)


def rewrite(module: cst.Module, transformer: _T, where: Mapping[cst.CSTNode, CodeRange] | None = None) -> cst.Module:
    """``module.visit(transformer)``, with `Positions` resolved for a transformer that depends on them (`where`:
    those of `module`, computed already). Without libcst's MetadataWrapper, whose resolution walks the whole tree
    once more (a walk of no visitor, for the providers it could batch: there are none) before the transformer's
    own walk."""
    assert set(transformer.get_inherited_dependencies()) <= {Positions}
    transformer.metadata = {Positions: where if where is not None else ranges(module)}
    try:
        return module.visit(transformer)
    finally:
        transformer.metadata = {}
