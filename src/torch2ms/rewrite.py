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
  (``torch.zeros(2, 3)`` -> ``mindspore.mint.zeros((2, 3))``) and `_SHAPE_TUPLE`
  (``nn.LayerNorm(d)`` -> ``mindspore.nn.LayerNorm((d,), ...)``); a torch default that is another
  argument's value written out (a pooling layer's stride as its kernel size, the fact's ``default_from``);
- in-place methods written so the receiver is really updated (``x.add_(y)`` ->
  ``x.copy_(x.add(y))``), methods whose target is a function (``x.std()`` ->
  ``mindspore.ops.std(x, ddof=1)``), ``x.size(d)`` -> ``x.shape[d]``, keywords MindSpore
  lacks dropped, a result dtype the tables say differs cast back, named-tuple fields as indexes.

Names are checked in scope (`torch2ms.scopes`): a fix replaces a name only when an import binds
it, and writes ``mindspore.`` only where no local binding shadows the module.

Unsafe fixes (``--unsafe-fixes``): ``nn.Module`` base -> ``mindspore.nn.Cell`` together
with ``forward`` -> ``construct``; removal of device moves (``.cuda()``, ``.cpu()``,
``.to(device)``); dropping a parameter whose value is not the torch default.

Never fixed: missing APIs, dynamic-shape risks, low-confidence receivers,
unmapped APIs, values a parameter fact declares unsupported, facts that need a
human (``semantics_differ``, ``added_required``); a ``semantics_differ`` fact that
covers only input variants (``covers``: dtypes, empty or 0-d tensors, ...) leaves
the rewrite safe and is named in the finding.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from collections.abc import Callable, Iterator, Sequence
from typing import assert_never

from .mappings import MappingTable
from .scopes import ROOT, Scopes, choose_root, respell, written_root
from .source import SourceText
from .model import (
    DEFAULT_DEVICE, ApiCall, Arg, CallKind, Confidence, Diagnostic, Edit, FactKind, Fix, MappingEntry, ParamFact, Span, Target,
    WrittenAs, arg_for,
)

IMPORT_LINE = "import mindspore"
_FIXABLE_CODES = frozenset({"TMS101", "TMS102"})
# Targets that take the size as one tuple where torch also accepts varargs.
_SIZE_TUPLE = frozenset({"mindspore.mint.zeros", "mindspore.mint.ones", "mindspore.ops.zeros", "mindspore.ops.ones"})
# Targets that take a shape only as a tuple where torch also takes one int: {target: (torch parameter,
# its position, the keywords that make the target cover as many trailing axes as the shape has)}.
_SHAPE_TUPLE = {"mindspore.nn.LayerNorm": ("normalized_shape", 0, ("begin_norm_axis", "begin_params_axis"))}
# Targets that infer the result dtype from the fill value in their own way where torch's dtype fact has no
# default to write (mindspore.ops.full gives int64 for a float fill): {target: (the fill value's torch
# parameter, its position)}. Without dtype, a constant fill value gets torch's dtype written out; any other
# value leaves the call unfixed (`_fill_dtype`).
_FILL_DTYPE = {"mindspore.ops.full": ("fill_value", 1)}
# Functions whose result is a complex tensor (in torch.fft / mindspore.ops, by their last name), and the
# calls whose result torch makes real for a complex operand where MindSpore 2.10 keeps it complex (`abs` of
# an rfft: complex64 with the magnitudes as real parts). Such a call on the direct result of one of those
# functions (torch's, or its rewrite of an earlier fix round) is written with mindspore.ops.ComplexAbs, whose
# result is real as torch's is.
_COMPLEX_RESULTS = frozenset({
    "fft", "ifft", "rfft", "fft2", "ifft2", "rfft2", "fftn", "ifftn", "rfftn", "ihfft", "stft", "complex",
    "polar", "view_as_complex",
})
_REAL_OF_COMPLEX = frozenset({"torch.abs", "torch.absolute", "torch.Tensor.abs", "torch.Tensor.absolute"})
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

    __slots__ = ("_tree", "_import_edit", "_classes", "_statements", "_scopes", "_root")

    def __init__(self, text: str, tree: ast.Module | None = None) -> None:
        super().__init__(text)
        self._tree = tree
        self._scopes: Scopes | None = None
        self._root: str | None = None
        self._import_edit: Edit | None | bool = False
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
            self._scopes = Scopes(self.tree)
        line = span.start_line
        return self._scopes.kinds(name, line, self.byte_col(line, span.start_col))

    def names_a_constant(self, span: Span) -> bool:
        """True when the dotted text at `span` is a constant reference: its first name is bound by an
        import (or not bound in the file), or by a plain alias of a dotted name and used as a namespace
        (``F.relu`` after ``F = torch.nn.functional``). A parameter or a variable that holds a torch
        object (``norm_layer(c)``) is not: replacing it would drop what the caller passed."""
        text = _dotted_text(self.slice(span))
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
            self._root = choose_root(self.tree)
        return self._root

    def mindspore_visible(self, span: Span) -> bool:
        """True when the root name at `span` means the module (no parameter or variable shadows it)."""
        kinds = self._kinds(self.root, span)
        return kinds is None or kinds == {"import:mindspore"}

    def respelled(self, fix: Fix, span: Span) -> Fix | None:
        """`fix` with ``mindspore`` spelled from the file's root; None where the file's own text in the
        fix (the call at `span`, the replaced text) spells a ``mindspore.`` that is not the module."""
        if self.root == ROOT:
            return fix
        if any(written_root(self.slice(s)) for s in (span, *(e.span for e in fix.edits))):
            return None
        return Fix(fix.title, tuple(Edit(e.span, respell(e.text, self.root)) for e in fix.edits), fix.safe)

    # ------------------------------------------------------------- imports
    def import_edit(self) -> Edit | None:
        """The insertion of ``import mindspore`` after the leading import block, or None if present."""
        if self._import_edit is False:
            self._import_edit = self._compute_import_edit()
        return self._import_edit  # type: ignore[return-value]

    def _compute_import_edit(self) -> Edit | None:
        body = self.tree.body
        for stmt in body:
            if isinstance(stmt, ast.Import) and any(
                    a.name == ROOT and (a.asname or ROOT) == self.root for a in stmt.names):
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


def _arg_end(src: FixSource, call: ApiCall, arg: Arg) -> tuple[int, int]:
    """Where an argument's text ends, parentheses around its value included (`k=(a + b)`): its span
    stops inside them."""
    offset = src.offset(*_end(arg.span))
    close = src.offset(*_close_paren(src, call))
    probe = offset
    while True:
        while probe < close and src.text[probe] in " \t\r\n\\":
            probe += 1
        if probe < close and src.text[probe] == ")":
            probe += 1
            offset = probe
            continue
        return src.position(offset)


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
            start = _arg_end(src, call, args[last_kept_index])
        else:
            start = _arg_start(trailing[0])
        stop = _arg_end(src, call, trailing[-1]) if last_kept_index >= 0 else _close_paren(src, call)
        edits.append(Edit(Span(*start, *stop), ""))
    return edits


def _insert_keywords(src: FixSource, call: ApiCall, pieces: list[str], removed: Sequence[Arg] = (),
                     receiver_first: bool = False) -> Edit | None:
    """Keywords added after the last argument that stays (`removed`: those other edits delete)."""
    if not pieces:
        return None
    text = ", ".join(pieces)
    kept = [a for a in call.args if all(a is not r for r in removed)]
    if kept:
        last = max(kept, key=lambda a: _end(a.span))
        line, col = _arg_end(src, call, last)
        return Edit(Span(line, col, line, col), ", " + text)
    line, col = _close_paren(src, call)
    return Edit(Span(line, col, line, col), (", " if receiver_first else "") + text)


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


# ---------------------------------------------------------------- result dtypes
# APIs returning (values, indices): the dtype fact is about the indices.
_INDEX_PAIRS = frozenset({"sort", "topk", "cummin", "cummax", "kthvalue", "mode"})


def result_dtype(fact: ParamFact) -> str | None:
    """torch's result dtype when the fact states that MindSpore's differs; None otherwise."""
    if fact.kind is not FactKind.SEMANTICS_DIFFER or fact.torch is not None or fact.ms is not None \
            or fact.result_dtype is None:
        return None
    return fact.result_dtype[0]


def _with_cast(src: FixSource, call: ApiCall, target: Target, fix: Fix | None) -> Fix | None:
    """`fix` with the result cast to torch's dtype where the target states another one:
    `x.argsort()` -> `x.argsort().astype(mindspore.int64)`; a (values, indices) result becomes
    `(lambda r: (r[0], r[1].astype(mindspore.int64)))(x.topk(2))`. Without a way to write the cast
    (an attribute, a shadowed `mindspore`) the fix is unsafe."""
    dtypes = [d for d in (result_dtype(f) for f in target.params) if d is not None]
    if fix is None or not dtypes or call.kind not in (CallKind.CALL, CallKind.METHOD):
        return fix
    base, title = list(fix.edits), fix.title
    if not src.mindspore_visible(call.span):
        return Fix(title, tuple(base), safe=False)
    cast = f".astype(mindspore.{dtypes[0]})"
    start = src.offset(call.span.start_line, call.span.start_col)
    end = src.offset(call.span.end_line, call.span.end_col)
    edits = base
    if call.api.rpartition(".")[2] in _INDEX_PAIRS:
        edits = [Edit(src.span_of(start, start), f"(lambda r: (r[0], r[1]{cast}))("), *edits,
                 Edit(src.span_of(end, end), ")")]
    else:
        edits.append(Edit(src.span_of(end, end), cast))
    imp = src.import_edit()
    if imp is not None:  # first: it may be inserted where the statement starts, before the wrapper
        edits = [imp, *(e for e in edits if e != imp)]
    return Fix(f"{title}, with torch's result dtype {dtypes[0]}", tuple(edits), safe=fix.safe)


# Fields of torch's named-tuple results (torch.return_types.*); MindSpore returns plain tuples.
_RESULT_FIELDS: dict[str, dict[str, int]] = {
    **{name: {"values": 0, "indices": 1} for name in (
        "max", "min", "median", "nanmedian", "mode", "sort", "topk", "kthvalue", "cummax", "cummin")},
    "aminmax": {"min": 0, "max": 1},
}
_FIELD = re.compile(r"\s*\.\s*([A-Za-z_]\w*)")


def _with_fields(src: FixSource, call: ApiCall, fix: Fix | None) -> Fix | None:
    """`x.max(dim=1).values` -> `x.max(dim=1)[0]`: a field read right after the call becomes an index."""
    fields = _RESULT_FIELDS.get(call.api.rpartition(".")[2])
    if fix is None or fields is None or call.kind not in (CallKind.CALL, CallKind.METHOD):
        return fix
    end = src.offset(call.span.end_line, call.span.end_col)
    found = _FIELD.match(src.text, end)
    if found is None or found.group(1) not in fields:
        return fix
    edit = Edit(src.span_of(end, found.end()), f"[{fields[found.group(1)]}]")
    return Fix(fix.title, (*fix.edits, edit), fix.safe)


def default_keyword(fact: ParamFact) -> str | None:
    """``name=value`` that gives torch's behaviour where a default differs (a ``default_differs`` fact
    for a call that passes nothing for it), or None when it cannot be written: a torch default of None
    (computed from other arguments), or torch's word for an option renamed between the libraries, which
    usually has its own vocabulary (padding_mode='zeros' vs pad_mode='pad'). A fact without a torch name
    is a MindSpore parameter torch lacks; its `torch_default` is the value that behaves as torch does."""
    name = fact.ms or fact.torch
    if fact.kind is not FactKind.DEFAULT_DIFFERS or name is None or fact.torch_default is None:
        return None
    literal = _literal(fact.torch_default)
    if literal is None or isinstance(fact.torch_default, str) and fact.torch and fact.ms and fact.ms != fact.torch:
        return None
    return f"{name}={literal}"


# ---------------------------------------------------------------- fixes
# Dropped parameters whose value does not change what the call computes, only whether its input is
# overwritten: a value other than torch's default may go in an unsafe fix. Any other dropped parameter
# passed with a value other than torch's default leaves the call unfixed (its result would change).
_VALUE_NEUTRAL = frozenset({"inplace"})
# Layers whose forward depends on the training flag: a torch module starts in training mode, a MindSpore
# Cell in inference mode, so the rewritten constructor calls set_train() (a later eval()/set_train(False)
# of the layer or of a Cell holding it still switches it).
_TRAINING_DEPENDENT = frozenset({
    "torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d", "torch.nn.SyncBatchNorm",
    "torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d", "torch.nn.AlphaDropout",
    "torch.nn.FeatureAlphaDropout",
})
_MODE_CALL = re.compile(r"\s*\.\s*(eval|train|set_train)\s*\(")
# Keywords every torch creation function or layer may take that MindSpore has no use for (it places the
# whole program on one device and has no tensor-level autograd flag), with the values that are torch's
# defaults (dropping a default is safe; dropping another value is unsafe: what it selected is lost).
# A target that does take one (mindspore.Parameter's requires_grad) says so with a fact naming it.
_GENERAL_DROPPED: dict[str, tuple[object, ...]] = {
    "device": (None,), "requires_grad": (False,), "pin_memory": (False,), "non_blocking": (False,),
    "layout": ("strided",), "memory_format": ("contiguous_format", "preserve_format"),
}


def _general_default(src: FixSource, arg: Arg) -> bool:
    """True when `arg` passes torch's default for its general keyword (a constant or a torch attribute)."""
    values = _GENERAL_DROPPED.get(arg.keyword or "", ())
    if arg.is_const:
        return any(arg.value is v or (v is not None and arg.value == v) for v in values)
    return src.slice(arg.span).rpartition(".")[2] in {v for v in values if isinstance(v, str)}


def _legacy_reduction(src: FixSource, call: ApiCall) -> str | None | bool:
    """The `reduction` that a loss's legacy `size_average` / `reduce` flags select (torch's rule), None when
    the call passes neither, False when it cannot be told (a value that is not written as a literal, or
    `reduction` too)."""
    flags = {a.keyword: a for a in call.args if a.keyword in ("size_average", "reduce")}
    if not flags:
        return None
    if _keyword(call, "reduction") is not None or any(src.slice(a.span).strip() not in ("None", "True", "False")
                                                      for a in flags.values()):
        return False
    size_average = flags["size_average"].value if "size_average" in flags else None
    reduce = flags["reduce"].value if "reduce" in flags else None
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


@dataclass
class _Params:
    edits: list[Edit]
    safe: bool
    out: Arg | None = None  # an `out=` argument, removed by the edits: the caller writes the result into it


def _param_edits(src: FixSource, call: ApiCall, target: Target, receiver_first: bool = False) -> _Params | None:
    """The edits for the target's parameter facts (and the general keywords MindSpore lacks) and whether
    they are safe; None: no fix possible. `receiver_first`: a method's receiver becomes the first argument."""
    edits: list[Edit] = []
    safe = True
    dropped: list[Arg] = []
    explicit: list[str] = []
    starred = any(a.starred for a in call.args)
    legacy = _legacy_reduction(src, call)
    if legacy is False:
        return None
    declared = {f.torch for f in target.params if f.torch}
    for fact in target.params:
        passed = _passed(call, fact)
        match fact.kind:
            case FactKind.ADDED_REQUIRED:
                value = _literal(fact.ms_default) if fact.ms and fact.ms_default is not None else None
                if value is None or _keyword(call, fact.ms) is not None:
                    return None  # MindSpore needs an argument the table cannot give
                explicit.append(f"{fact.ms}={value}")  # the table names the value torch implies
                continue
            case FactKind.SEMANTICS_DIFFER:
                if passed is not None:
                    return None  # the value passed may mean something else in MindSpore
                if "all" in fact.covers and fact.torch is None:
                    return None  # the form never gives torch's result as written (another structure): a person ports it
                if fact.torch is None and fact.ms is None and result_dtype(fact) is None \
                        and not fact.only_degenerate_inputs:
                    # The API as a whole behaves differently: a human should look. (A result dtype is cast
                    # back; a difference that `torch2ms verify` found only for empty or 0-d inputs leaves
                    # the rewrite safe: the finding names it.)
                    safe = False
                continue
            case FactKind.UNSUPPORTED_VALUES:
                if passed is not None and (not passed.is_const or passed.value in fact.values):
                    return None
                if passed is None and fact.torch_default is not None and fact.torch_default in fact.values:
                    return None
                continue
            case FactKind.RENAMED:
                if passed is not None and fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                    edits.append(Edit(passed.keyword_span, fact.ms))
                elif passed is not None and fact.ms == fact.torch and passed.keyword is None:
                    # The same name at another place: MindSpore's parameter at this position is another one
                    # (nn.Dropout: keep_prob, not p), so the value goes by keyword (only the last positional can)
                    if passed.starred or passed is not [a for a in call.args if a.keyword is None][-1]:
                        return None
                    edits.append(Edit(Span(*_arg_start(passed), *_arg_start(passed)), f"{fact.ms}="))
                continue
            case FactKind.TRANSLATED:
                if passed is None:
                    continue
                edit = _translated_edit(call, fact, passed)
                if edit is None:
                    return None  # a value the table cannot translate, or one that cannot go by keyword
                edits.append(edit)
                continue
            case FactKind.RETYPED:
                if passed is not None and not passed.starred and passed.is_const and type(passed.value) is int:
                    value = src.slice(passed.span)
                    written = f"({value},)" if "tuple" in fact.values else \
                        f"{value}.0" if value.strip().isdigit() else f"float({value})"
                    edits.append(Edit(passed.span, written))
                continue  # another value is written as it is (a value of the wrong type raises in MindSpore)
            case FactKind.DROPPED:
                if passed is None:
                    continue
                positional = [a for a in call.args if a.keyword is None]
                if passed.starred or (passed.keyword is None and (passed is not positional[-1] or
                                                                   len(positional) != len(call.args))):
                    return None  # only the last argument may go when it is passed by position
                if not (passed.is_const and fact.torch_default is not None and passed.value == fact.torch_default):
                    if fact.torch not in _VALUE_NEUTRAL:
                        return None  # the value passed selects another computation: dropping it changes results
                    safe = False  # inplace=True: only whether the input is overwritten is lost
                dropped.append(passed)
                continue
            case FactKind.DEFAULT_DIFFERS:
                name = fact.ms or fact.torch
                if passed is not None:
                    if fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                        edits.append(Edit(passed.keyword_span, fact.ms))
                    continue
                if name is None or fact.torch is None and fact.ms is None or (fact.torch == "reduction" and legacy is not None):
                    continue
                if any(other is not fact and other.ms == name and _passed(call, other) is not None
                       for other in target.params):
                    continue  # another torch parameter sets it (unbiased= for ddof): a translated fact writes it
                if starred or _keyword(call, name) is not None:
                    return None  # with torch None: a MindSpore parameter torch lacks, passed already (its vocabulary)
                if fact.torch == "dtype" and target.api in _FILL_DTYPE:
                    fill = _fill_dtype(call, _FILL_DTYPE[target.api])
                    if fill is None:
                        return None  # a fill value whose type is not known here: the result dtype cannot be told
                    explicit.extend(fill)
                    continue
                text = default_keyword(fact) or _copied_default(src, call, fact)
                if text is None:
                    safe = False
                    continue
                explicit.append(text)
                continue
            case FactKind.UNSUPPORTED_INPUTS:
                continue
            case _:
                assert_never(fact.kind)
    for arg in call.args:
        if arg.keyword in _GENERAL_DROPPED and arg.keyword not in declared and all(arg is not d for d in dropped):
            if not _general_default(src, arg):
                safe = False
            dropped.append(arg)
    if legacy is not None:
        dropped.extend(a for a in call.args if a.keyword in ("size_average", "reduce"))
        name = next((f.ms for f in target.params if f.kind is FactKind.RENAMED and f.torch == "reduction" and f.ms),
                    "reduction")
        explicit.append(f"{name}={legacy!r}")
    out = _keyword(call, "out") if "out" not in declared else None
    if out is not None:
        if out.starred or not _pure_text(src, out):
            return None
        dropped.append(out)
    if dropped:
        edits.extend(_removal_edits(src, call, dropped))
    if explicit:
        if call.kind is CallKind.ATTRIBUTE:
            return None
        insert = _insert_keywords(src, call, explicit, dropped, receiver_first)
        if insert is not None:
            edits.append(insert)
    return _Params(edits, safe, out)


def _translated_edit(call: ApiCall, fact: ParamFact, passed: Arg) -> Edit | None:
    """`unbiased=False` -> `ddof=0`: the argument rewritten as MindSpore's parameter with the value the
    fact pairs with torch's (of the same type: False is not 0 here). A positional value goes by keyword,
    so it must be the last positional argument. None: no pair for the value, or it cannot be moved."""
    if fact.ms is None or passed.starred or not passed.is_const:
        return None
    mapped = [m for t, m in fact.values if type(t) is type(passed.value) and t == passed.value]
    literal = _literal(mapped[0]) if mapped else None
    if literal is None:
        return None
    if passed.keyword is None:
        if passed is not [a for a in call.args if a.keyword is None][-1]:
            return None
        return Edit(passed.span, f"{fact.ms}={literal}")
    if passed.keyword_span is None:
        return None
    return Edit(Span(passed.keyword_span.start_line, passed.keyword_span.start_col,
                     passed.span.end_line, passed.span.end_col), f"{fact.ms}={literal}")


def _fill_dtype(call: ApiCall, rule: tuple[str, int]) -> list[str] | None:
    """The ``dtype=`` that gives torch's result dtype for a call that passes none: torch takes the default
    float dtype (float32) for a float fill value, bool for a bool and int64 for an int (which
    mindspore.ops.full infers too: nothing to write). None: the fill value is not a constant of these types."""
    arg = arg_for(call.args, *rule)
    if arg is None or arg.starred or not arg.is_const:
        return None
    if isinstance(arg.value, bool):
        return ["dtype=mindspore.bool_"]
    if isinstance(arg.value, int):
        return []
    if isinstance(arg.value, float):
        return ["dtype=mindspore.float32"]
    return None


def _copied_default(src: FixSource, call: ApiCall, fact: ParamFact) -> str | None:
    """``stride=<the kernel_size argument>`` where torch's default is another argument's value (the
    fact's `default_from`), when that argument's text can be written twice with the same value."""
    if fact.default_from is None or fact.torch_default is not None:
        return None
    arg = arg_for(call.args, fact.default_from, fact.from_position)
    if arg is None or arg.starred or not _pure_text(src, arg):
        return None
    return f"{fact.ms or fact.torch}={src.slice(arg.span)}"


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


# Targets that are methods in MindSpore where torch has an attribute, and the reverse.
_CALLED_ATTRIBUTES = frozenset({"mindspore.Tensor.real", "mindspore.Tensor.imag"})
_ATTRIBUTE_RESULTS = frozenset({"mindspore.Tensor.itemsize"})


def _called_attribute_fix(src: FixSource, call: ApiCall, target: Target) -> Fix:
    """`x.real` -> `x.real()` (a method in MindSpore)."""
    at = src.offset(call.span.end_line, call.span.end_col)
    return Fix(title=f"Call {target.api}", edits=(Edit(src.span_of(at, at), "()"),), safe=True)


def _size_tuple_edits(call: ApiCall) -> list[Edit]:
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) < 2 or any(a.starred for a in positional):
        return []
    first, last = positional[0].span, positional[-1].span
    return [Edit(Span(first.start_line, first.start_col, first.start_line, first.start_col), "("),
            Edit(Span(last.end_line, last.end_col, last.end_line, last.end_col), ")")]


def _device_move_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`x.cuda()` / `x.to(device)` -> `x` (unsafe: MindSpore sets the device once per program)."""
    if call.kind is not CallKind.METHOD or call.name_span is None:
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


def _device_object_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`torch.device("cuda")` -> `"cuda"` (unsafe): MindSpore has no device objects; the value is kept for
    the device keywords and moves that the other fixes drop."""
    if call.kind is not CallKind.CALL or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].starred:
        return None
    text = src.slice(call.args[0].span)
    try:
        node = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return None
    new = text if isinstance(node, (ast.Constant, ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
    return Fix(title="Keep the device name (MindSpore has no device objects)", edits=(Edit(call.span, new),),
               safe=False)


def _eval_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`model.eval()` -> `model.set_train(False)` (a registered rewrite: the data says only 'set_train')."""
    if call.kind is not CallKind.METHOD or call.args or call.name_span is None:
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    return Fix(title="Use mindspore.nn.Cell.set_train(False)",
               edits=(Edit(src.span_of(name_at, end), "set_train(False)"),), safe=True)


def _size_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`x.size()` -> `x.shape`, `x.size(d)` / `x.size(dim=d)` -> `x.shape[d]` (a registered rewrite:
    MindSpore's `size` is the element count and its `shape` an attribute, not a method)."""
    if call.kind is not CallKind.METHOD or call.name_span is None or len(call.args) > 1 or any(a.starred for a in call.args):
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    if not call.args:
        new = "shape"
    else:
        arg = call.args[0]
        if arg.keyword not in (None, "dim"):
            return None
        new = f"shape[{src.slice(arg.span)}]"
    return Fix(title="Use mindspore.Tensor.shape", edits=(Edit(src.span_of(name_at, end), new),), safe=True)


# In-place methods that change the receiver's shape: `copy_` cannot do that, `assign_value` replaces the data.
_SHAPE_INPLACE = frozenset({"squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_", "resize_",
                            "resize_as_", "as_strided_"})
_FRESH = ""  # the receiver is a new tensor (an operator's result): nothing else sees the update


def _pure_text(src: FixSource, arg: Arg) -> bool:
    """An argument whose text can be written a second time with the same value."""
    try:
        return _pure(ast.parse(f"({src.slice(arg.span)})", mode="eval").body)
    except SyntaxError:
        return False


def _pure(node: ast.expr) -> bool:
    """An expression that can be evaluated twice with the same result: names, attributes, constants and
    subscripts, slices and tuples of those."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.Subscript):
        return _pure(node.value) and _pure(node.slice)
    if isinstance(node, ast.Slice):
        return all(part is None or _pure(part) for part in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Tuple):
        return all(_pure(elt) for elt in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    return False


def _inplace_root(text: str, is_inplace: Callable[[str], bool]) -> tuple[str, bool] | None:
    """The tensor an in-place call updates, as text that is safe to evaluate again, and whether it is a
    view (a subscript, `x[0]`): the receiver if it is a name or attribute chain, the root of a chain of
    in-place calls (`m.mul_(a).add_(b)` updates `m`), `_FRESH` for an operator's result; None when it
    cannot be named (another call)."""
    try:
        node = ast.parse(f"({text.strip()})", mode="eval").body
    except SyntaxError:
        return None
    chained = False
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_inplace(node.func.attr):
        node, chained = node.func.value, True
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return _FRESH, False
    if not _pure(node) or isinstance(node, ast.Constant):
        return None
    view = isinstance(node, ast.Subscript)
    if view and chained:
        return None
    return (_dotted_text(ast.unparse(node)) if not view else ast.unparse(node)), view


def _inplace_fix(src: FixSource, call: ApiCall, form: Target, is_inplace: Callable[[str], bool]) -> Fix | None:
    """`R.op_(args)` -> `R.copy_(R.op(args))`: MindSpore's in-place methods leave the receiver unchanged on
    CPU (or do not exist), so the update is written as a copy into the receiver, which keeps its dtype and
    every alias of it. A view updated by a statement of its own (`x[0].add_(1)`) is assigned back
    (`x[0] = x[0].add(1)`): MindSpore's views do not write through. `form` is the out-of-place target (a
    Tensor method or a function taking the tensor first); shape-changing methods (`unsqueeze_`) use
    `assign_value`, which may change the shape."""
    if call.name_span is None:
        return None
    receiver_text = src.slice(call.span)[:_receiver_length(src, call)]
    found = _inplace_root(receiver_text, is_inplace)
    if found is None:
        return None
    root, view = found
    inplace_name = call.api.rpartition(".")[2]
    if view and (inplace_name in _SHAPE_INPLACE or src.expression_statement(call.span) is None):
        return None  # only a statement of its own can assign the view back
    params = _param_edits(src, call, form)
    if params is None or params.out is not None:
        return None
    edits, safe = params.edits, params.safe
    method = form.api.rpartition(".")[2]
    member = _is_member(form.api)
    if root == _FRESH:
        if not member:
            return None
        edits.insert(0, Edit(call.name_span, method))
        return Fix(title=f"Use {form.api} (the receiver is a new tensor)", edits=tuple(edits), safe=safe)
    store = "assign_value" if inplace_name in _SHAPE_INPLACE else "copy_"
    start = src.offset(call.span.start_line, call.span.start_col)
    end = src.offset(call.span.end_line, call.span.end_col)
    if member and view:
        edits.insert(0, Edit(call.name_span, method))
        edits.insert(0, Edit(src.span_of(start, start), f"{root} = "))
    elif member:
        edits.insert(0, Edit(call.name_span, f"{store}({root}.{method}"))
        edits.append(Edit(src.span_of(end, end), ")"))
    else:
        if not src.mindspore_visible(call.span):
            return None
        paren = _open_paren(src, call)
        if paren is None:
            return None
        head = f"{form.api}({root}" + (", " if call.args else "")
        if view:
            edits.insert(0, Edit(src.span_of(start, paren + 1), f"{root} = {head}"))
        else:
            name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
            edits.insert(0, Edit(src.span_of(name_at, paren + 1), f"{store}({head}"))
            edits.append(Edit(src.span_of(end, end), ")"))
        imp = src.import_edit()
        if imp is not None:
            edits.append(imp)
    return Fix(title=f"Update {root} in place with {form.api}", edits=tuple(edits), safe=safe)


def _receiver_move_fix(src: FixSource, call: ApiCall, target: Target, edits: list[Edit], safe: bool) -> Fix | None:
    """`x.std(dim=1)` -> `mindspore.ops.std(x, axis=1)`: a Tensor method whose MindSpore form is a function
    taking the tensor first (the tables' facts count its parameters that way)."""
    if call.name_span is None or not call.api.startswith("torch.Tensor.") or not target.api.startswith("mindspore.") \
            or not src.mindspore_visible(call.span):
        return None
    start = src.offset(call.span.start_line, call.span.start_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", start, name_at)
    paren = _open_paren(src, call)
    if dot < 0 or src.text[dot + 1:name_at].strip() or paren is None:
        return None
    edits.insert(0, Edit(src.span_of(start, start), f"{target.api}("))
    edits.insert(1, Edit(src.span_of(dot, paren + 1), ", " if call.args else ""))
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=f"Call {target.api}", edits=tuple(edits), safe=safe)


def _like_fix(src: FixSource, call: ApiCall, target: Target, edits: list[Edit], safe: bool) -> Fix | None:
    """`x.new_full(s, v)` -> `mindspore.ops.full(s, v, dtype=x.dtype)`: a method that builds a new tensor
    (`written_as: like`) whose MindSpore form is a function; the receiver gives only the dtype, unless the
    call passes one. The receiver is read again, so it must be a name, attribute or subscript."""
    if call.name_span is None or not src.mindspore_visible(call.span):
        return None
    receiver = src.slice(call.span)[:_receiver_length(src, call)].strip()
    try:
        node = ast.parse(f"({receiver})", mode="eval").body
    except SyntaxError:
        return None
    if not receiver or not _pure(node) or isinstance(node, ast.Constant):
        return None
    start = src.offset(call.span.start_line, call.span.start_col)
    paren = _open_paren(src, call)
    if paren is None or not call.args:
        return None
    edits.insert(0, Edit(src.span_of(start, paren + 1), f"{target.api}("))
    if _keyword(call, "dtype") is None:
        insert = _insert_keywords(src, call, [f"dtype={receiver}.dtype"])
        if insert is None:
            return None
        edits.append(insert)
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=f"Call {target.api}", edits=tuple(edits), safe=safe)


def _attribute_result_fix(src: FixSource, call: ApiCall, target: Target) -> Fix | None:
    """`x.element_size()` -> `x.itemsize` (an attribute in MindSpore)."""
    if call.name_span is None or call.args:
        return None
    whole = Span(call.name_span.start_line, call.name_span.start_col, call.span.end_line, call.span.end_col)
    return Fix(title=f"Use {target.api}", edits=(Edit(whole, target.api.rpartition(".")[2]),), safe=True)


def _open_paren(src: FixSource, call: ApiCall) -> int | None:
    """The offset of the "(" that opens a method call's arguments (only blanks after its name), or None."""
    if call.name_span is None:
        return None
    name_end = src.offset(call.name_span.end_line, call.name_span.end_col)
    paren = src.text.find("(", name_end)
    return paren if paren >= 0 and not src.text[name_end:paren].strip() else None


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
    if call.kind is not CallKind.ATTRIBUTE or not _DOTTED.match(src.slice(call.span)) or not src.names_a_constant(call.span) \
            or not src.mindspore_visible(call.span):
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
              src: FixSource, inplace_form: Target | None = None,
              is_inplace: Callable[[str], bool] = lambda name: False) -> Fix | None:
    """The fix for one finding, or None when it must be left to a human. `inplace_form`: for an in-place
    Tensor method, the out-of-place target its update is computed with."""
    if diag.confidence is not Confidence.HIGH or call.confidence is not Confidence.HIGH:
        return None
    if inplace_form is not None and call.kind is CallKind.METHOD and diag.code in ("TMS101", "TMS102", "TMS103"):
        return _inplace_fix(src, call, inplace_form, is_inplace)
    if call.api in _DEVICE_MOVES and diag.code in ("TMS101", "TMS102", "TMS103", "TMS104"):
        device = _device_move_fix(src, call)
        if device is not None:
            return device
    if call.api == "torch.nn.Module" and diag.code in _FIXABLE_CODES and target is not None:
        return _cell_fix(src, call)
    if call.api == "torch.device" and diag.code == "TMS103":
        return _device_object_fix(src, call)
    if call.api == "torch.nn.Module.eval" and diag.code in _FIXABLE_CODES and target is not None \
            and target.api == "mindspore.nn.Cell.set_train":
        return _eval_fix(src, call)
    if diag.code not in _FIXABLE_CODES or entry is None or target is None:
        return None
    if call.api == "torch.Tensor.size" and target.api == "mindspore.Tensor.shape":
        return _size_fix(src, call)
    if target.api in _CALLED_ATTRIBUTES and call.kind is CallKind.ATTRIBUTE:
        return _called_attribute_fix(src, call, target)
    if target.api in _ATTRIBUTE_RESULTS and call.kind is CallKind.METHOD:
        return _attribute_result_fix(src, call, target)
    fix = _with_fields(src, call, _with_cast(src, call, target, _target_fix(src, call, target)))
    return fix if fix is not None and fix.edits else None


def _target_fix(src: FixSource, call: ApiCall, target: Target) -> Fix | None:
    """The rewrite to `target`: its name, receiver and parameter facts."""
    like = call.kind is CallKind.METHOD and target.written_as is WrittenAs.LIKE
    moved = call.kind is CallKind.METHOD and not _is_member(target.api) and not like
    params = _param_edits(src, call, target, receiver_first=moved)
    if params is None or (params.out is not None and call.kind is not CallKind.CALL):
        return None
    edits, safe = params.edits, params.safe
    member = _is_member(call.api)
    if like:
        return _like_fix(src, call, target, edits, safe)
    if moved:
        return _receiver_move_fix(src, call, target, edits, safe)
    if call.kind is CallKind.METHOD:
        if call.name_span is None:
            return None
        old = call.api.rpartition(".")[2]
        new = target.api.rpartition(".")[2]
        if new != old:
            edits.insert(0, Edit(call.name_span, new))
        # the same-named method has nothing to change at the call site (no edits: no fix, unless a cast)
        return Fix(title=f"Use {target.api}", edits=tuple(edits), safe=safe)
    if member or _is_member(target.api):
        return None
    if call.kind is CallKind.CALL:
        replaced = call.func_span
        if replaced is None:
            return None
    else:  # an attribute (a method returned above)
        replaced = call.span
    if not _DOTTED.match(src.slice(replaced)) or not src.names_a_constant(replaced):
        return None  # a variable holding a torch object keeps it: its assignment is rewritten instead
    if target.api.startswith("mindspore.") and not src.mindspore_visible(replaced):
        return None  # a local name `mindspore` would shadow the module the rewrite names
    edits.insert(0, Edit(replaced, target.api))
    if call.kind is CallKind.CALL and target.api in _SIZE_TUPLE:
        edits.extend(_size_tuple_edits(call))
    if call.kind is CallKind.CALL and target.api in _SHAPE_TUPLE:
        shape = _shape_tuple_edits(src, call, _SHAPE_TUPLE[target.api])
        if shape is None:
            return None
        edits[1:1] = shape  # before the keywords inserted at the same point
    if call.kind is CallKind.CALL and call.api in _TRAINING_DEPENDENT and target.api.startswith("mindspore."):
        end = src.offset(call.span.end_line, call.span.end_col)
        if not _MODE_CALL.match(src.text, end):  # nn.BatchNorm2d(c).eval() sets the mode itself
            edits.append(Edit(src.span_of(end, end), ".set_train()"))
    if params.out is not None:
        # MindSpore has no out= tensors: the result is copied into the tensor torch would have written
        # (unsafe: torch would also resize an out tensor of another shape).
        start = src.offset(call.span.start_line, call.span.start_col)
        end = src.offset(call.span.end_line, call.span.end_col)
        edits.append(Edit(src.span_of(start, start), f"{src.slice(params.out.span)}.copy_("))
        edits.append(Edit(src.span_of(end, end), ")"))
        safe = False
    if target.api.startswith("mindspore."):
        imp = src.import_edit()
        if imp is not None:
            edits.append(imp)
    verb = "Call" if call.kind is CallKind.CALL else "Use"
    return Fix(title=f"{verb} {target.api}", edits=tuple(edits), safe=safe)


class Fixer:
    """Gives a fixable finding its `Fix` where the finding is made (`checks.check_call`), from the
    call it was found on.

    The form written is the one for the MindSpore version and the device (`MappingEntry.choose`),
    with that form's parameter facts (e.g. `mindspore.nn.Conv2d` and `has_bias=` on the CPU)."""

    def __init__(self, text: str, tree: ast.Module | None, table: MappingTable, version: tuple[int, ...],
                 device: str | None = DEFAULT_DEVICE) -> None:
        self.text, self.tree, self.table, self.version, self.device = text, tree, table, version, device
        self._src: FixSource | None = None  # built for the first finding that may have a fix

    def _is_inplace(self, name: str) -> bool:
        """An in-place Tensor method that the fix rewrites (so it really updates its receiver)."""
        return _inplace_form(self.table.lookup(f"torch.Tensor.{name}"), self.version, self.device) is not None

    def __call__(self, call: ApiCall, diag: Diagnostic) -> Diagnostic:
        if diag.fix is not None or diag.span != call.span or diag.torch_api != call.api \
                or not (diag.code in _FIXABLE_CODES or call.api in _DEVICE_MOVES or call.api == "torch.device"):
            return diag
        if self._src is None:
            self._src = FixSource(self.text, self.tree)
        src = self._src
        if call.api in _REAL_OF_COMPLEX and _complex_operand(src, call):
            fix = _complex_abs_fix(src, call)
            return replace(diag, fix=fix) if fix is not None else diag
        entry = self.table.lookup(call.api)
        target = entry.target_for(self.version, self.device) if entry is not None else None
        try:
            fix = build_fix(call, diag, entry, target, src, _inplace_form(entry, self.version, self.device),
                            self._is_inplace)
            fix = src.respelled(fix, call.span) if fix is not None else None
        except Exception:  # a fix that cannot be built must never cost the finding or the file's analysis
            fix = None
        return replace(diag, fix=fix) if fix is not None else diag


def _complex_operand(src: FixSource, call: ApiCall) -> bool:
    """True when the tensor the call works on (a method's receiver, else its first positional argument) is
    written as a call of a function with a complex result (`_COMPLEX_RESULTS`)."""
    if call.kind is CallKind.METHOD:
        if call.func_span is None:
            return False
        text = src.slice(call.func_span).rpartition(".")[0]
    else:
        first = arg_for(call.args, None, 0)
        if first is None:
            return False
        text = src.slice(first.span)
    text = text.strip()
    if _called_name(text) not in _COMPLEX_RESULTS:  # cheap: a chain of n calls stays linear
        return False
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _COMPLEX_RESULTS


def _called_name(text: str) -> str | None:
    """The name called last in `text` when it ends with a call (`a.fft.rfft(x)` -> "rfft"), read from the
    end without parsing; None otherwise. A first filter only: the caller parses what passes it."""
    if not text.endswith(")"):
        return None
    depth = 0
    for at in range(len(text) - 1, -1, -1):
        if text[at] == ")":
            depth += 1
        elif text[at] == "(":
            depth -= 1
            if depth == 0:
                end = at
                while end > 0 and text[end - 1].isspace():
                    end -= 1
                start = end
                while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    start -= 1
                return text[start:end] or None
    return None


def _complex_abs_fix(src: FixSource, call: ApiCall) -> Fix | None:
    """`z.abs()` / `torch.abs(z)` of a complex `z` -> `mindspore.ops.ComplexAbs()(z)` (only the text around
    the operand is edited, so a fix inside it still applies)."""
    if call.func_span is None or not src.mindspore_visible(call.span):
        return None
    form = "mindspore.ops.ComplexAbs()"
    if call.kind is CallKind.METHOD:
        if call.args or call.name_span is None:
            return None
        start = src.offset(call.func_span.start_line, call.func_span.start_col)
        dot = src.text.rfind(".", start, src.offset(call.name_span.start_line, call.name_span.start_col))
        end = src.offset(call.span.end_line, call.span.end_col)
        edits = [Edit(src.span_of(start, start), form + "("), Edit(src.span_of(dot, end), ")")]
    else:
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].starred:
            return None
        edits = [Edit(call.func_span, form)]
    imp = src.import_edit()
    return Fix(f"Use {form} (the magnitudes of a complex tensor, as a real tensor)",
               tuple([imp, *edits] if imp is not None else edits))


def _inplace_form(entry: MappingEntry | None, version: tuple[int, ...],
                  device: str | None = DEFAULT_DEVICE) -> Target | None:
    """The out-of-place form an in-place Tensor method's update is computed with: the entry's target
    for the version and device when the tables say it is written as a copy into the receiver
    (`written_as: copy`, scripts/build_tables.py's `inplace_forms`)."""
    if entry is None or not entry.api.startswith("torch.Tensor."):
        return None
    form = entry.target_for(version, device)
    return form if form is not None and form.written_as is WrittenAs.COPY else None
