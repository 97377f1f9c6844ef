"""`class F(torch.autograd.Function)` -> a `mindspore.nn.Cell` with a custom gradient, and `F.apply(...)` ->
`F()(...)` (unsafe): MindSpore's form is a Cell whose `construct` is the forward and whose
`bprop(self, *inputs, out, dout)` returns one gradient per input (checked on MindSpore 2.10, PyNative and GRAPH:
`dout` is the output's gradient, a tuple where the forward returns a tuple; a single input's gradient may be
returned alone; None stands for a non-tensor input, while a tensor input needs a zero tensor in GRAPH mode;
GRAPH mode passes bprop only the arguments the call wrote, so the calls rewritten here write the forward's
literal defaults).

The class is rewritten with libcst: `@staticmethod forward(ctx, ...)` becomes `construct(self, ...)` without
the statements that only fill `ctx`; `backward(ctx, *grads)` becomes `bprop(self, <forward's inputs>, out, dout)`
whose body first replays the forward's statements the backward needs (`ctx.save_for_backward(a, b)` as a tuple
of the saved values, the forward's own output taken from `out`, `ctx.x = v` as a local `ctx_x`), then the
backward's body (`ctx.saved_tensors` is that tuple, `ctx.needs_input_grad` one True per input); a gradient
returned as None for an input is a zero tensor where the input is a tensor. What it cannot port (a forward that
returns early, `ctx` handed to another function, decorators other than staticmethod, a `setup_context`, ...) keeps
the finding, whose message says why (`blocker`, read by the readiness check TMS334).

Used by torch.autograd.Function and torch.autograd.function.Function."""

from __future__ import annotations

import ast
import re

from .. import syntax
from ..model import Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import EditBuilder

NAME = "custom_gradient"
_SAVE = "save_for_backward"
_SAVED = ("saved_tensors", "saved_variables")
_NEEDS = "needs_input_grad"
_DROPPED = ("mark_dirty", "mark_non_differentiable", "set_materialize_grads")  # change no gradient MindSpore takes
_CTX_CALLS = (_SAVE, *_DROPPED)


class _Blocked(Exception):
    """The class cannot be ported; the message says why."""


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}


def _check_method(fn: ast.FunctionDef) -> str:
    """The method's first parameter (ctx), after checking its form."""
    for deco in fn.decorator_list:
        if not (isinstance(deco, ast.Name) and deco.id == "staticmethod"):
            raise _Blocked(f"its {fn.name} has the decorator {ast.unparse(deco)}")
    args = fn.args
    if args.kwonlyargs or args.kwarg or args.posonlyargs or not args.args:
        raise _Blocked(f"its {fn.name} takes keyword-only, positional-only or ** parameters")
    if fn.name == "forward" and args.vararg:
        raise _Blocked("its forward takes *args (MindSpore's bprop receives the inputs one by one)")
    return args.args[0].arg


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of `body`, not those of functions or classes defined in it."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def _check_ctx(fn: ast.FunctionDef, ctx: str, forward: bool) -> None:
    """`ctx` used only as the forms this transform ports."""
    parents = {id(c): n for n in _own_nodes(fn.body) for c in ast.iter_child_nodes(n)}
    for node in _own_nodes(fn.body):
        if not (isinstance(node, ast.Name) and node.id == ctx):
            continue
        parent = parents.get(id(node))
        if not isinstance(parent, ast.Attribute):
            raise _Blocked(f"its {fn.name} uses ctx as a value (line {node.lineno}), not only its attributes")
        call = parents.get(id(parent))
        if parent.attr in _CTX_CALLS:
            statement = parents.get(id(call)) if isinstance(call, ast.Call) and call.func is parent else None
            if not isinstance(statement, ast.Expr) or parent.attr == _SAVE and not forward:
                raise _Blocked(f"its {fn.name} calls ctx.{parent.attr} other than as a statement of the forward")
            continue
        if isinstance(call, ast.Call) and call.func is parent:
            raise _Blocked(f"its {fn.name} calls ctx.{parent.attr}")
        if parent.attr in (*_SAVED, _NEEDS) and (forward or not isinstance(parent.ctx, ast.Load)):
            raise _Blocked(f"its {fn.name} uses ctx.{parent.attr} where a backward reads it")


def _names(nodes: list[ast.AST], ctx: str, saved: str) -> tuple[set[str], set[str]]:
    """(names written, names read) by these nodes, a ctx attribute as its local ``ctx_NAME``."""
    written: set[str] = set()
    read: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and node.id != ctx:
            (written if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == ctx:
            name = saved if node.attr in _SAVED else f"ctx_{node.attr}"
            if node.attr == _SAVE:
                written.add(saved)
            elif node.attr not in _CTX_CALLS:
                (written if isinstance(node.ctx, ast.Store) else read).add(name)
    return written, read


class Plan:
    """What the port of one class writes, decided on its ast."""

    def __init__(self, cls: ast.ClassDef) -> None:
        methods = _methods(cls)
        if "setup_context" in methods:
            raise _Blocked("its forward leaves ctx to setup_context")
        forward, backward = methods.get("forward"), methods.get("backward") or methods.get("vjp")
        if forward is None or backward is None:
            raise _Blocked("it has no forward or no backward of its own")
        if any(isinstance(s, ast.FunctionDef) and s.name in ("construct", "bprop") for s in cls.body):
            raise _Blocked("it already defines construct or bprop")
        self.forward, self.backward = forward, backward
        self.ctx = _check_method(forward)
        self.bctx = _check_method(backward)
        _check_ctx(forward, self.ctx, True)
        _check_ctx(backward, self.bctx, False)
        self.inputs = [a.arg for a in forward.args.args[1:]]
        self.forward_reads = {n.attr for n in _own_nodes(forward.body) if isinstance(n, ast.Attribute)
                              and isinstance(n.value, ast.Name) and n.value.id == self.ctx
                              and isinstance(n.ctx, ast.Load)}
        last = forward.body[-1]
        returns = [n for n in _own_nodes(forward.body) if isinstance(n, ast.Return)]
        if not isinstance(last, ast.Return) or last.value is None or returns != [last]:
            raise _Blocked("its forward does not end in its only return")
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(forward.body + backward.body)):
            raise _Blocked("its forward or backward is a generator")
        self.output = last.value
        self.grads = [a.arg for a in backward.args.args[1:]]
        self.star_grads = backward.args.vararg.arg if backward.args.vararg else None
        for ret in (n for n in _own_nodes(backward.body) if isinstance(n, ast.Return)):
            if isinstance(ret.value, ast.Tuple) and len(ret.value.elts) != len(self.inputs):
                raise _Blocked(f"its backward returns {len(ret.value.elts)} gradients for {len(self.inputs)} "
                               f"inputs (line {ret.lineno})")
        used = {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(cls) if isinstance(n, (ast.Name, ast.arg))}
        self.saved = _fresh("saved", used)
        self.out = _fresh("out", used)
        # the forward's statements the backward needs, replayed in bprop
        own, needed = _names(_own_nodes(backward.body), self.bctx, self.saved)
        needed -= own - {self.saved}  # the backward's own locals (a name it reads before writing it is not told)
        self.replayed: list[int] = []
        self.from_out: set[str] = set()  # names saved that are the forward's output: taken from `out`
        output_name = self.output.id if isinstance(self.output, ast.Name) else None
        body = forward.body[:-1]
        for index in range(len(body) - 1, -1, -1):
            stmt = body[index]
            written, read = _names(_own_nodes([stmt]), self.ctx, self.saved)
            if written & needed:
                self.replayed.append(index)
                later = _names(_own_nodes(body[index + 1:]), self.ctx, self.saved)[0]
                if output_name is not None and self._saves(stmt) and output_name not in later:
                    self.from_out.add(output_name)
                    read.discard(output_name)
                needed |= read
        self.replayed.reverse()
        local = set().union(*(_names(_own_nodes([body[i]]), self.ctx, self.saved)[0] for i in self.replayed)) \
            if self.replayed else set()
        single = not self.star_grads and len(self.grads) == 1
        self.dout = self.grads[0] if single and self.grads[0] not in local and self.grads[0] not in self.inputs \
            and self.grads[0] != self.out else _fresh("dout", used)
        if self.star_grads is None and not self.grads:
            raise _Blocked("its backward takes no gradient")

    def _saves(self, stmt: ast.stmt) -> bool:
        return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == _SAVE


def _fresh(base: str, used: set[str]) -> str:
    name, n = base, 0
    while name in used:
        n += 1
        name = f"{base}_{n}"
    return name


def blocker(cls: ast.ClassDef) -> str | None:
    """Why the custom-gradient class cannot be ported by this transform, or None when it can."""
    try:
        Plan(cls)
    except _Blocked as exc:
        return str(exc)
    return None


def _indent(text: str, prefix: str) -> str | None:
    """`text` (a statement starting at its first character) re-indented from `prefix` to none; None where a line
    is not indented by `prefix` (a string's continuation line, for one)."""
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        if line.strip() and not line.startswith(prefix):
            return None
        out.append(line[len(prefix):] if line.strip() else "")
    return "\n".join(out)


def _apply_edits(src: EditBuilder, cls: ast.ClassDef, plan: Plan) -> list[Edit] | None:
    """`F.apply(...)` -> `F()(...)` in the file (with the forward's literal defaults the call leaves out, which
    GRAPH mode does not pass to bprop); `F.apply` as a value -> `F()`; None where the class calls its own."""
    parents = {id(c): n for n in syntax.walk(src.tree) for c in ast.iter_child_nodes(n)}
    defaults = [ast.unparse(d) for d in plan.forward.args.defaults]
    literal = all(_literal(d) for d in plan.forward.args.defaults)
    edits = []
    for node in syntax.walk(src.tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "apply" and isinstance(node.value, ast.Name)
                and node.value.id == cls.name and isinstance(node.ctx, ast.Load)):
            continue
        if (cls.lineno, cls.col_offset) <= (node.lineno, node.col_offset) \
                and (node.lineno, node.col_offset) <= (cls.end_lineno or 0, cls.end_col_offset or 0):
            return None
        edits.append(Edit(src.span(node), f"{cls.name}()"))
        call = parents.get(id(node))
        if isinstance(call, ast.Call) and call.func is node and literal and call.args and not call.keywords \
                and not any(isinstance(a, ast.Starred) for a in call.args):
            missing = len(plan.inputs) - len(call.args)
            if 0 < missing <= len(defaults):
                end = src.span(call.args[-1])
                at = src.span_of(src.offset(end.end_line, end.end_col), src.offset(end.end_line, end.end_col))
                edits.append(Edit(at, "".join(f", {d}" for d in defaults[len(defaults) - missing:])))
    return edits


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def custom_gradient_fix(src: EditBuilder, cls: ast.ClassDef, base: int) -> Fix | None:
    try:
        plan = Plan(cls)
    except _Blocked:
        return None
    start = src.offset(cls.lineno, src.char_col(cls.lineno, cls.col_offset))
    end = src.offset(cls.end_lineno or cls.lineno, src.char_col(cls.end_lineno or cls.lineno, cls.end_col_offset or 0))
    line_start = src.text.rfind("\n", 0, start) + 1
    prefix = src.text[line_start:start]
    text = _indent(src.text[start:end], prefix)
    if text is None or prefix.strip():
        return None
    from .custom_gradient_cst import ported_class  # libcst: only where a class is ported (a scan starts without it)

    ported = ported_class(text, plan, base)
    if ported is None:
        return None
    ported = re.sub(r"\n(?=[^\n])", "\n" + prefix, ported)
    applied = _apply_edits(src, cls, plan)
    if applied is None:
        return None
    edits = [Edit(src.span_of(start, end), ported), *applied]
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=f"Make {cls.name} a mindspore.nn.Cell with a bprop (forward -> construct, backward -> bprop)",
               edits=tuple(edits), safe=False)


@register
class CustomGradient(Transform):
    name = NAME
    codes = frozenset({"TMS103", "TMS106"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        if not ctx.src.mindspore_visible(ctx.call.span):
            return None
        cls = ctx.src.class_with_base(ctx.call.span)
        if cls is None:
            return None
        base = next(i for i, b in enumerate(cls.bases) if ctx.src.span(b) == ctx.call.span)
        return custom_gradient_fix(ctx.src, cls, base)
