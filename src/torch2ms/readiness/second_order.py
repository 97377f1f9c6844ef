"""TMS301: second-order gradients (create_graph=True, hessian-style APIs)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..model import CallKind, Confidence, Diagnostic, Span
from .facts import Facts, call_nodes, const_kw, diag, listing


def _network_apis(facts: Facts) -> list[str]:
    """torch APIs on the network path: the forward of the file's modules and the layers they build."""
    module_inits = {f"{c.name}.__init__" for c in facts.class_list if c.is_module}
    apis = set()
    for call in facts.calls:
        if call.kind not in (CallKind.CALL, CallKind.METHOD) or call.confidence is not Confidence.HIGH:
            continue
        if call.in_network:
            apis.add(call.api)
        elif call.context in module_inits and call.api.startswith("torch.nn.") and call.api[9:10].isupper():
            apis.add(call.api)
    return sorted(apis)


def check_second_order(facts: Facts) -> Iterator[Diagnostic]:
    """TMS301: create_graph=True (gradients of gradients) and hessian-style APIs."""
    seen: set[Span] = set()
    network: list[str] | None = None
    candidates: list[tuple[ast.Call, str]] = []
    for node, call in call_nodes(facts, lambda api: api in facts.apis.always_second_order or api in facts.apis.second_order_apis):
        if call.api in facts.apis.always_second_order:
            candidates.append((node, call.api))
        elif call.api in facts.apis.second_order_apis:
            present, value = const_kw(node, "create_graph")
            if present and value is not False and value is not None:
                candidates.append((node, call.api))
    if facts.imports_torch:  # loss.backward(create_graph=True) on a receiver the resolver cannot prove
        for node in facts.methods.get("backward", ()):
            present, value = const_kw(node, "create_graph")
            if present and value is not False and value is not None:
                candidates.append((node, "torch.Tensor.backward"))
    for node, api in candidates:
        span = facts.span(node)
        if span in seen:
            continue
        seen.add(span)
        if network is None:
            network = _network_apis(facts)
        if network:
            where = (f"check that each torch API on this file's network path supports second-order gradients "
                     f"in MindSpore: {listing(network)}")
        else:
            where = ("this file has no network code; check the forward of the model being differentiated for "
                     "ops without second-order gradients")
        yield diag("TMS301", span,
                    f"second-order gradient ({api.rpartition('.')[2]} builds a differentiable gradient graph): "
                    f"in MindSpore differentiate the gradient function again (mindspore.grad of a function that "
                    f"calls mindspore.grad); {where}",
                    torch_api=api, mindspore_api="mindspore.grad")

