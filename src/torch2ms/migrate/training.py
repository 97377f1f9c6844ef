"""The training step: a torch loop body of forward, loss, ``backward()`` and ``optimizer.step()`` as
MindSpore writes it, a forward function, ``value_and_grad`` and ``optimizer(grads)``.

A libcst transformation of whole loops, run on the torch text before the other rewrites (the calls are
located by the scan's resolved names, whose roles come from ``data/training.yaml``). For a loop whose
body holds one ``loss.backward()`` statement and ``optimizer.step()`` statements after it:

- the statements the loss depends on, walking back from ``backward()`` (the forward region), move into
  a function defined before the loop; the names they read that the loop binds become its parameters,
  the names they bind that are read elsewhere come back as auxiliary outputs next to the loss;
- ``grad_fn = value_and_grad(forward_fn, None, optimizer.parameters, has_aux=...)`` is built once,
  before the loop; the region becomes ``(loss, aux...), grads = grad_fn(params...)``;
- ``zero_grad()`` goes away, clipping applies to the gradient tuple (the forms in the table),
  ``optimizer.step()`` becomes ``optimizer(grads)``;
- a step guarded by a condition with no unconditional ``zero_grad()`` in the loop is gradient
  accumulation: the gradients are summed after each forward and the sum reset after each step.

A function whose own body is the step (``def train_step(x, y): ...``) gets the same rewrite, with the
forward function and ``grad_fn`` built inside it, before the forward statements.

Everything else in the loop (logging, metrics, schedulers, early exits) stays where it was. A loop the
rule does not cover is left as it is, with a note saying why, for the scan's TMS361 finding.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from ..model import ApiCall
from ..training_rules import TrainingRules, load_rules
from .positions import Positions

_BUILTINS = frozenset(dir(builtins))


# ------------------------------------------------------------------ names read and bound
_SCOPED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class _Names(cst.CSTVisitor):
    """Names one statement (or expression) reads and binds, in evaluation order: reads of a statement's
    right side before its targets. Names bound inside lambdas and comprehensions stay inside."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self.writes: list[str] = []

    def _target(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.writes.append(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._target(element.value)
        elif isinstance(node, cst.StarredElement):
            self._target(node.value)
        else:  # x.a = ..., x[i] = ...: x is read
            node.visit(self)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> bool:
        self.reads.append(node.value)
        return False

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for target in node.targets:
            self._target(target.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
        self._target(node.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.value.visit(self)
        node.target.visit(self)
        self._target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._target(node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        self._target(node.target)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.writes.append(node.name.value)
        inner = _Names()
        node.body.visit(inner)
        params = {p.name.value for p in _all_params(node.params)}
        self.reads.extend(n for n in inner.reads if n not in params and n not in inner.writes)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.writes.append(node.name.value)
        return False

    def _scoped(self, node: cst.CSTNode) -> bool:
        inner = _Names()
        bound: set[str] = set()
        for child in _walk(node):
            if isinstance(child, cst.CompFor):
                sub = _Names()
                sub._target(child.target)
                bound.update(sub.writes)
            elif isinstance(child, cst.Lambda):
                bound.update(p.name.value for p in _all_params(child.params))
        for child in _children(node):
            child.visit(inner)
        self.reads.extend(n for n in inner.reads if n not in bound)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self._scoped(node)

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._scoped(node)

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._scoped(node)

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._scoped(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._scoped(node)


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return list(node.children)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def names_of(nodes: Iterable[cst.CSTNode]) -> _Names:
    collector = _Names()
    for node in nodes:
        node.visit(collector)
    return collector


# ------------------------------------------------------------------ the loop
class Unsupported(Exception):
    """A training loop the rewrite does not cover; the message says why."""


@dataclass
class _Role:
    role: str
    api: str
    call: cst.Call
    statement: cst.SimpleStatementLine
    top: int | None  # its index in the loop body, None when nested in an `if`


def _call_statement(stmt: cst.BaseStatement) -> cst.Call | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return small.value
    return None


def _simple_statements(body: Sequence[cst.BaseStatement]) -> Iterator[tuple[cst.SimpleStatementLine, int | None]]:
    """The simple statements of a loop body and of the `if` branches in it, with their top-level index."""
    for index, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt, index
        elif isinstance(stmt, cst.If):
            for nested, _ in _if_statements(stmt):
                yield nested, None


def _if_statements(node: cst.If) -> Iterator[tuple[cst.SimpleStatementLine, None]]:
    branches: list[cst.BaseSuite] = [node.body]
    orelse = node.orelse
    while orelse is not None:
        if isinstance(orelse, cst.If):
            branches.append(orelse.body)
            orelse = orelse.orelse
        else:
            branches.append(orelse.body)
            orelse = None
    for suite in branches:
        if isinstance(suite, cst.IndentedBlock):
            for stmt in suite.body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    yield stmt, None
                elif isinstance(stmt, cst.If):
                    yield from _if_statements(stmt)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def spell(form: str, root: str) -> str:
    """A table form written from the file's root name for mindspore."""
    return form if root == "mindspore" else re.sub(r"\bmindspore\.", root + ".", form)


@dataclass
class _Plan:
    replace: dict[int, list[cst.BaseStatement]]  # id(statement) -> its replacement (empty: removed)
    prelude: list[cst.BaseStatement]
    first: int  # id of the first statement of the forward region


class TrainingSteps(cst.CSTTransformer):
    """Rewrites every training loop it covers (see the module's docstring)."""

    METADATA_DEPENDENCIES = (Positions,)

    def __init__(self, calls: Sequence[ApiCall], root: str, used: Iterable[str] = (),
                 rules: TrainingRules | None = None) -> None:
        super().__init__()
        self.rules = rules or load_rules()
        self.root = root
        self.used = set(used)
        self.by_start: dict[tuple[int, int, int, int], tuple[str, str]] = {}
        for call in calls:
            role = self.rules.role(call.api)
            if role is not None:
                s = call.span
                self.by_start[(s.start_line, s.start_col, s.end_line, s.end_col)] = (role, call.api)
        self.scopes: list[cst.CSTNode] = []  # enclosing function or module (original nodes)
        self.definitions: set[str] = set()  # names the file binds by def, class or import
        self.count = 0
        self.done: list[str] = []
        self.left: list[str] = []  # "line: why" for each training loop left as it is
        self._rewritten_inside: list[bool] = []

    # -------------------------------------------------------------- bookkeeping
    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(node)
        for child in _walk(node):
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
                self.definitions.add(child.name.value)
            elif isinstance(child, cst.ImportAlias):
                bound: cst.BaseExpression = child.asname.name if child.asname is not None else child.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                if isinstance(bound, cst.Name):
                    self.definitions.add(bound.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)
        self._rewritten_inside.append(False)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        try:
            return self._leave_function(original_node, updated_node)
        finally:
            self.scopes.pop()

    def _leave_function(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """A function whose own body is one training step (``def train_step(x, y): ... loss.backward() ...``)."""
        inside = self._rewritten_inside.pop()
        if inside or not isinstance(original.body, cst.IndentedBlock):
            return updated
        body = list(original.body.body)
        found = [r for r in self._roles_in(body) if r[0] != "backward" or any(
            _call_statement(stmt) is r[2] for stmt in body)]
        if not any(r[0] == "backward" for r in found):
            return updated
        bound = set(names_of(body).writes) | {p.name.value for p in _all_params(original.params)}
        try:
            plan = self._plan_body(body, found, bound, "the function")
        except Unsupported as exc:
            self.left.append(f"{self._line(original)}: training step of {original.name.value}() left as it is: {exc}")
            return updated
        self.count += 1
        self.done.append(f"{self._line(original)}: training step of {original.name.value}() as value_and_grad + "
                         f"optimizer(grads)")
        plan.replace[plan.first] = [*plan.prelude, *plan.replace[plan.first]]
        new = original.visit(_Replace(plan.replace))
        assert isinstance(new, cst.FunctionDef)
        return new

    def visit_For(self, node: cst.For) -> None:
        self._rewritten_inside.append(False)

    def visit_While(self, node: cst.While) -> None:
        self._rewritten_inside.append(False)

    def leave_For(self, original_node: cst.For,
                  updated_node: cst.For) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        return self._leave_loop(original_node, updated_node)

    def leave_While(self, original_node: cst.While,
                    updated_node: cst.While) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        return self._leave_loop(original_node, updated_node)

    def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine,
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        """A ``zero_grad()`` statement anywhere (before an accumulation loop, after evaluation): MindSpore's
        gradients are values returned by value_and_grad, there is nothing to reset."""
        call = _call_statement(original_node)
        found = self._role_of(call) if call is not None else None
        if found is None or found[0] != "zero_grad":
            return updated_node
        self.count += 1
        self.done.append(f"{self._line(original_node)}: {found[1]} removed")
        return cst.RemoveFromParent()

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node

    def _line(self, node: cst.CSTNode) -> int:
        return int(self.get_metadata(Positions, node).start.line)

    def _role_of(self, call: cst.Call) -> tuple[str, str] | None:
        where = self.get_metadata(Positions, call)
        return self.by_start.get((where.start.line, where.start.column, where.end.line, where.end.column))

    def _fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def _leave_loop(self, original: cst.For | cst.While,
                    updated: cst.For | cst.While) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        inside = self._rewritten_inside.pop()
        if inside:  # a training loop inside this one was rewritten: this one is not the step
            if self._rewritten_inside:
                self._rewritten_inside[-1] = True
            return updated
        roles = self._roles(original)
        if not any(r[0] == "backward" for r in roles):
            return updated
        try:
            plan = self._plan(original)
        except Unsupported as exc:
            self.left.append(f"{self._line(original)}: training loop left as it is: {exc}")
            return updated
        self.count += 1
        self.done.append(f"{self._line(original)}: training step as value_and_grad + optimizer(grads)")
        if self._rewritten_inside:
            self._rewritten_inside[-1] = True
        loop = original.visit(_Replace(plan.replace))
        assert isinstance(loop, (cst.For, cst.While))
        first = plan.prelude[0]
        assert isinstance(first, (cst.FunctionDef, cst.SimpleStatementLine))
        prelude = [first.with_changes(leading_lines=loop.leading_lines)] + plan.prelude[1:]
        return cst.FlattenSentinel([*prelude, loop.with_changes(leading_lines=())])

    def _roles(self, loop: cst.For | cst.While) -> list[tuple[str, str, cst.Call]]:
        return self._roles_in([loop.body])

    def _roles_in(self, nodes: Sequence[cst.CSTNode]) -> list[tuple[str, str, cst.Call]]:
        out = []
        for node in (n for top in nodes for n in _walk_no_defs(top)):
            if isinstance(node, cst.Call):
                found = self._role_of(node)
                if found is not None:
                    out.append((found[0], found[1], node))
        return out

    # -------------------------------------------------------------- the plan
    def _plan(self, loop: cst.For | cst.While) -> _Plan:
        if not isinstance(loop.body, cst.IndentedBlock) or loop.orelse is not None:
            raise Unsupported("a one-line body or an else branch")
        body = list(loop.body.body)
        loop_bound = set(names_of(body).writes)
        if isinstance(loop, cst.For):
            target = _Names()
            target._target(loop.target)
            loop_bound.update(target.writes)
        return self._plan_body(body, self._roles(loop), loop_bound, "the loop")

    def _plan_body(self, body: list[cst.BaseStatement], found: list[tuple[str, str, cst.Call]],
                   loop_bound: set[str], where: str) -> _Plan:
        """The plan for a loop body (`where`: "the loop") or a function body ("the function"): `loop_bound`,
        the names bound anew each iteration or call, become the forward function's parameters."""
        placed: dict[int, _Role] = {}
        for stmt, top in _simple_statements(body):
            call = _call_statement(stmt)
            if call is None:
                continue
            for role, api, node in found:
                if node is call:
                    placed[id(node)] = _Role(role, api, node, stmt, top)
        for _role, api, node in found:
            if id(node) not in placed:
                raise Unsupported(f"{api} is not a statement of its own in {where}'s body or an `if` in it")
        roles = list(placed.values())
        backward = [r for r in roles if r.role == "backward"]
        steps = [r for r in roles if r.role == "step"]
        if len(backward) != 1 or backward[0].top is None:
            raise Unsupported("not one backward() statement at the top of the loop body")
        back = backward[0]
        assert back.top is not None
        func = back.call.func
        if back.call.args or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            raise Unsupported("backward() is called with arguments or not on a plain name")
        loss = func.value.value
        if not steps:
            raise Unsupported("no optimizer.step() after backward()")
        receivers = set()
        for step in steps:
            sfunc = step.call.func
            if step.call.args or not isinstance(sfunc, cst.Attribute):
                raise Unsupported("optimizer.step() with arguments (a closure)")
            receivers.add(_code(sfunc.value))
        if len(receivers) != 1:
            raise Unsupported("steps of more than one optimizer")
        optimizer = receivers.pop()
        order = {id(s): i for i, (s, _) in enumerate(_simple_statements(body))}
        for r in roles:
            if r.role in ("step", "clip") and order[id(r.statement)] < order[id(back.statement)]:
                raise Unsupported(f"{r.api} before backward()")

        if where == "the loop" and optimizer.split(".")[0].split("[")[0] in loop_bound:
            raise Unsupported(f"the optimizer {optimizer} is bound inside the loop")

        # the forward region: walking back from backward(), the statements the loss depends on
        region: list[int] = []
        passed: list[int] = []  # expression statements left in place between region statements
        needed = {loss}
        zero = {id(r.statement) for r in roles if r.role == "zero_grad"}
        for index in range(back.top - 1, -1, -1):
            before = body[index]
            if id(before) in zero:
                continue
            names = names_of([before])
            if isinstance(before, cst.SimpleStatementLine) and set(names.writes) & needed:
                region.insert(0, index)
                needed.update(names.reads)
            elif isinstance(before, cst.SimpleStatementLine) and not names.writes:
                passed.append(index)
            else:
                break
        if not region or loss not in names_of([body[i] for i in region]).writes:
            raise Unsupported(f"the loss {loss} is not computed in the loop body before backward()")
        # the statements before the first call of the model (a variable called on what the loop binds) only
        # prepare its inputs: they stay in the loop and what they bind is passed in
        calls_model = [i for i in region if self._calls_model(body[i], loop_bound)]
        if calls_model:
            region = [i for i in region if i >= calls_model[0]]
            passed = [i for i in passed if i > calls_model[0]]
        region_written = set(names_of([body[i] for i in region]).writes)
        for index in passed:
            if index > region[0] and set(names_of([body[index]]).reads) & region_written:
                raise Unsupported("a statement between the forward statements reads what they compute")

        # parameters: names read before bound in the region that the loop binds (or the region rebinds)
        seen: set[str] = set()
        params: list[str] = []
        for index in region:
            names = names_of([body[index]])
            for name in names.reads:
                if name not in seen and name not in params and (name in loop_bound or name in region_written):
                    params.append(name)
            seen.update(names.writes)
        region_ids = {id(body[i]) for i in region}
        scope = self.scopes[-1]
        outside = _Names()
        for part in _statements_outside(scope, region_ids):
            part.visit(outside)
        aux = [n for n in dict.fromkeys(names_of([body[i] for i in region]).writes)
               if n != loss and n in outside.reads]

        rules = self.rules
        forward_fn = self._fresh("forward_fn")
        grad_fn = self._fresh("grad_fn")
        grads = self._fresh("grads")
        accumulate = any(s.top is None for s in steps) and not any(
            r.role == "zero_grad" and r.top is not None for r in roles)
        total = self._fresh("accumulated_grads") if accumulate else grads

        returned = ", ".join([loss, *aux])
        fn = cst.parse_statement(f"def {forward_fn}({', '.join(params)}):\n    return {returned}\n")
        assert isinstance(fn, cst.FunctionDef) and isinstance(fn.body, cst.IndentedBlock)
        moved = [body[i] for i in region]
        moved[0] = moved[0].with_changes(leading_lines=())
        fn = fn.with_changes(body=fn.body.with_changes(body=[*moved, *fn.body.body]))
        has_aux = "True" if aux else "False"
        value_and_grad = spell(rules.value_and_grad, self.root)
        prelude: list[cst.BaseStatement] = [
            fn, cst.parse_statement(f"{grad_fn} = {value_and_grad}({forward_fn}, None, "
                                    f"{optimizer}.{rules.optimizer_parameters}, has_aux={has_aux})\n")]
        if accumulate:
            prelude.append(cst.parse_statement(f"{total} = None\n"))

        outputs = f"({returned})" if aux else loss
        run = [_line_statement(f"{outputs}, {grads} = {grad_fn}({', '.join(params)})")]
        if accumulate:
            form = rules.accumulate.format(grads=grads, total=total)
            run.append(_line_statement(f"{total} = {form}"))
        replace: dict[int, list[cst.BaseStatement]] = {id(body[i]): [] for i in region}
        first = body[region[0]]
        assert isinstance(first, cst.SimpleStatementLine)
        replace[id(first)] = [run[0].with_changes(leading_lines=first.leading_lines), *run[1:]]
        replace[id(back.statement)] = []
        for r in roles:
            if r.role == "zero_grad":
                replace[id(r.statement)] = []
            elif r.role == "clip":
                replace[id(r.statement)] = [self._clip(r, total).with_changes(leading_lines=r.statement.leading_lines)]
            elif r.role == "step":
                new: list[cst.BaseStatement] = [_line_statement(f"{optimizer}({total})").with_changes(
                    leading_lines=r.statement.leading_lines)]
                if accumulate:
                    new.append(_line_statement(f"{total} = None"))
                replace[id(r.statement)] = new
        return _Plan(replace, prelude, id(first))

    def _calls_model(self, stmt: cst.CSTNode, loop_bound: set[str]) -> bool:
        """Whether `stmt` calls a variable (not an import, a def, a builtin or what the loop binds): a model, a
        held loss or anything that may hold parameters, whatever it is passed (``model(x)`` on data the loop
        does not bind is the forward pass too: left outside the forward function, its gradients are zero)."""
        for node in _walk_no_defs(stmt):
            if not isinstance(node, cst.Call):
                continue
            root: cst.BaseExpression = node.func
            while isinstance(root, (cst.Attribute, cst.Subscript)):
                root = root.value
            if not isinstance(root, cst.Name) or root.value in self.definitions or root.value in loop_bound:
                continue
            if root.value not in _BUILTINS:
                return True
        return False

    def _clip(self, role: _Role, grads: str) -> cst.SimpleStatementLine:
        rule = self.rules.clip[role.api]
        given: dict[str, str] = {}
        for position, arg in enumerate(role.call.args):
            if arg.star:
                raise Unsupported(f"{role.api} with unpacked arguments")
            name = arg.keyword.value if arg.keyword is not None else (
                rule.params[position] if position < len(rule.params) else "")
            if name not in rule.params:
                raise Unsupported(f"{role.api}: an argument it does not take ({name or position})")
            given[name] = _code(arg.value)
        for name, allowed in rule.require.items():
            if name in given and given[name] not in allowed:
                raise Unsupported(f"{role.api} with {name}={given[name]}")
        try:
            form = rule.form.format(grads=grads, **given)
        except KeyError as exc:
            raise Unsupported(f"{role.api} without {exc.args[0]}") from None
        return _line_statement(f"{grads} = {spell(form, self.root)}")


def _line_statement(code: str) -> cst.SimpleStatementLine:
    stmt = cst.parse_statement(code + "\n")
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt


def _walk_no_defs(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(current.children))


def _statements_outside(scope: cst.CSTNode, skip: set[int]) -> Iterator[cst.CSTNode]:
    """The statements of a function or module, all depths, leaving out the `skip` ones (by id)."""
    body: Any = scope.body if isinstance(scope, cst.Module) else getattr(scope, "body", None)
    stack: list[cst.CSTNode] = list(body if isinstance(body, Sequence) else body.body)
    while stack:
        current = stack.pop()
        if id(current) in skip:
            continue
        if isinstance(current, cst.SimpleStatementLine):
            yield current
            continue
        if isinstance(current, cst.BaseCompoundStatement):
            # its header expressions (if/while tests, for iterables, with items) count as reads
            if isinstance(current, cst.For):
                yield current.iter
            elif isinstance(current, (cst.If, cst.While)):
                yield current.test
            elif isinstance(current, cst.With):
                yield from (item.item for item in current.items)
            stack.extend(c for c in current.children
                         if isinstance(c, (cst.BaseSuite, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler,
                                           cst.Finally)))
            continue
        stack.extend(current.children)


class _Replace(cst.CSTTransformer):
    """Replaces simple statements by id (an empty list removes one); an emptied block gets `pass`."""

    def __init__(self, replace: dict[int, list[cst.BaseStatement]]) -> None:
        super().__init__()
        self.replace = replace

    def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine,
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        new = self.replace.get(id(original_node))
        if new is None:
            return updated_node
        if not new:
            return cst.RemoveFromParent()
        return cst.FlattenSentinel(new)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node
