"""The libcst half of torch2ms.transforms.custom_gradient: a custom-gradient class rewritten as a MindSpore Cell with
a `bprop` (what that module's docstring describes). Imported only where a class is ported, so a scan starts without
libcst."""

from __future__ import annotations

import ast

import libcst as cst

from .custom_gradient import _CTX_CALLS, _NEEDS, _SAVE, _SAVED, Plan

_ZERO = "(mindspore.ops.zeros_like({0}) if isinstance({0}, mindspore.Tensor) else None)"


class _Ctx(cst.CSTTransformer):
    """The ctx forms of a method body, in construct (`replay` False: what only fills ctx goes) or in bprop."""

    def __init__(self, plan: Plan, ctx: str, replay: bool) -> None:
        self.plan, self.ctx, self.replay = plan, ctx, replay

    def _ctx_call(self, node: cst.BaseSmallStatement) -> str | None:
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) \
                and isinstance(node.value.func, cst.Attribute) and isinstance(node.value.func.value, cst.Name) \
                and node.value.func.value.value == self.ctx:
            return node.value.func.attr.value
        return None

    def _fills_ctx(self, node: cst.BaseSmallStatement) -> bool:
        """`ctx.x = v` (every target a ctx attribute that the forward never reads): nothing for construct."""
        if not isinstance(node, cst.Assign):
            return False
        targets = [e.value for t in node.targets for e in (
            t.target.elements if isinstance(t.target, (cst.Tuple, cst.List)) else [cst.Element(t.target)])]
        return all(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == self.ctx
                   and t.attr.value not in self.plan.forward_reads for t in targets)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        body: list[cst.BaseSmallStatement] = []
        for before, small in zip(original_node.body, updated_node.body):
            if not self.replay and self._fills_ctx(before):
                continue
            called = self._ctx_call(small)
            if called == _SAVE and self.replay:
                assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                items = [cst.Name(self.plan.out) if isinstance(a.value, cst.Name)
                         and a.value.value in self.plan.from_out else a.value for a in small.value.args]
                body.append(cst.Assign([cst.AssignTarget(cst.Name(self.plan.saved))],
                                       cst.Tuple([cst.Element(v) for v in items])))
            elif called is None:
                body.append(small)
        if not body:
            return cst.RemovalSentinel.REMOVE
        return updated_node.with_changes(body=body)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(updated_node.value, cst.Name) and updated_node.value.value == self.ctx):
            return updated_node
        attr = updated_node.attr.value
        if attr in _SAVED:
            return cst.Name(self.plan.saved)
        if attr == _NEEDS:
            return cst.parse_expression(f"({', '.join(['True'] * len(self.plan.inputs))},)")
        if attr in _CTX_CALLS:
            return updated_node
        return cst.Name(f"ctx_{attr}")

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
                            ) -> cst.IndentedBlock:
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


class _Returns(cst.CSTTransformer):
    """bprop's returns: one gradient per input, a None for a tensor input as a zero tensor."""

    def __init__(self, inputs: list[str]) -> None:
        self.inputs = inputs
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated_node

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _grad(self, value: cst.BaseExpression, index: int) -> cst.BaseExpression:
        if isinstance(value, cst.Name) and value.value == "None":
            return cst.parse_expression(_ZERO.format(self.inputs[index]))
        return value

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        value = updated_node.value
        if value is None:
            return updated_node
        if isinstance(value, cst.Tuple):
            elements = [e.with_changes(value=self._grad(e.value, i)) for i, e in enumerate(value.elements)]
            return updated_node.with_changes(value=value.with_changes(elements=elements))
        if len(self.inputs) == 1:
            return updated_node.with_changes(value=cst.Tuple([cst.Element(self._grad(value, 0))]))
        return updated_node


def _no_decorators(fn: cst.FunctionDef, name: str, params: cst.Parameters) -> cst.FunctionDef:
    return fn.with_changes(decorators=[], name=cst.Name(name), params=params)


def _port_class(node: cst.ClassDef, plan: Plan, base: int, cell: str) -> cst.ClassDef:
    block = cst.ensure_type(node.body, cst.IndentedBlock)
    body: list[cst.BaseStatement] = []
    forward = next(s for s in block.body if isinstance(s, cst.FunctionDef) and s.name.value == plan.forward.name)
    for stmt in block.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == plan.forward.name:
            params = stmt.params.with_changes(params=[cst.Param(cst.Name("self")), *stmt.params.params[1:]])
            construct = _no_decorators(stmt, "construct", params)
            body.append(cst.ensure_type(construct.visit(_Ctx(plan, plan.ctx, False)), cst.FunctionDef))
        elif isinstance(stmt, cst.FunctionDef) and stmt.name.value == plan.backward.name:
            body.append(_bprop(stmt, forward, plan))
        else:
            body.append(stmt)
    bases = [a.with_changes(value=cst.parse_expression(cell)) if i == base else a for i, a in enumerate(node.bases)]
    return node.with_changes(bases=bases, body=block.with_changes(body=body))


def _bprop(backward: cst.FunctionDef, forward: cst.FunctionDef, plan: Plan) -> cst.FunctionDef:
    inputs = [p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)
              for p in forward.params.params[1:]]
    params = cst.Parameters([cst.Param(cst.Name("self")), *inputs, cst.Param(cst.Name(plan.out)),
                             cst.Param(cst.Name(plan.dout))])
    forward_body = list(cst.ensure_type(forward.body, cst.IndentedBlock).body)
    replay = cst.IndentedBlock([forward_body[i] for i in plan.replayed])
    statements: list[cst.BaseStatement] = list(
        cst.ensure_type(replay.visit(_Ctx(plan, plan.ctx, True)), cst.IndentedBlock).body) if plan.replayed else []
    if statements:
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=[]) if hasattr(first, "leading_lines") else first
    if plan.star_grads is not None:
        tupled = isinstance(plan.output, ast.Tuple)
        statements.append(cst.parse_statement(f"{plan.star_grads} = {plan.dout if tupled else f'({plan.dout},)'}"))
    elif plan.dout not in plan.grads:
        targets = ", ".join(plan.grads)
        statements.append(cst.parse_statement(f"{targets} = {plan.dout}"))
    own = cst.ensure_type(backward.body, cst.IndentedBlock)
    ported = cst.ensure_type(own.visit(_Ctx(plan, plan.bctx, True)), cst.IndentedBlock)
    body = own.with_changes(body=[*statements, *ported.body])
    bprop = _no_decorators(backward, "bprop", params).with_changes(body=body)
    return cst.ensure_type(bprop.visit(_Returns(plan.inputs)), cst.FunctionDef)


# ---------------------------------------------------------------- the fix


def ported_class(text: str, plan: Plan, base: int) -> str | None:
    """The class `text` (its statement, unindented) as a Cell with a bprop; None where libcst cannot read it."""
    try:
        module = cst.parse_module(text + "\n")
    except cst.ParserSyntaxError:
        return None
    node = module.body[0]
    if not isinstance(node, cst.ClassDef) or not isinstance(node.body, cst.IndentedBlock):
        return None
    return module.code_for_node(_port_class(node, plan, base, "mindspore.nn.Cell")).rstrip("\n")
