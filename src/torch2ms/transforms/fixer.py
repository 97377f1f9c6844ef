"""The fix of a finding: text edits over the scanned text, from the tables' facts, and the transforms the
tables name (`base.REGISTRY`).

What the core rewrites (safe fixes): the callee or referenced name of a table entry (``torch.cat`` ->
``mindspore.mint.cat``); a Tensor/Cell method whose target is a differently named method of the same
receiver; the parameter facts (`param_edits.py`); in-place methods written so the receiver is really
updated (``x.add_(y)`` -> ``x.copy_(x.add(y))``, `written_as: copy`); methods whose target is a function
(``x.std()`` -> ``mindspore.ops.std(x, ddof=1)``) or builds a tensor like the receiver (`written_as:
like`); a result dtype the tables say differs cast back (`result_dtype`); the arguments of a call of a class a variable holds
(`norm_layer(dim, eps=1e-6)`, unsafe: `HELD_TITLE`), whose class is rewritten where the value is written.
Everything else is a transform (a composed form: `compose.py`).

Never fixed: missing APIs (unless a transform says how), dynamic-shape risks, low-confidence receivers,
unmapped APIs, values a parameter fact declares unsupported, facts that need a human (``semantics_differ``,
``added_required``); a ``semantics_differ`` fact that covers only input variants leaves the rewrite safe.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..mappings import TableView
from ..model import (
    ApiCall, CallKind, Confidence, Diagnostic, Edit, Fix, MappingEntry, ShapeResult, Span, Target, WrittenAs,
)
from ..source import SourceText
from .base import FIXABLE_CODES, PASS, Context, Transform, rewrites
from .edits import (
    DOTTED, EditBuilder, dotted_text, insert_keywords, is_member, keyword_arg, open_paren, pure, receiver_length,
)
from .param_edits import param_edits, result_dtype


ONCE = "__arg"  # the parameter of the lambda `Fixer.written` passes a computed value to (`once`)


def _with_cast(src: EditBuilder, call: ApiCall, target: Target, fix: Fix | None, item: int | None) -> Fix | None:
    """`fix` with the result cast to torch's dtype where the target states another one:
    `x.argsort()` -> `x.argsort().astype(mindspore.int64)`; where the dtype is that of a tuple result's
    item (`item`, from a transform: the indices of (values, indices)) the result becomes
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
    if item is not None:
        items = ", ".join(f"r[{i}]{cast if i == item else ''}" for i in range(max(item + 1, 2)))
        edits = [Edit(src.span_of(start, start), f"(lambda r: ({items}))("), *edits, Edit(src.span_of(end, end), ")")]
    else:
        edits.append(Edit(src.span_of(end, end), cast))
    imp = src.import_edit()
    if imp is not None:  # first: it may be inserted where the statement starts, before the wrapper
        edits = [imp, *(e for e in edits if e != imp)]
    return Fix(f"{title}, with torch's result dtype {dtypes[0]}", tuple(edits), safe=fix.safe)


# In-place methods that change the receiver's shape: `copy_` cannot do that, `assign_value` replaces the data.
_SHAPE_INPLACE = frozenset({"squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_", "resize_",
                            "resize_as_", "as_strided_"})


_FRESH = ""  # the receiver is a new tensor (an operator's result): nothing else sees the update


def _inplace_root(text: str, is_inplace: Callable[[str], bool],
                  is_fresh: Callable[[ast.Call], bool] = lambda node: False) -> tuple[str, bool] | None:
    """The tensor an in-place call updates, as text that is safe to evaluate again, and whether it is a
    view (a subscript, `x[0]`): the receiver if it is a name or attribute chain, the root of a chain of
    in-place calls (`m.mul_(a).add_(b)` updates `m`), `_FRESH` for an operator's result or a call `is_fresh`
    knows makes a new tensor (``torch.full(s, v).scatter_(...)``); None when it cannot be named (another call)."""
    try:
        node = ast.parse(f"({text.strip()})", mode="eval").body
    except SyntaxError:
        return None
    chained = False
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_inplace(node.func.attr):
        node, chained = node.func.value, True
    if isinstance(node, (ast.BinOp, ast.UnaryOp)) or isinstance(node, ast.Call) and is_fresh(node):
        return _FRESH, False
    if not pure(node) or isinstance(node, ast.Constant):
        return None
    view = isinstance(node, ast.Subscript)
    if view and chained:
        return None
    return (dotted_text(ast.unparse(node)) if not view else ast.unparse(node)), view


def _inplace_fix(src: EditBuilder, call: ApiCall, form: Target, is_inplace: Callable[[str], bool],
                 is_fresh: Callable[[ast.Call], bool] = lambda node: False) -> Fix | None:
    """`R.op_(args)` -> `R.copy_(R.op(args))`: MindSpore's in-place methods leave the receiver unchanged on
    CPU (or do not exist), so the update is written as a copy into the receiver, which keeps its dtype and
    every alias of it. A view updated by a statement of its own (`x[0].add_(1)`) is assigned back
    (`x[0] = x[0].add(1)`): MindSpore's views do not write through. `form` is the out-of-place target (a
    Tensor method or a function taking the tensor first); shape-changing methods (`unsqueeze_`) use
    `assign_value`, which may change the shape."""
    if call.name_span is None:
        return None
    receiver_text = src.slice(call.span)[:receiver_length(src, call)]
    found = _inplace_root(receiver_text, is_inplace, is_fresh)
    if found is None:
        return None
    root, view = found
    inplace_name = call.api.rpartition(".")[2]
    if view and (inplace_name in _SHAPE_INPLACE or src.expression_statement(call.span) is None):
        return None  # only a statement of its own can assign the view back
    params = param_edits(src, call, form)
    if params is None or params.out is not None:
        return None
    edits, safe = params.edits, params.safe
    method = form.api.rpartition(".")[2]
    member = is_member(form.api)
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
        paren = open_paren(src, call)
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


def _receiver_move_fix(src: EditBuilder, call: ApiCall, target: Target, edits: list[Edit], safe: bool) -> Fix | None:
    """`x.std(dim=1)` -> `mindspore.ops.std(x, axis=1)`: a Tensor method whose MindSpore form is a function
    taking the tensor first (the tables' facts count its parameters that way)."""
    if call.name_span is None or not call.api.startswith("torch.Tensor.") or not target.api.startswith("mindspore.") \
            or not src.mindspore_visible(call.span):
        return None
    start = src.offset(call.span.start_line, call.span.start_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", start, name_at)
    paren = open_paren(src, call)
    if dot < 0 or src.text[dot + 1:name_at].strip() or paren is None:
        return None
    edits.insert(0, Edit(src.span_of(start, start), f"{target.api}("))
    edits.insert(1, Edit(src.span_of(dot, paren + 1), ", " if call.args else ""))
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=f"Call {target.api}", edits=tuple(edits), safe=safe)


def _like_fix(src: EditBuilder, call: ApiCall, target: Target, edits: list[Edit], safe: bool) -> Fix | None:
    """`x.new_full(s, v)` -> `mindspore.ops.full(s, v, dtype=x.dtype)`: a method that builds a new tensor
    (`written_as: like`) whose MindSpore form is a function; the receiver gives only the dtype, unless the
    call passes one. The receiver is read again, so it must be a name, attribute or subscript."""
    if call.name_span is None or not src.mindspore_visible(call.span):
        return None
    receiver = src.slice(call.span)[:receiver_length(src, call)].strip()
    try:
        node = ast.parse(f"({receiver})", mode="eval").body
    except SyntaxError:
        return None
    if not receiver or not pure(node) or isinstance(node, ast.Constant):
        return None
    start = src.offset(call.span.start_line, call.span.start_col)
    paren = open_paren(src, call)
    if paren is None or not call.args:
        return None
    edits.insert(0, Edit(src.span_of(start, paren + 1), f"{target.api}("))
    if keyword_arg(call, "dtype") is None:
        insert = insert_keywords(src, call, [f"dtype={receiver}.dtype"])
        if insert is None:
            return None
        edits.append(insert)
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=f"Call {target.api}", edits=tuple(edits), safe=safe)


def build_fix(call: ApiCall, diag: Diagnostic, entry: MappingEntry | None, target: Target | None,
              src: EditBuilder, inplace_form: Target | None = None,
              is_inplace: Callable[[str], bool] = lambda name: False,
              is_fresh: Callable[[ast.Call], bool] = lambda node: False) -> Fix | None:
    """The fix for one finding, or None when it must be left to a human. `inplace_form`: for an in-place
    Tensor method, the out-of-place target its update is computed with (`is_inplace`: a method name that is
    such a method; `is_fresh`: a call that makes a new tensor, whose in-place update nothing else sees)."""
    if diag.confidence is not Confidence.HIGH or call.confidence is not Confidence.HIGH:
        return None
    ctxs = [(Context(src, call, diag, entry, target, rewrite), transform)
            for rewrite, transform in rewrites(entry, target)
            if diag.code in transform.codes and (target is not None or not transform.needs_target)]
    for ctx, transform in ctxs:  # a rewrite the tables name for the whole call comes first, in place or not
        whole = transform.whole(ctx)
        if whole is not PASS:
            for other_ctx, other in ctxs:  # how the code reads the result still applies (fields as indexes)
                if whole is not None and other is not transform:
                    whole = other.result(other_ctx, whole)
            return whole
    if inplace_form is not None and call.kind is CallKind.METHOD and diag.code in ("TMS101", "TMS102", "TMS103"):
        return _inplace_fix(src, call, inplace_form, is_inplace, is_fresh)
    if diag.code not in FIXABLE_CODES or entry is None or target is None:
        return None
    item = next((i for i in (t.result_item(c) for c, t in ctxs) if i is not None), None)
    fix = _with_cast(src, call, target, _target_fix(src, call, target, ctxs), item)
    for ctx, transform in ctxs:
        if fix is not None:
            fix = transform.result(ctx, fix)
    return fix if fix is not None and fix.edits else None


# The title of a fix that rewrites the arguments of a call of a class a variable holds (`fix.held_call_fix`).
HELD_TITLE = "Rewrite the arguments torch's class receives"
ATTRIBUTE_TITLE = "Write the attribute's MindSpore name"  # the fix of a layer's attribute (checks.layer_attribute)


def _held_class(src: EditBuilder, call: ApiCall) -> bool:
    """A call of a torch class held by a variable (`norm_layer(dim)`, `self.act_layer(inplace=True)`) or made
    by a `partial` called at once: not a name that is the class itself."""
    if call.kind is not CallKind.CALL or call.func_span is None or not call.api.rpartition(".")[2][:1].isupper():
        return False
    text = src.slice(call.func_span)
    if DOTTED.match(text):
        return not src.names_a_constant(call.func_span)
    try:
        func = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return False
    return isinstance(func, ast.Call)


def _call_edits(ctxs: list[tuple[Context, Transform]], edits: list[Edit]) -> list[Edit] | None:
    """`edits` with what the target's rewrites change in the call's arguments (a size as one tuple); None when
    one of them cannot write the call."""
    for ctx, transform in ctxs:
        more = transform.call_edits(ctx, edits)
        if more is None:
            return None
        edits = more
    return edits


def _target_fix(src: EditBuilder, call: ApiCall, target: Target, ctxs: list[tuple[Context, Transform]]) -> Fix | None:
    """The rewrite to `target`: its name, receiver and parameter facts."""
    like = call.kind is CallKind.METHOD and target.written_as is WrittenAs.LIKE
    moved = call.kind is CallKind.METHOD and not is_member(target.api) and not like
    held = _held_class(src, call)
    params = param_edits(src, call, target, receiver_first=moved, defaults=not held)
    if params is None or (params.out is not None and call.kind is not CallKind.CALL):
        return None
    edits, safe = params.edits, params.safe
    member = is_member(call.api)
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
        changed = _call_edits(ctxs, edits)
        if changed is None:
            return None
        # the same-named method has nothing to change at the call site (no edits: no fix, unless a cast)
        return Fix(title=f"Use {target.api}", edits=tuple(changed), safe=safe)
    if member or is_member(target.api):
        return None
    if call.kind is CallKind.CALL:
        replaced = call.func_span
        if replaced is None:
            return None
    else:  # an attribute (a method returned above)
        replaced = call.span
    if held:
        # `norm_layer(dim, eps=1e-3)`, the class a value the scan follows (a parameter's default, a partial):
        # the arguments it receives here are rewritten, the class where the value is written. Unsafe: a
        # caller may pass another class.
        if call.kind is not CallKind.CALL:
            return None
        safe = False
    elif not DOTTED.match(src.slice(replaced)) or not src.names_a_constant(replaced):
        return None  # a variable holding a torch object keeps it: its assignment is rewritten instead
    if target.api.startswith("mindspore.") and not src.mindspore_visible(replaced):
        return None  # a local name `mindspore` would shadow the module the rewrite names
    if not held:
        edits.insert(0, Edit(replaced, target.api))
    if call.kind is CallKind.CALL:
        changed = _call_edits(ctxs, edits)
        if changed is None:
            return None
        edits = changed
    if held and not edits:
        return None  # nothing to change where the class is called
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
    if held:
        return Fix(title=f"{HELD_TITLE} (as {target.api})", edits=tuple(edits), safe=safe)
    verb = "Call" if call.kind is CallKind.CALL else "Use"
    return Fix(title=f"{verb} {target.api}", edits=tuple(edits), safe=safe)


class Fixer:
    """Gives a fixable finding its `Fix` where the finding is made (`checks.check_call`), from the
    call it was found on.

    The form written is the one for the MindSpore version and the device (`MappingEntry.choose`),
    with that form's parameter facts (e.g. `mindspore.nn.Conv2d` and `has_bias=` on the CPU)."""

    def __init__(self, text: str, tree: ast.Module | None, view: TableView,
                 positions: SourceText | None = None) -> None:
        self.text, self.tree, self.view = text, tree, view
        self.positions = positions  # the scan's positions of `text`, whose line starts the fixes share
        self._src: EditBuilder | None = None  # built for the first finding that may have a fix
        self._imports: dict[str, str] | None = None  # the file's module-level import names (`_is_fresh`)

    def _is_inplace(self, name: str) -> bool:
        """An in-place Tensor method that the fix rewrites (so it really updates its receiver)."""
        return _inplace_form(self.view, self.view.lookup(f"torch.Tensor.{name}")) is not None

    def _is_fresh(self, node: ast.Call) -> bool:
        """A call of a torch function that the tables say builds a new tensor from sizes (`shape_result:
        from_sizes`: ``torch.zeros(n)``, ``torch.full(s, v)``), named through the file's module-level imports."""
        if self._imports is None:
            self._imports = {}
            for stmt in self.tree.body if self.tree is not None else []:
                if isinstance(stmt, ast.Import):
                    for alias in stmt.names:
                        self._imports[alias.asname or alias.name.partition(".")[0]] = \
                            alias.name if alias.asname else alias.name.partition(".")[0]
                elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                    for alias in stmt.names:
                        self._imports[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        names, func = [], node.func
        while isinstance(func, ast.Attribute):
            names.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in self._imports:
            return False
        entry = self.view.lookup(".".join([self._imports[func.id], *reversed(names)]))
        return entry is not None and entry.shape_result is ShapeResult.FROM_SIZES

    def _builder(self) -> EditBuilder:
        if self._src is None:
            self._src = EditBuilder(self.text, self.tree, self.positions)
        return self._src

    def written(self, span: Span, form: str, once: bool = False) -> tuple[Edit, ...] | None:
        """The edits that write `form` (MindSpore code spelled from ``mindspore.``, each ``{arg}`` the text at
        `span`, in parentheses where it is more than a name, attribute or subscript) in place of that text, with
        the import the file lacks, spelled as the file spells the module; None where it cannot be written, or
        the text calls something (`form` may evaluate it more than once), unless `once` (`form` an expression):
        then the text is evaluated once, passed to ``(lambda __arg: FORM)``."""
        src = self._builder()
        text = src.slice(span)
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            return None
        if any(isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(node)):
            return None
        if any(isinstance(n, ast.Call) for n in ast.walk(node)):
            if not once:
                return None
            written = f"(lambda {ONCE}: {form.format(arg=ONCE)})({text.strip()})"
        else:
            written = form.format(arg=text if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) else f"({text})")
        edits = src.replaced_call(span, written)
        fix = src.respelled(Fix("", tuple(edits)), span) if edits is not None else None
        return fix.edits if fix is not None else None

    def __call__(self, call: ApiCall, diag: Diagnostic) -> Diagnostic:
        if diag.fix is not None or diag.span != call.span or diag.torch_api != call.api:
            return diag
        entry = self.view.lookup(call.api)
        target = self.view.target(entry) if entry is not None else None
        if diag.code not in FIXABLE_CODES and not any(diag.code in t.codes for _, t in rewrites(entry, target)):
            return diag
        src = self._builder()
        try:
            fix = build_fix(call, diag, entry, target, src, _inplace_form(self.view, entry),
                            self._is_inplace, self._is_fresh)
            fix = src.respelled(fix, call.span) if fix is not None else None
        except Exception:  # a fix that cannot be built must never cost the finding or the file's analysis
            fix = None
        return diag.with_fix(fix) if fix is not None else diag


def _inplace_form(view: TableView, entry: MappingEntry | None) -> Target | None:
    """The out-of-place form an in-place Tensor method's update is computed with: the entry's target
    for the version and device when the tables say it is written as a copy into the receiver
    (`written_as: copy`, scripts/build_tables.py's `inplace_forms`)."""
    if entry is None or not entry.api.startswith("torch.Tensor."):
        return None
    form = view.target(entry)
    return form if form is not None and form.written_as is WrittenAs.COPY else None
