"""TMS361-TMS365: the training loop (manual steps, clipping, accumulation, schedulers, seeds)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..model import CallKind, Diagnostic, Span
from .facts import Facts, diag

_OPTIMIZER_NAME = re.compile(r"(?i)opt")
_SCHEDULER_NAME = re.compile(r"(?i)sched|^lr_|_lr$|^lr$|warmup")


_SKIP_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_calls(body: list[ast.stmt]) -> Iterator[tuple[ast.Call, str, list[ast.AST]]]:
    """Method calls in `body` with the method's name and the chain of statements above them, not
    entering nested definitions."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, []) for stmt in reversed(body)]
    while stack:
        node, chain = stack.pop()
        if isinstance(node, _SKIP_NESTED):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node, node.func.attr, chain
        below = chain + [node] if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)) else chain
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, below))


@dataclass
class _Step:
    backward: list[ast.Call] = field(default_factory=list)
    step: list[tuple[ast.Call, list[ast.AST]]] = field(default_factory=list)
    zero_grad: list[ast.Call] = field(default_factory=list)


def _optimizer_step(facts: Facts, node: ast.Call) -> bool:
    apis = {c.api for c in facts.by_span.get(facts.span(node), ())}
    if "torch.optim.Optimizer.step" in apis or any(a.startswith("torch.amp.GradScaler.") for a in apis):
        return True
    if any(a.startswith("torch.optim.lr_scheduler.") for a in apis):
        return False
    name = facts.receiver_name(node)
    return bool(_OPTIMIZER_NAME.search(name)) or "scaler" in name.lower()


def _step_facts(facts: Facts, body: list[ast.stmt]) -> _Step:
    out = _Step()
    for node, attr, chain in _own_calls(body):
        if attr == "backward":
            out.backward.append(node)
        elif attr == "step" and _optimizer_step(facts, node):
            out.step.append((node, chain))
        elif attr == "zero_grad":
            out.zero_grad.append(node)
    return out


def _loops(body: list[ast.stmt]) -> Iterator[ast.For | ast.AsyncFor | ast.While]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SKIP_NESTED):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def check_training_loop(facts: Facts) -> Iterator[Diagnostic]:
    """TMS361 (one per training loop or step function), TMS363 accumulation, TMS362/364/365 per call."""
    if facts.imports_torch and facts.methods.get("backward"):
        scopes: list[tuple[str, list[ast.stmt], ast.AST]] = [("<module>", facts.tree.body, facts.tree)]
        scopes += [(context, func.body, func) for context, func in facts.functions]
        for _context, body, owner in scopes:
            yield from _training_in_scope(facts, body, owner)
    for call in facts.calls:
        if call.kind not in (CallKind.CALL,) or call.api not in facts.apis.clip_apis:
            continue
        how = ("mindspore.ops.clip_by_global_norm(grads, max_norm)" if "norm" in call.api
               else "mindspore.ops.clip_by_value on each gradient")
        yield diag("TMS362", call.span,
                    f"{call.api} clips the .grad fields in place; in MindSpore clip the gradient tuple returned by "
                    f"the value-and-grad function with {how} before optimizer(grads)",
                    torch_api=call.api, mindspore_api=how.partition("(")[0].partition(" ")[0],
                    confidence=call.confidence)
    scheduler_steps: set[Span] = set()
    for call in facts.calls:
        if call.api == "torch.optim.lr_scheduler.LRScheduler.step" and call.kind == CallKind.METHOD:
            scheduler_steps.add(call.span)
    if facts.imports_torch:
        for node in facts.methods.get("step", ()):
            if _SCHEDULER_NAME.search(facts.receiver_name(node)) and not _optimizer_step(facts, node):
                scheduler_steps.add(facts.span(node))
    for span in sorted(scheduler_steps):
        yield diag("TMS364", span,
                    "learning-rate scheduler stepped by hand: in MindSpore give the optimizer the schedule (a list "
                    "of per-step rates from mindspore.nn.piecewise_constant_lr / cosine_decay_lr, or a schedule "
                    "Cell such as mindspore.nn.CosineDecayLR), or keep stepping it by hand with "
                    "mindspore.experimental.optim.lr_scheduler",
                    torch_api="torch.optim.lr_scheduler.LRScheduler.step",
                    mindspore_api="mindspore.experimental.optim.lr_scheduler.LRScheduler")
    for call in facts.calls:
        if call.kind == CallKind.CALL and call.api in facts.apis.seed_apis:
            yield diag("TMS365", call.span,
                        f"{call.api}: set the seed with mindspore.set_seed(seed) (it also seeds mindspore.dataset); "
                        f"in distributed training it must be set, with the same value on every device, so all "
                        f"replicas start from the same weights", torch_api=call.api,
                        mindspore_api="mindspore.set_seed", confidence=call.confidence)


def _training_in_scope(facts: Facts, body: list[ast.stmt], owner: ast.AST) -> Iterator[Diagnostic]:
    loops = list(_loops(body))
    qualifying: list[tuple[ast.For | ast.AsyncFor | ast.While, _Step]] = []
    for loop in loops:
        step = _step_facts(facts, loop.body + loop.orelse)
        if step.backward and (step.step or step.zero_grad):
            qualifying.append((loop, step))
    reported: list[ast.AST] = []
    inner_loops = {id(sub) for loop, _ in qualifying for sub in _loops(loop.body + loop.orelse)}
    for loop, step in qualifying:
        if any(id(other) in inner_loops and _contains(loop, other) for other, _ in qualifying if other is not loop):
            continue  # a loop inside this one is the training loop
        reported.append(loop)
        yield _trainingdiag(facts, facts.header_span(loop), step)
        yield from _accumulation(facts, step)
    if qualifying or isinstance(owner, ast.Module):
        return
    step = _step_facts(facts, body)
    if step.backward and (step.step or step.zero_grad) and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not any(_contains(loop, node) for loop in loops for node in step.backward):
            yield _trainingdiag(facts, facts.def_span(owner), step, function=owner.name)


def _contains(outer: ast.stmt | ast.expr, inner: ast.stmt | ast.expr) -> bool:
    if outer is inner:
        return False
    o_end = (outer.end_lineno or outer.lineno, outer.end_col_offset or 0)
    i_end = (inner.end_lineno or inner.lineno, inner.end_col_offset or 0)
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and i_end <= o_end


def _trainingdiag(facts: Facts, span: Span, step: _Step, function: str | None = None) -> Diagnostic:
    parts = [".backward()"]
    if step.step:
        parts.append("optimizer.step()")
    if step.zero_grad:
        parts.insert(0, "zero_grad()")
    where = f"{function}() is a training step" if function else "training loop"
    return diag("TMS361", span,
                 f"{where} written as {' / '.join(parts)}: MindSpore has no backward(); build "
                 f"grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters) once, then each step "
                 f"run loss, grads = grad_fn(inputs, labels) and optimizer(grads) (gradients do not accumulate, so "
                 f"zero_grad goes away)", torch_api="torch.Tensor.backward", mindspore_api="mindspore.value_and_grad")


def _accumulation(facts: Facts, step: _Step) -> Iterator[Diagnostic]:
    """optimizer.step() under a condition inside the loop while backward runs every iteration."""
    for node, chain in step.step:
        guards = [c for c in chain if isinstance(c, ast.If)]
        if not guards:
            continue
        guard = guards[-1]
        if any(_contains(guard, b) for b in step.backward):
            continue
        yield diag("TMS363", facts.span(node),
                    "gradient accumulation (backward every iteration, optimizer.step() only when the condition "
                    "holds): MindSpore gradients do not accumulate; add the gradient tuples yourself (for example "
                    "with mindspore.ops.HyperMap over accumulator Parameters) and call optimizer(accumulated) every "
                    "N steps", torch_api="torch.optim.Optimizer.step", mindspore_api="mindspore.value_and_grad")
        return

