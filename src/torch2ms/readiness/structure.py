"""TMS331-TMS336: module structure (nn.Module classes, buffers, hooks, custom autograd Functions,
train/eval, state dicts)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from ..model import CallKind, Confidence, Diagnostic
from ..transforms.custom_gradient import blocker
from .facts import Facts, diag

_MODEL_NAME = re.compile(r"(?i)model|net|module|encoder|decoder|classifier|backbone|generator|discriminator|^m$|"
                         r"^self$|critic|actor|policy|head|student|teacher|ema")


def _name_confidence(facts: Facts, node: ast.Call, apis: Iterable[str]) -> Confidence | None:
    """HIGH when the resolver proved the call one of `apis`; LOW for a torch-looking name; None: not torch."""
    found = [c for c in facts.by_span.get(facts.span(node), ()) if c.kind == CallKind.METHOD]
    if any(c.api in apis and c.confidence is Confidence.HIGH for c in found):
        return Confidence.HIGH
    if any(c.confidence is Confidence.HIGH and not c.api.startswith("torch.Tensor.") for c in found):
        return None  # proven to be some other torch API
    return Confidence.LOW if facts.imports_torch else None


def check_module_structure(facts: Facts) -> Iterator[Diagnostic]:
    """TMS331-TMS336: nn.Module classes, buffers, hooks, custom autograd, train/eval, state dicts."""
    for cls in facts.class_list:
        if cls.is_function:
            why = blocker(cls.node)
            port = "; torch2ms migrate (or --fix --unsafe-fixes) writes it so" if why is None else \
                f"; it is left for a hand port because {why}"
            yield diag("TMS334", facts.def_span(cls.node),
                        f"class {cls.name} is a custom torch.autograd.Function: MindSpore writes a custom "
                        f"gradient as a bprop method on a mindspore.nn.Cell (construct for the forward, bprop "
                        f"for the backward) and calls the Cell instead of {cls.name}.apply{port}",
                        torch_api="torch.autograd.Function", mindspore_api="mindspore.nn.Cell")
        elif cls.is_module:
            names = {s.name for s in cls.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            forward = "; its forward method becomes construct" if "forward" in names else \
                "; its forward (inherited here) becomes construct"
            base = next((b for b in cls.bases if b.startswith("torch.nn.")), "torch.nn.Module")
            yield diag("TMS331", facts.def_span(cls.node),
                        f"class {cls.name} subclasses {base}: in MindSpore it subclasses mindspore.nn.Cell"
                        f"{forward}", torch_api=base, mindspore_api="mindspore.nn.Cell")
    for node in facts.methods.get("register_buffer", ()):
        confidence = _name_confidence(facts, node, ("torch.nn.Module.register_buffer",))
        if confidence is None:
            continue
        yield diag("TMS332", facts.span(node),
                    "register_buffer: MindSpore has no buffers; keep the state as a mindspore.Parameter with "
                    "requires_grad=False (saved in checkpoints) or as a plain Tensor attribute (not saved)",
                    torch_api="torch.nn.Module.register_buffer", mindspore_api="mindspore.Parameter",
                    confidence=Confidence.HIGH)
    for name in sorted(facts.apis.module_hooks):
        for node in facts.methods.get(name, ()):
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}",))
            if confidence is None:
                continue
            ms_name = "register_backward_hook" if "backward" in name else name
            if name == "register_full_backward_pre_hook":
                ms_name = "register_backward_pre_hook"
            yield diag("TMS333", facts.span(node),
                        f"{name}: mindspore.nn.Cell has {ms_name}, but hooks run only in PyNative mode, not in "
                        f"graph mode (jit); move the logic into construct for graph mode",
                        torch_api=f"torch.nn.Module.{name}", mindspore_api=f"mindspore.nn.Cell.{ms_name}",
                        confidence=Confidence.HIGH)
    for name, flag in (("train", True), ("eval", False)):
        for node in facts.methods.get(name, ()):
            if len(node.args) > 1 or node.keywords:
                continue
            first = node.args[0] if node.args else None
            if first is not None and not (isinstance(first, ast.Constant) and isinstance(first.value, bool)):
                continue
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}",))
            if confidence is None:
                continue
            if confidence is Confidence.LOW and not _MODEL_NAME.search(facts.receiver_name(node)):
                continue
            mode = (bool(first.value) if flag else False) if isinstance(first, ast.Constant) else flag
            yield diag("TMS335", facts.span(node),
                        f"{name}(): MindSpore switches training behaviour (dropout, batch statistics) with "
                        f"cell.set_train({mode})", torch_api=f"torch.nn.Module.{name}",
                        mindspore_api="mindspore.nn.Cell.set_train", confidence=confidence)
    for name in ("state_dict", "load_state_dict"):
        for node in facts.methods.get(name, ()):
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}", f"torch.optim.Optimizer.{name}"))
            if confidence is None:
                continue
            if name == "state_dict":
                how = ("save with mindspore.save_checkpoint(cell, path), or read cell.parameters_dict()")
                ms = "mindspore.save_checkpoint"
            else:
                how = ("load with mindspore.load_checkpoint(path) and mindspore.load_param_into_net(cell, params)")
                ms = "mindspore.load_param_into_net"
            yield diag("TMS336", facts.span(node),
                        f"{name}(): {how}; parameter names differ from torch (BatchNorm running_mean/running_var "
                        f"are moving_mean/moving_variance, its weight/bias are gamma/beta), so torch checkpoints "
                        f"need a name mapping", torch_api=f"torch.nn.Module.{name}", mindspore_api=ms,
                        confidence=confidence)

