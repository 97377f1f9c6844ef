"""The edit builder of the fixes: one file's text with its positions (`torch2ms.source`), the syntax-tree
lookups every fix of the file shares, the ``import mindspore`` edit, and the helpers that turn argument
spans into text edits (removals, inserted keywords). It owns offsets: transforms ask it for spans and
edits and never count characters themselves.

Spelling style: a rewritten name is always written fully qualified (``mindspore.mint.cat``) and the file
gets one ``import mindspore`` after its leading import block. Names are checked in scope
(`torch2ms.scopes`): a fix replaces a name only when an import binds it, and writes ``mindspore.`` only
where no local binding shadows the module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

from ..model import ApiCall, Arg, CallKind, Edit, Fix, ParamFact, Span
from ..scopes import ROOT, Scopes, choose_root, respell, written_root
from ..source import SourceText

IMPORT_LINE = "import mindspore"
DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*$")


class EditBuilder(SourceText):
    """A source text (positions: `torch2ms.source`) with the syntax-tree lookups shared by every fix of one file,
    and the ``import mindspore`` edit they add."""

    __slots__ = ("_tree", "_import_edit", "_module_imports", "_classes", "_statements", "_scopes", "_root")

    def __init__(self, text: str, tree: ast.Module | None = None, positions: SourceText | None = None) -> None:
        super().__init__(text)
        if positions is not None and positions.text is text:  # the scan's own positions: their lines, once
            self._starts = positions.line_starts
            self._lines = positions._lines
        self._tree = tree
        self._scopes: Scopes | None = None
        self._root: str | None = None
        self._import_edit: Edit | None | bool = False
        self._module_imports: dict[str, Edit | None] = {}
        self._classes: dict[tuple[int, int], ast.ClassDef] | None = None
        self._statements: dict[tuple[int, int, int | None, int | None],
                                tuple[ast.Expr | ast.Assign, list[ast.stmt]]] | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = ast.parse(self.text)
        return self._tree

    # ------------------------------------------------------------- names
    def _kinds(self, name: str, span: Span) -> frozenset[str] | None:
        if self._scopes is None:
            self._scopes = Scopes(self.tree, self)
        line = span.start_line
        return self._scopes.kinds(name, line, self.byte_col(line, span.start_col))

    def names_a_constant(self, span: Span) -> bool:
        """True when the dotted text at `span` is a constant reference: its first name is bound by an
        import (or not bound in the file), or by a plain alias of a dotted name and used as a namespace
        (``F.relu`` after ``F = torch.nn.functional``). A parameter or a variable that holds a torch
        object (``norm_layer(c)``) is not: replacing it would drop what the caller passed."""
        text = dotted_text(self.slice(span))
        root, dot, _ = text.partition(".")
        kinds = self._kinds(root, span)
        if kinds is None or all(k.startswith("import:") for k in kinds):
            return True
        return bool(dot) and kinds == {"alias"}

    @property
    def root(self) -> str:
        """The name the fixes spell MindSpore's names from: ``mindspore``, or an alias where the file
        binds ``mindspore`` to something else (`scopes.choose_root`)."""
        if self._root is None:
            # an ASCII text that never spells the name cannot bind it (identifiers are NFKC-normalised,
            # so only a non-ASCII text may spell it otherwise): no walk of the tree
            absent = self.text.isascii() and ROOT not in self.text
            self._root = ROOT if absent else choose_root(self.tree)
        return self._root

    def mindspore_visible(self, span: Span) -> bool:
        """True when the root name at `span` means the module (no parameter or variable shadows it)."""
        return self.name_visible(self.root, span, ROOT)

    def name_visible(self, name: str, span: Span, module: str | None = None) -> bool:
        """True when `name` at `span` is free or means the module `module` (default: the module `name`)."""
        kinds = self._kinds(name, span)
        return kinds is None or kinds == {f"import:{module or name}"}

    def respelled(self, fix: Fix, span: Span) -> Fix | None:
        """`fix` with ``mindspore`` spelled from the file's root; None where the file's own text in the
        fix (the call at `span`, the replaced text) spells a ``mindspore.`` that is not the module."""
        if self.root == ROOT:
            return fix
        if any(written_root(self.slice(s)) for s in (span, *(e.span for e in fix.edits))):
            return None
        return Fix(fix.title, tuple(Edit(e.span, respell(e.text, self.root)) for e in fix.edits), fix.safe)

    def replaced_call(self, span: Span, text: str) -> list[Edit] | None:
        """The edits that write `text` (MindSpore code spelled from ``mindspore.``) in place of `span`, with the
        ``import mindspore`` the file lacks; None where a local name shadows the module there."""
        if not self.mindspore_visible(span):
            return None
        edits = [Edit(span, text)]
        imp = self.import_edit()
        if imp is not None:
            edits.append(imp)
        return edits

    # ------------------------------------------------------------- imports
    def import_edit(self) -> Edit | None:
        """The insertion of ``import mindspore`` after the leading import block, or None if present."""
        if self._import_edit is False:
            self._import_edit = self._compute_import_edit()
        return self._import_edit  # type: ignore[return-value]

    def module_import_edit(self, module: str) -> Edit | None:
        """The insertion of ``import MODULE`` (a module a composed form names beside MindSpore, e.g. numpy) after
        the leading import block, or None where the file imports it under its own name."""
        if module not in self._module_imports:
            self._module_imports[module] = self._compute_import_edit(module, module)
        return self._module_imports[module]

    def _compute_import_edit(self, module: str = ROOT, bound: str | None = None) -> Edit | None:
        body = self.tree.body
        bound = bound or self.root
        for stmt in body:
            if isinstance(stmt, ast.Import) and any(
                    a.name == module and (a.asname or module) == bound for a in stmt.names):
                return None
        line = IMPORT_LINE if module == ROOT else f"import {module}"
        index = 0
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            index = 1  # the module docstring
        after: ast.stmt | None = body[index - 1] if index else None
        while index < len(body):
            stmt = body[index]
            if not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
                break
            after = stmt
            index += 1
        while index < len(body) and isinstance(body[index], (ast.Import, ast.ImportFrom)):
            after = body[index]
            index += 1
        if after is None:
            return Edit(Span(1, 0, 1, 0), line + self.newline)
        end_line = after.end_lineno or after.lineno
        if end_line < len(self.line_starts):
            return Edit(Span(end_line + 1, 0, end_line + 1, 0), line + self.newline)
        last = len(self.text) - self.line_starts[-1]
        return Edit(Span(end_line, last, end_line, last), self.newline + line)

    # ------------------------------------------------------------- statements
    def expression_statement(self, span: Span, receiver: str | None = None) -> Edit | None:
        """The edit removing the statement whose value is exactly `span`: an expression statement,
        or an assignment of it back to `receiver` (`x = x.cuda()`); None if there is none."""
        if self._statements is None:
            self._statements = {}
            for stmt, body in all_statements(self.tree.body):
                if isinstance(stmt, ast.Expr):
                    value = stmt.value
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], (ast.Name, ast.Attribute)):
                    value = stmt.value  # `x = x.cuda()`: the statement goes if x is the receiver
                else:
                    continue
                key = (value.lineno, value.col_offset, value.end_lineno, value.end_col_offset)
                self._statements[key] = (stmt, body)
        line, end_line = span.start_line, span.end_line
        key = (line, self.byte_col(line, span.start_col), end_line, self.byte_col(end_line, span.end_col))
        found = self._statements.get(key)
        if found is None:
            return None
        stmt, body = found
        if isinstance(stmt, ast.Assign):
            if receiver is None or dotted_text(ast.unparse(stmt.targets[0])) != dotted_text(receiver):
                return None
            line, end_line = stmt.lineno, stmt.end_lineno or stmt.lineno
            span = Span(line, self.char_col(line, stmt.col_offset), end_line,
                        self.char_col(end_line, stmt.end_col_offset or 0))
        start = self.offset(line, span.start_col)
        end = self.offset(end_line, span.end_col)
        line_start = self.line_starts[line - 1]
        line_end = self.line_after(end_line)
        rest = self.text[end:line_end].strip()
        alone = not self.text[line_start:start].strip() and (not rest or rest.startswith("#"))
        if len(body) == 1 or not alone:
            return Edit(span, "pass")
        return Edit(self.span_of(line_start, line_end), "")

    # ------------------------------------------------------------- classes
    def class_with_base(self, span: Span) -> ast.ClassDef | None:
        if self._classes is None:
            self._classes = {}
            for stmt, _body in all_statements(self.tree.body):
                if isinstance(stmt, ast.ClassDef):
                    for base in stmt.bases:
                        self._classes[(base.lineno, base.col_offset)] = stmt
        return self._classes.get((span.start_line, self.byte_col(span.start_line, span.start_col)))


# ---------------------------------------------------------------- helpers
def all_statements(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
    """Every statement with the block holding it, visiting statement blocks only (no expressions)."""
    stack = [body]
    while stack:
        block = stack.pop()
        for stmt in block:
            yield stmt, block
            for attr in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, attr, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    stack.append(inner)
            if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                stack.extend(handler.body for handler in stmt.handlers)  # type: ignore[attr-defined]
            elif isinstance(stmt, ast.Match):
                stack.extend(case.body for case in stmt.cases)


def dotted_text(text: str) -> str:
    return re.sub(r"\s+", "", text)


def is_member(api: str) -> bool:
    """A member of a class (torch.Tensor.view, torch.nn.Module.train), not a module-level name."""
    parts = api.split(".")
    return any(p[:1].isupper() for p in parts[:-1])


def arg_start(arg: Arg) -> tuple[int, int]:
    span = arg.keyword_span or arg.span
    return span.start_line, span.start_col


def ordered(args: Sequence[Arg]) -> list[Arg]:
    return sorted(args, key=arg_start)


def end_of(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_col


def keyword_arg(call: ApiCall, name: str | None) -> Arg | None:
    if name is None:
        return None
    for arg in call.args:
        if arg.keyword == name:
            return arg
    return None


def passed_arg(call: ApiCall, fact: ParamFact) -> Arg | None:
    """The argument the call passes for the fact's torch parameter, by keyword or by position."""
    return fact.passed(call.args)


def partial_call(call: ApiCall) -> bool:
    """A call whose callee is partial's first argument (`partial(nn.BatchNorm2d, momentum=0.01)`): its
    arguments are bound now, the object is built later."""
    return call.func_span is not None and \
        (call.func_span.start_line, call.func_span.start_col) > (call.span.start_line, call.span.start_col)


def close_paren(src: EditBuilder, call: ApiCall) -> tuple[int, int]:
    """Line and column of the call's closing parenthesis."""
    end = src.offset(call.span.end_line, call.span.end_col)
    return src.position(end - 1)


def arg_end(src: EditBuilder, call: ApiCall, arg: Arg) -> tuple[int, int]:
    """Where an argument's text ends, parentheses around its value included (`k=(a + b)`): its span
    stops inside them."""
    offset = src.offset(*end_of(arg.span))
    close = src.offset(*close_paren(src, call))
    probe = offset
    while True:
        while probe < close and src.text[probe] in " \t\r\n\\":
            probe += 1
        if probe < close and src.text[probe] == ")":
            probe += 1
            offset = probe
            continue
        return src.position(offset)


def removal_edits(src: EditBuilder, call: ApiCall, removed: list[Arg]) -> list[Edit]:
    """Edits deleting the keyword arguments `removed` with their separating commas."""
    args = ordered(call.args)
    gone = {id(a) for a in removed}
    edits: list[Edit] = []
    last_kept_index = max((i for i, a in enumerate(args) if id(a) not in gone), default=-1)
    trailing: list[Arg] = []
    for i, arg in enumerate(args):
        if id(arg) not in gone:
            continue
        if i < last_kept_index:
            nxt = args[i + 1]
            edits.append(Edit(Span(*arg_start(arg), *arg_start(nxt)), ""))
        else:
            trailing.append(arg)
    if trailing:
        if last_kept_index >= 0:
            start = arg_end(src, call, args[last_kept_index])
        elif call.func_span is not None and partial_call(call):  # `partial(nn.ReLU, inplace=True)`: after the class
            start = (call.func_span.end_line, call.func_span.end_col)
        else:
            start = arg_start(trailing[0])
        stop = arg_end(src, call, trailing[-1]) if last_kept_index >= 0 else close_paren(src, call)
        edits.append(Edit(Span(*start, *stop), ""))
    return edits


def insert_keywords(src: EditBuilder, call: ApiCall, pieces: list[str], removed: Sequence[Arg] = (),
                     receiver_first: bool = False) -> Edit | None:
    """Keywords added after the last argument that stays (`removed`: those other edits delete)."""
    if not pieces:
        return None
    text = ", ".join(pieces)
    kept = [a for a in call.args if all(a is not r for r in removed)]
    if kept:
        last = max(kept, key=lambda a: end_of(a.span))
        line, col = arg_end(src, call, last)
        return Edit(Span(line, col, line, col), ", " + text)
    if call.func_span is not None and partial_call(call):
        # the callee is itself an argument (`partial(nn.LayerNorm)`): the keywords follow it
        line, col = call.func_span.end_line, call.func_span.end_col
        return Edit(Span(line, col, line, col), ", " + text)
    line, col = close_paren(src, call)
    return Edit(Span(line, col, line, col), (", " if receiver_first else "") + text)


NOT_LITERAL = object()


def written_literal(text: str) -> object:
    """The value of an argument written as a literal (`0.3`, `-1`, `None`, `(4,)`), else `NOT_LITERAL`: what
    the call's text says, not what the scan's constant propagation guesses (a parameter's default)."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL


def literal(value: object) -> str | None:
    """Python source for a default value from the tables, or None if it has none."""
    if isinstance(value, list):
        value = tuple(value)
    try:
        text = repr(value)
        if ast.literal_eval(text) != value:
            return None
    except (ValueError, SyntaxError, TypeError):
        return None
    return text


def pure_text(src: EditBuilder, arg: Arg) -> bool:
    """An argument whose text can be written a second time with the same value."""
    try:
        return pure(ast.parse(f"({src.slice(arg.span)})", mode="eval").body)
    except SyntaxError:
        return False


def runs_nothing(src: EditBuilder, call: ApiCall) -> bool:
    """A call (not an attribute read) whose arguments run nothing: names, attributes, literals, none unpacked; it can
    go, or give way to a value, without losing an effect of its arguments."""
    return call.kind is CallKind.CALL and not any(a.starred or not pure_text(src, a) for a in call.args)


def pure(node: ast.expr) -> bool:
    """An expression that can be evaluated twice with the same result: names, attributes, constants and
    subscripts, slices and tuples of those."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return pure(node.value)
    if isinstance(node, ast.Subscript):
        return pure(node.value) and pure(node.slice)
    if isinstance(node, ast.Slice):
        return all(part is None or pure(part) for part in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Tuple):
        return all(pure(elt) for elt in node.elts)
    if isinstance(node, ast.UnaryOp):
        return pure(node.operand)
    if isinstance(node, ast.BinOp):
        return pure(node.left) and pure(node.right)
    return False


def open_paren(src: EditBuilder, call: ApiCall) -> int | None:
    """The offset of the "(" that opens a method call's arguments (only blanks after its name), or None."""
    if call.name_span is None:
        return None
    name_end = src.offset(call.name_span.end_line, call.name_span.end_col)
    paren = src.text.find("(", name_end)
    return paren if paren >= 0 and not src.text[name_end:paren].strip() else None


def receiver_length(src: EditBuilder, call: ApiCall) -> int:
    """The length of the receiver text of a method call (up to the dot before the name)."""
    if call.name_span is None:
        return 0
    start = src.offset(call.span.start_line, call.span.start_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", start, name_at)
    return max(dot - start, 0)
