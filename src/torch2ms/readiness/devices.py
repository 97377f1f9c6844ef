"""TMS341-TMS343: devices and precision (device moves and queries, data parallel wrappers, mixed
precision)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from ..model import CallKind, Diagnostic, Span
from .facts import Facts, diag

_DEVICE_TEXT = re.compile(r"(?i)device|^dev$|cuda|gpu|^rank$|local_rank")
_DEVICE_STRING = re.compile(r"^(cuda|cpu|mps|xpu|npu|hpu|meta)(:\d+)?$")


def _device_like(facts: Facts, node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(_DEVICE_STRING.match(node.value))
    if isinstance(node, ast.Name):
        return bool(_DEVICE_TEXT.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_DEVICE_TEXT.search(node.attr))
    if isinstance(node, ast.Call):
        return facts.api_at(node, kinds=(CallKind.CALL,)) == "torch.device"
    return False


def check_devices(facts: Facts) -> Iterator[Diagnostic]:
    """TMS341-TMS343: device moves and queries, data parallel wrappers, mixed precision."""
    found: list[Diagnostic] = []
    for call in facts.calls:
        api = call.api
        if call.kind is CallKind.TYPE or (call.kind == CallKind.ATTRIBUTE and api != "torch.autocast"):
            continue
        if api in facts.apis.parallel_apis:
            found.append(diag(
                "TMS342", call.span,
                f"{api}: MindSpore does not wrap the model; start processes with msrun, call "
                f"mindspore.communication.init() and set data parallel once with "
                f"mindspore.set_auto_parallel_context(parallel_mode='data_parallel', gradients_mean=True)",
                torch_api=api, mindspore_api="mindspore.set_auto_parallel_context", confidence=call.confidence))
        elif api == "torch.autocast" or _amp_entry_point(api, facts.apis.amp_prefixes):
            last = api.rpartition(".")[2]
            if last == "GradScaler":
                how = ("loss scaling in MindSpore is mindspore.amp.DynamicLossScaler or StaticLossScaler (scale the "
                       "loss in the forward function, unscale the gradients, check them with mindspore.amp.all_finite)")
                ms = "mindspore.amp.DynamicLossScaler"
            else:
                how = ("MindSpore sets mixed precision once on the network with "
                       "mindspore.amp.auto_mixed_precision(net, amp_level='O1'/'O2'/'O3') instead of an autocast region")
                ms = "mindspore.amp.auto_mixed_precision"
            found.append(diag("TMS343", call.span, f"{api}: {how}", torch_api=api, mindspore_api=ms,
                               confidence=call.confidence))
        elif api == "torch.device" or (api.startswith("torch.cuda.") and not api.startswith("torch.cuda.amp.")
                                       and api not in facts.apis.seed_apis):
            found.append(diag(
                "TMS341", call.span,
                f"{api}: MindSpore has no per-tensor devices; choose the device once for the whole program with "
                f"mindspore.set_device('GPU'/'Ascend'/'CPU') and drop device handling",
                torch_api=api, mindspore_api="mindspore.set_device", confidence=call.confidence))
    if facts.imports_torch:
        for node in facts.methods.get("cuda", ()):
            if len(node.args) > 1:
                continue
            found.append(diag(
                "TMS341", facts.span(node),
                ".cuda(): MindSpore places every tensor and Cell on the one device set with mindspore.set_device; "
                "remove the move", torch_api="torch.Tensor.cuda", mindspore_api="mindspore.set_device"))
        for node in facts.methods.get("to", ()):
            device = [a for a in node.args[:1] if _device_like(facts, a)]
            device += [kw.value for kw in node.keywords if kw.arg == "device"]
            if not device:
                continue
            found.append(diag(
                "TMS341", facts.span(node),
                ".to(device): MindSpore places every tensor and Cell on the one device set with "
                "mindspore.set_device; remove the move (keep a dtype conversion as .astype)",
                torch_api="torch.Tensor.to", mindspore_api="mindspore.set_device"))
    # One finding per construct: drop a device finding nested in another (torch.device(... torch.cuda...)).
    device_spans = sorted({d.span for d in found if d.code == "TMS341"})
    nested = _nested_in(device_spans)
    seen: set[tuple[str, Span]] = set()
    for finding in sorted(found, key=lambda d: (d.span.start_line, d.span.start_col, -d.span.end_line, -d.span.end_col)):
        key = (finding.code, finding.span)
        if key in seen:
            continue
        if finding.code == "TMS341" and nested(finding.span):
            continue
        seen.add(key)
        yield finding


def _amp_entry_point(api: str, prefixes: tuple[str, ...]) -> bool:
    """torch.amp.autocast, torch.cuda.amp.GradScaler, ...: not their methods (scaler.step) or private names."""
    for prefix in prefixes:
        if api.startswith(prefix):
            rest = api[len(prefix):]
            return "." not in rest and not rest.startswith("_")
    return False


def _nested_in(spans: list[Span]) -> Callable[[Span], bool]:
    """A test "is this span inside another of `spans`" in one sweep: in (start, -end) order every span
    that could contain a span comes before it, so it is nested exactly when an earlier one reaches as
    far (a pairwise test made a file with thousands of .to(device) calls take minutes)."""
    nested: set[Span] = set()
    far: tuple[int, int] | None = None
    for span in sorted(set(spans), key=lambda s: (s.start_line, s.start_col, -s.end_line, -s.end_col)):
        end = (span.end_line, span.end_col)
        if far is not None and far >= end:
            nested.add(span)
        else:
            far = end
    return nested.__contains__

