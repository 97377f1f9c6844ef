"""Build the `Fix` of a finding: text edits over the original source, from mapping data.

The edits are expressed over the text that was scanned (1-based lines, 0-based
code-point columns), so the language server can offer them as quick-fixes and
``--fix`` can apply them all at once with `torch2ms.fix.apply_edits`.

Spelling style: a rewritten name is always written fully qualified
(``mindspore.mint.cat``, ``mindspore.mint.nn.Conv2d``) and the file gets one
``import mindspore`` after its leading import block. This never clashes with the
user's own short names (``nn``, ``F``, ``ops``), which still refer to torch until
the last use is gone, and it matches how the mapping examples are written.

What is rewritten (safe fixes):

- the callee or referenced name of a table entry: ``torch.cat`` -> ``mindspore.mint.cat``;
- a Tensor/Cell method whose target is a differently named method of the same
  receiver (``model.parameters()`` -> ``model.trainable_params()``);
- keyword parameters the target declares as renamed, dropped (only when the
  value passed is the torch default) or with a different default (the torch
  default is written out explicitly);
- a few rewrites data cannot express, registered by name in `_SIZE_TUPLE`
  (``torch.zeros(2, 3)`` -> ``mindspore.mint.zeros((2, 3))``), `_SHAPE_TUPLE`
  (``nn.LayerNorm(d)`` -> ``mindspore.nn.LayerNorm((d,), ...)``) and `_COPIED_DEFAULTS`
  (a pooling layer's stride written out as its kernel size).

Unsafe fixes (``--unsafe-fixes``): ``nn.Module`` base -> ``mindspore.nn.Cell`` together
with ``forward`` -> ``construct``; removal of device moves (``.cuda()``, ``.cpu()``,
``.to(device)``); dropping a parameter whose value is not the torch default.

Never fixed: missing APIs, dynamic-shape risks, low-confidence receivers,
unmapped APIs, values a parameter fact declares unsupported, facts that need a
human (``semantics_differ``, ``added_required``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from collections.abc import Iterator, Sequence

from .mappings import MappingTable
from .source import SourceText
from .model import (
    DEFAULT_DEVICE, ApiCall, Arg, Confidence, Diagnostic, Edit, Fix, MappingEntry, ParamFact, Span, Target, arg_for,
)

IMPORT_LINE = "import mindspore"
_FIXABLE_CODES = frozenset({"TMS101", "TMS102"})
# Targets that take the size as one tuple where torch also accepts varargs.
_SIZE_TUPLE = frozenset({"mindspore.mint.zeros", "mindspore.mint.ones", "mindspore.ops.zeros", "mindspore.ops.ones"})
# Targets that take a shape only as a tuple where torch also takes one int: {target: (torch parameter,
# its position, the keywords that make the target cover as many trailing axes as the shape has)}.
_SHAPE_TUPLE = {"mindspore.nn.LayerNorm": ("normalized_shape", 0, ("begin_norm_axis", "begin_params_axis"))}
# torch defaults computed from another argument (a default_differs fact with torch_default None):
# parameter -> the parameter it copies, passed just before it (pooling: stride defaults to kernel_size).
_COPIED_DEFAULTS = {"stride": "kernel_size"}
# Device moves: removed by an unsafe fix whatever the table says about them.
_DEVICE_MOVES = frozenset({
    "torch.Tensor.cuda", "torch.Tensor.cpu", "torch.Tensor.to",
    "torch.nn.Module.cuda", "torch.nn.Module.cpu", "torch.nn.Module.to",
})
_DEVICE_STRING = re.compile(r"^(cuda|cpu|mps|xpu|npu|hpu|meta)(:\d+)?$")
_DEVICE_TEXT = re.compile(r"(?i)device|\bcuda\b|\bgpu\b")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*$")


class FixSource(SourceText):
    """A source text (positions: `torch2ms.source`) with the syntax-tree lookups shared by every fix of one file."""

    __slots__ = ("_tree", "_import_edit", "_classes", "_statements")

    def __init__(self, text: str, tree: ast.Module | None = None) -> None:
        super().__init__(text)
        self._tree = tree
        self._import_edit: Edit | None | bool = False
        self._classes: dict[tuple[int, int], ast.ClassDef] | None = None
        self._statements: dict[tuple[int, int, int | None, int | None],
                                tuple[ast.Expr | ast.Assign, list[ast.stmt]]] | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = ast.parse(self.text)
        return self._tree

    # ------------------------------------------------------------- imports
    def import_edit(self) -> Edit | None:
        """The insertion of ``import mindspore`` after the leading import block, or None if present."""
        if self._import_edit is False:
            self._import_edit = self._compute_import_edit()
        return self._import_edit  # type: ignore[return-value]

    def _compute_import_edit(self) -> Edit | None:
        body = self.tree.body
        for stmt in body:
            if isinstance(stmt, ast.Import) and any(a.name == "mindspore" and a.asname is None for a in stmt.names):
                return None
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
            return Edit(Span(1, 0, 1, 0), IMPORT_LINE + self.newline)
        end_line = after.end_lineno or after.lineno
        if end_line < len(self.line_starts):
            return Edit(Span(end_line + 1, 0, end_line + 1, 0), IMPORT_LINE + self.newline)
        last = len(self.text) - self.line_starts[-1]
        return Edit(Span(end_line, last, end_line, last), self.newline + IMPORT_LINE)

    # ------------------------------------------------------------- statements
    def expression_statement(self, span: Span, receiver: str | None = None) -> Edit | None:
        """The edit removing the statement whose value is exactly `span`: an expression statement,
        or an assignment of it back to `receiver` (`x = x.cuda()`); None if there is none."""
        if self._statements is None:
            self._statements = {}
            for stmt, body in _all_statements(self.tree.body):
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
            if receiver is None or _dotted_text(ast.unparse(stmt.targets[0])) != _dotted_text(receiver):
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
            for stmt, _body in _all_statements(self.tree.body):
                if isinstance(stmt, ast.ClassDef):
                    for base in stmt.bases:
                        self._classes[(base.lineno, base.col_offset)] = stmt
        return self._classes.get((span.start_line, self.byte_col(span.start_line, span.start_col)))


# ---------------------------------------------------------------- helpers
def _all_statements(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
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


def _dotted_text(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _is_member(api: str) -> bool:
    """A member of a class (torch.Tensor.view, torch.nn.Module.train), not a module-level name."""
    parts = api.split(".")
    return any(p[:1].isupper() for p in parts[:-1])


def _arg_start(arg: Arg) -> tuple[int, int]:
    span = arg.keyword_span or arg.span
    return span.start_line, span.start_col


def _ordered(args: Sequence[Arg]) -> list[Arg]:
    return sorted(args, key=_arg_start)


def _end(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_col


def _keyword(call: ApiCall, name: str | None) -> Arg | None:
    if name is None:
        return None
    for arg in call.args:
        if arg.keyword == name:
            return arg
    return None


def _passed(call: ApiCall, fact: ParamFact) -> Arg | None:
    """The argument the call passes for the fact's torch parameter, by keyword or by position."""
    return arg_for(call.args, fact.torch, fact.position) if fact.torch is not None else None


def _close_paren(src: FixSource, call: ApiCall) -> tuple[int, int]:
    """Line and column of the call's closing parenthesis."""
    end = src.offset(call.span.end_line, call.span.end_col)
    return src.position(end - 1)


def _removal_edits(src: FixSource, call: ApiCall, removed: list[Arg]) -> list[Edit]:
    """Edits deleting the keyword arguments `removed` with their separating commas."""
    args = _ordered(call.args)
    gone = {id(a) for a in removed}
    edits: list[Edit] = []
    last_kept_index = max((i for i, a in enumerate(args) if id(a) not in gone), default=-1)
    trailing: list[Arg] = []
    for i, arg in enumerate(args):
        if id(arg) not in gone:
            continue
        if i < last_kept_index:
            nxt = args[i + 1]
            edits.append(Edit(Span(*_arg_start(arg), *_arg_start(nxt)), ""))
        else:
            trailing.append(arg)
    if trailing:
        if last_kept_index >= 0:
            start = _end(args[last_kept_index].span)
        else:
            start = _arg_start(trailing[0])
        stop = _end(trailing[-1].span) if last_kept_index >= 0 else _close_paren(src, call)
        edits.append(Edit(Span(*start, *stop), ""))
    return edits


def _insert_keywords(src: FixSource, call: ApiCall, pieces: list[str]) -> Edit | None:
    if not pieces:
        return None
    text = ", ".join(pieces)
    if call.args:
        last = max(call.args, key=lambda a: _end(a.span))
        line, col = _end(last.span)
        return Edit(Span(line, col, line, col), ", " + text)
    line, col = _close_paren(src, call)
    return Edit(Span(line, col, line, col), text)


def _literal(value: object) -> str | None:
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


def default_keyword(fact: ParamFact) -> str | None:
    """``name=value`` that gives torch's behaviour where a default differs (a ``default_differs`` fact
    for a call that passes nothing for it), or None when it cannot be written: a torch default of None
    (computed from other arguments), or torch's word for an option renamed between the libraries, which
    usually has its own vocabulary (padding_mode='zeros' vs pad_mode='pad'). A fact without a torch name
    is a MindSpore parameter torch lacks; its `torch_default` is the value that behaves as torch does."""
    name = fact.ms or fact.torch
    if fact.kind != "default_differs" or name is None or fact.torch_default is None:
        return None
    literal = _literal(fact.torch_default)
    if literal is None or isinstance(fact.torch_default, str) and fact.torch and fact.ms and fact.ms != fact.torch:
        return None
    return f"{name}={literal}"


# ---------------------------------------------------------------- fixes
def _param_edits(src: FixSource, call: ApiCall, target: Target) -> tuple[list[Edit], bool] | None:
    """The edits for the target's parameter facts and whether they are safe; None: no fix possible."""
    edits: list[Edit] = []
    safe = True
    dropped: list[Arg] = []
    explicit: list[str] = []
    starred = any(a.starred for a in call.args)
    for fact in target.params:
        passed = _passed(call, fact)
        if fact.kind == "added_required":
            return None
        if fact.kind == "semantics_differ":
            if passed is not None:
                return None  # the value passed may mean something else in MindSpore
            if fact.torch is None and fact.ms is None:
                safe = False  # the API as a whole behaves differently: a human should look
            continue
        if fact.kind == "unsupported_values":
            if passed is not None and (not passed.is_const or passed.value in fact.values):
                return None
            if passed is None and fact.torch_default is not None and fact.torch_default in fact.values:
                return None
            continue
        if fact.kind == "renamed":
            if passed is not None and fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                edits.append(Edit(passed.keyword_span, fact.ms))
            elif passed is not None and fact.ms == fact.torch and passed.keyword is None:
                # The same name at another place: MindSpore's parameter at this position is another one
                # (nn.Dropout: keep_prob, not p), so the value goes by keyword (only the last positional can)
                if passed.starred or passed is not [a for a in call.args if a.keyword is None][-1]:
                    return None
                edits.append(Edit(Span(*_arg_start(passed), *_arg_start(passed)), f"{fact.ms}="))
            continue
        if fact.kind == "dropped":
            if passed is None:
                continue
            if passed.keyword is None or passed.starred:
                return None
            if not (passed.is_const and fact.torch_default is not None and passed.value == fact.torch_default):
                safe = False  # the value passed changes behaviour in torch and is lost
            dropped.append(passed)
            continue
        if fact.kind == "default_differs":
            name = fact.ms or fact.torch
            if passed is not None:
                if fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                    edits.append(Edit(passed.keyword_span, fact.ms))
                continue
            if name is None or fact.torch is None and fact.ms is None:
                continue
            if starred or _keyword(call, name) is not None:
                return None  # with torch None: a MindSpore parameter torch lacks, passed already (its vocabulary)
            text = default_keyword(fact) or _copied_default(src, call, fact)
            if text is None:
                safe = False
                continue
            explicit.append(text)
            continue
    if dropped:
        edits.extend(_removal_edits(src, call, dropped))
    if explicit:
        if call.kind == "attribute":
            return None
        insert = _insert_keywords(src, call, explicit)
        if insert is not None:
            edits.append(insert)
    return edits, safe


def _copied_default(src: FixSource, call: ApiCall, fact: ParamFact) -> str | None:
    """``stride=<the kernel_size argument>`` where torch's default is another argument's value
    (`_COPIED_DEFAULTS`), when that argument is a constant or a name (evaluating it twice is the same)."""
    source = _COPIED_DEFAULTS.get(fact.torch or "")
    if source is None or fact.torch_default is not None or not fact.position:
        return None
    arg = arg_for(call.args, source, fact.position - 1)
    if arg is None or arg.starred:
        return None
    text = src.slice(arg.span)
    return f"{fact.ms or fact.torch}={text}" if arg.is_const or _DOTTED.match(text) else None


def _shape_tuple_edits(src: FixSource, call: ApiCall, rule: tuple[str, int, tuple[str, ...]]) -> list[Edit] | None:
    """``nn.LayerNorm(d)`` -> ``LayerNorm((d,))``; a literal shape of n > 1 items keeps its form and gets
    ``begin_norm_axis=-n, begin_params_axis=-n`` (torch normalizes over as many trailing axes as the
    shape has). A value not written as a literal is taken for one int: a tuple there makes MindSpore raise."""
    name, position, axes = rule
    arg = arg_for(call.args, name, position)
    if arg is None or arg.starred or any(a.keyword in axes for a in call.args):
        return None
    try:
        node = ast.parse(src.slice(arg.span).strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        count = len(node.elts)
        insert = _insert_keywords(src, call, [f"{a}=-{count}" for a in axes]) if count > 1 else None
        return [insert] if insert is not None else []
    return [Edit(Span(arg.span.start_line, arg.span.start_col, arg.span.start_line, arg.span.start_col), "("),
            Edit(Span(arg.span.end_line, arg.span.end_col, arg.span.end_line, arg.span.end_col), ",)")]


def _size_tuple_edits(call: ApiCall) -> list[Edit]:
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) < 2 or any(a.starred for a in positional):
        return []
    first, last = positional[0].span, positional[-1].span
    return [Edit(Span(first.start_line, first.start_col, first.start_line, first.start_col), "("),
            Edit(Span(last.end_line, last.end_col, last.end_line, last.end_col), ")")]


def _device_move_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`x.cuda()` / `x.to(device)` -> `x` (unsafe: MindSpore sets the device once per program)."""
    if call.kind != "method" or call.name_span is None:
        return None
    method = call.api.rpartition(".")[2]
    if method == "to":
        kw_names = {a.keyword for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if any(a.starred for a in call.args) or not kw_names <= {"device", "non_blocking", "copy"}:
            return None
        device_args = positional + [a for a in call.args if a.keyword == "device"]
        if len(device_args) != 1 or len(positional) > 1:
            return None
        arg = device_args[0]
        if arg.is_const:
            if not (isinstance(arg.value, str) and _DEVICE_STRING.match(arg.value)):
                return None
        elif not _DEVICE_TEXT.search(src.slice(arg.span)):
            return None
    elif method in ("cuda", "cpu"):
        if any(a.keyword not in ("device", "non_blocking", "memory_format") and a.keyword is not None
               for a in call.args):
            return None
    else:
        return None
    receiver = src.slice(call.span)[:_receiver_length(src, call)]
    if _DOTTED.match(receiver or "-"):
        statement = src.expression_statement(call.span, receiver)
        if statement is not None:
            return Fix(title=f"Remove the device move .{method}()", edits=(statement,), safe=False)
    # Delete from the dot before the method name to the end of the call.
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", 0, name_at)
    if dot < 0 or src.text[dot + 1:name_at].strip():
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    return Fix(title=f"Remove the device move .{method}()", edits=(Edit(src.span_of(dot, end), ""),), safe=False)


def _eval_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`model.eval()` -> `model.set_train(False)` (a registered rewrite: the data says only 'set_train')."""
    if call.kind != "method" or call.args or call.name_span is None:
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    return Fix(title="Use mindspore.nn.Cell.set_train(False)",
               edits=(Edit(src.span_of(name_at, end), "set_train(False)"),), safe=True)


def _receiver_length(src: FixSource, call: ApiCall) -> int:
    """The length of the receiver text of a method call (up to the dot before the name)."""
    if call.name_span is None:
        return 0
    start = src.offset(call.span.start_line, call.span.start_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", start, name_at)
    return max(dot - start, 0)


def _cell_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`class Net(nn.Module)` -> `class Net(mindspore.nn.Cell)` and its `forward` -> `construct` (unsafe)."""
    if call.kind != "attribute" or not _DOTTED.match(src.slice(call.span)):
        return None
    edits = [Edit(call.span, "mindspore.nn.Cell")]
    node = src.class_with_base(call.span)
    if node is not None:
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
                if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "construct"
                       for s in node.body):
                    break
                line = stmt.lineno
                start = src.offset(line, src.char_col(line, stmt.col_offset))
                match = re.compile(r"(async\s+)?def\s+").match(src.text, start)
                if match is None:
                    break
                at = match.end()
                edits.append(Edit(src.span_of(at, at + len("forward")), "construct"))
        title = f"Make {node.name} a mindspore.nn.Cell (forward -> construct)"
    else:
        title = "Replace torch.nn.Module with mindspore.nn.Cell"
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=title, edits=tuple(edits), safe=False)


def build_fix(call: ApiCall, diag: Diagnostic, entry: MappingEntry | None, target: Target | None,
              src: FixSource) -> Fix | None:
    """The fix for one finding, or None when it must be left to a human."""
    if diag.confidence is not Confidence.HIGH or call.confidence is not Confidence.HIGH:
        return None
    if call.api in _DEVICE_MOVES and diag.code in ("TMS101", "TMS102", "TMS103", "TMS104"):
        device = _device_move_fix(src, call)
        if device is not None:
            return device
    if call.api == "torch.nn.Module" and diag.code in _FIXABLE_CODES and target is not None:
        return _cell_fix(src, call)
    if call.api == "torch.nn.Module.eval" and diag.code in _FIXABLE_CODES and target is not None \
            and target.api == "mindspore.nn.Cell.set_train":
        return _eval_fix(src, call)
    if diag.code not in _FIXABLE_CODES or entry is None or target is None:
        return None
    params = _param_edits(src, call, target)
    if params is None:
        return None
    edits, safe = params
    member = _is_member(call.api)
    if call.kind == "method":
        if call.name_span is None or not _is_member(target.api):
            return None  # a method becoming a function needs the receiver moved: left to a human
        old = call.api.rpartition(".")[2]
        new = target.api.rpartition(".")[2]
        if new != old:
            edits.insert(0, Edit(call.name_span, new))
        title = f"Use {target.api}"
        if not edits:
            return None  # the same-named method: nothing to change at the call site
        return Fix(title=title, edits=tuple(edits), safe=safe)
    if member or _is_member(target.api):
        return None
    if call.kind == "call":
        if call.func_span is None or not _DOTTED.match(src.slice(call.func_span)):
            return None
        edits.insert(0, Edit(call.func_span, target.api))
        if target.api in _SIZE_TUPLE:
            edits.extend(_size_tuple_edits(call))
        if target.api in _SHAPE_TUPLE:
            shape = _shape_tuple_edits(src, call, _SHAPE_TUPLE[target.api])
            if shape is None:
                return None
            edits[1:1] = shape  # before the keywords inserted at the same point
    elif call.kind == "attribute":
        if not _DOTTED.match(src.slice(call.span)):
            return None
        edits.insert(0, Edit(call.span, target.api))
    else:
        return None
    if target.api.startswith("mindspore."):
        imp = src.import_edit()
        if imp is not None:
            edits.append(imp)
    verb = "Call" if call.kind == "call" else "Use"
    return Fix(title=f"{verb} {target.api}", edits=tuple(edits), safe=safe)


def attach_fixes(diagnostics: Sequence[Diagnostic], calls: Sequence[ApiCall], text: str, tree: ast.Module | None,
                 table: MappingTable, version: tuple[int, ...],
                 device: str | None = DEFAULT_DEVICE) -> list[Diagnostic]:
    """Give every fixable finding its `Fix`; a finding is matched to its call by span and torch API.

    The form written is the one for the MindSpore version and the device (`MappingEntry.choose`),
    with that form's parameter facts (e.g. `mindspore.nn.Conv2d` and `has_bias=` on the CPU)."""
    by_key = {(call.span, call.api): call for call in calls}
    src: FixSource | None = None
    out = []
    for diag in diagnostics:
        call = by_key.get((diag.span, diag.torch_api)) if diag.torch_api else None
        if call is None or diag.fix is not None or not (diag.code in _FIXABLE_CODES or call.api in _DEVICE_MOVES):
            out.append(diag)
            continue
        if src is None:
            src = FixSource(text, tree)
        entry = table.lookup(call.api)
        target = entry.target_for(version, device) if entry is not None else None
        try:
            fix = build_fix(call, diag, entry, target, src)
        except Exception:  # a fix that cannot be built must never cost the finding or the file's analysis
            fix = None
        out.append(replace(diag, fix=fix) if fix is not None else diag)
    return out
