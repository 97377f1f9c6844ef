"""TMS311: sparse tensors, sparse ops and embeddings with sparse gradients."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..model import CallKind, Diagnostic, Span
from .facts import Facts, call_nodes, const_kw, diag


def check_sparse(facts: Facts) -> Iterator[Diagnostic]:
    """TMS311: sparse tensor construction, sparse ops and sparse-gradient embeddings."""
    seen: set[Span] = set()
    by_node: dict[Span, ast.Call] = {}
    for node, call in call_nodes(facts, facts.apis.sparse_flag_apis.__contains__):
        by_node[call.span] = node
    for call in facts.calls:
        if call.span in seen:
            continue
        api = call.api
        if api in facts.apis.sparse_flag_apis:
            flagged = by_node.get(call.span)
            if flagged is None:
                continue
            present, value = const_kw(flagged, "sparse")
            if not present or value is False or value is None:
                continue
            seen.add(call.span)
            yield diag("TMS311", call.span,
                        f"{api} with sparse=True produces sparse gradients; MindSpore's embedding layers compute "
                        f"dense gradients (for sparse updates of a large table use an optimizer such as "
                        f"mindspore.nn.LazyAdam)", torch_api=api, confidence=call.confidence)
            continue
        if not (api in facts.apis.sparse_apis or api.startswith("torch.sparse.")):
            continue
        if call.kind == CallKind.ATTRIBUTE and api.startswith("torch.sparse.") and api.count(".") == 1:
            continue
        seen.add(call.span)
        target = facts.target_of(api)
        known = (f"the mapping table maps it to {target}" if target
                 else "the mapping table knows no MindSpore sparse equivalent for it")
        yield diag("TMS311", call.span,
                    f"sparse tensor use: {api}; MindSpore has COOTensor and CSRTensor with a limited operator "
                    f"set, and {known}", torch_api=api, mindspore_api=target, confidence=call.confidence)

