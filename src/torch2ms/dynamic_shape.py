"""Dynamic-shape risk analysis: when a torch program makes a shape depend on data.

MindSpore compiles a network to a static graph. A shape that is only known once
tensor values are known (the number of non-zero elements, a ``k`` read from a
tensor with ``.item()``, a branch taken on a tensor value) either stops the
compilation or pushes the graph into the slower dynamic-shape mode.

The resolver (resolve.py) does the data flow in its one pass: it tags values
with where they come from (`STATIC`: shapes, constants and configuration;
`DATA`: Python values read out of tensors; `BOOL`: boolean tensors; `DYN`:
tensors whose shape depends on values) and records `ShapeEvent`s for the facts
that are not API calls (boolean-mask subscripts, data-dependent slice bounds,
``if``/``while`` on tensor values, ``int(tensor)``, calls between user
functions). This module holds the rules and the judging, as pure functions:

- `check_call` decides for one resolved API call whether it makes a dynamic
  shape (TMS201/TMS202/TMS204, or TMS25x outside the network graph);
- `event_diagnostics` turns the recorded events into TMS203-TMS206 / TMS253-TMS254;
- `network_contexts` computes the network execution graph: ``forward`` of
  nn.Module subclasses and every function or method of the same file that it
  calls, directly or through other functions.

Codes (see codes.py): TMS20x are findings in network code (warnings), TMS25x
the same risks in data loading and preprocessing (information: a data pipeline
runs in Python, but the varying sizes it produces reach the network as varying
input shapes). Control flow and host syncs are only findings in network code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, assert_never

from .codes import CODES
from .mappings import TableView
from .model import (
    ApiCall, Arg, Category, Confidence, Diagnostic, DynamicArg, DynamicShape, DynCondition, DynRule, MappingEntry,
    ScopeFacts, ShapeResult, Span, Target, arg_for,
)

# Value tags set by the resolver (Val.tag, Arg.tag).
STATIC = "static"  # known when the graph is compiled: shapes, sizes, constants, configuration
DATA = "data"  # a Python value read out of tensor contents (.item(), int(t), .tolist())
BOOL = "bool"  # a boolean tensor (comparison, logical op): indexing with it selects by value
DYN = "dyn"  # a tensor whose shape depends on tensor values (nonzero, x[mask], ...)
GUESS = "guess"  # the result of a torch API outside the table, only guessed to be a tensor
EMPTY = "empty_1d"  # a 1-D tensor with no elements (torch.tensor([]), torch.empty(0)), or a sequence holding one

# Event kinds recorded by the resolver.
BOOL_INDEX = "bool_index"  # x[mask] with a boolean tensor index
MASK_INDEX = "mask_index"  # x[mask] where `mask` is a tensor named like a mask (dtype unknown)
DATA_SLICE = "data_slice"  # x[:n] with n read from tensor values
CONDITION = "condition"  # if / while / conditional expression on tensor values
WEAK_CONDITION = "weak_condition"  # the same on a bare tensor name (`if flag:`): low confidence
LOOP = "loop"  # for ... in range(n) with n read from tensor values
HOST_SYNC = "host_sync"  # int(t), float(t), bool(t): a tensor value copied to Python
ASSERT = "assert"  # assert on tensor values: the check needs the value in Python
CALL = "call"  # a call of a user function or method: an edge of the call graph


@dataclass(frozen=True, slots=True)
class ShapeEvent:
    """A fact about the program that the dynamic-shape rules judge."""

    kind: str
    span: Span
    in_network: bool
    context: str
    detail: str = ""  # short source text (the index, the bound, the builtin called)
    targets: tuple[str, ...] = ()  # CALL: qualified names the callee may have


# ---------------------------------------------------------------- result tags (used by the resolver)
def member_tag(recv_tag: str, fact: DynamicShape | None, result: ShapeResult | None) -> str:
    """The tag of what a Tensor member gives on a receiver tagged `recv_tag` ('' for none); `fact` and
    `result`: the member's dynamic-shape fact and shape result in the tables."""
    if result is ShapeResult.SHAPE:
        return DATA if recv_tag == DYN else STATIC
    if result is ShapeResult.SYNC:
        return DATA
    if fact is not None and fact.unconditional:
        return DYN
    if result is ShapeResult.BOOL:
        return DYN if recv_tag == DYN else BOOL
    if result is ShapeResult.BOOL_REDUCTION:
        return BOOL
    if recv_tag in (DYN, EMPTY) and result in (ShapeResult.KEEPS, ShapeResult.KEEPS_SHAPE):
        return recv_tag  # (an empty tensor moved or cast: `torch.tensor([]).to(device)`)
    if recv_tag == BOOL and result is ShapeResult.KEEPS:
        return BOOL
    return ""


def function_tag(api: str, args: Sequence[Arg], fact: DynamicShape | None, result: ShapeResult | None) -> str:
    """The tag of what calling torch function `api` with `args` gives ('' for none); `fact` and `result`: its
    dynamic-shape fact and shape result in the tables."""
    if api.rpartition(".")[2].startswith(("is_", "has_", "are_")):
        return GUESS  # torch.jit.is_scripting(), torch.is_grad_enabled(): flags, not tensors
    if fact is not None and fact.always:
        return DYN if always_dynamic(fact, args) else ""
    if result in (ShapeResult.BOOL, ShapeResult.BOOL_REDUCTION):
        return BOOL
    if result is ShapeResult.SHAPE:
        return STATIC
    if result in (ShapeResult.KEEPS, ShapeResult.KEEPS_SHAPE) and any(a.tag == DYN for a in args):
        return DYN
    return ""


def combine_tensor_tags(bitwise: bool, left: str, right: str) -> str:
    """Tag of a binary operation with at least one tensor operand."""
    if left == DYN or right == DYN:
        return DYN
    if bitwise and left == BOOL and right == BOOL:
        return BOOL
    return ""


def combine_scalar_tags(left_tag: str, left_const: bool, right_tag: str, right_const: bool) -> str:
    """Tag of a binary operation of two non-tensor values."""
    if left_tag == DATA or right_tag == DATA:
        return DATA
    if (left_const or left_tag == STATIC) and (right_const or right_tag == STATIC):
        return STATIC
    return ""


# ---------------------------------------------------------------- call rules
# The tables say which calls make a shape depend on data (`dynamic_shape:` of an entry, written in
# scripts/mapping_dynamic.yaml): always, under a condition, or through the values of some arguments, each
# judged by its rule (model.DynRule). This module judges; it names no API.
_DEFAULT_REMEDY = "pad the result to a fixed maximum size and carry a mask"


def _single_argument(args: Sequence[Arg]) -> bool:
    return len(args) == 1 and not args[0].starred


def always_dynamic(fact: DynamicShape, args: Sequence[Arg]) -> bool:
    """Whether a call with `args` of an API with `fact` returns a shape that follows its input's values."""
    if not fact.always or any(a.keyword in fact.static_with for a in args if a.keyword):
        return False
    if not fact.when:
        return True
    for condition in fact.when:
        match condition:
            case DynCondition.ONE_ARGUMENT:
                if _single_argument(args):
                    return True
            case DynCondition.TENSOR_ARGUMENT:
                first = fact.args[0] if fact.args else None
                arg = arg_for(args, first.name, first.position) if first is not None else None
                if arg is not None and arg.is_tensor:
                    return True
            case _ as unreachable:
                assert_never(unreachable)
    return False


def _origin(arg: Arg) -> tuple[str, Confidence] | None:
    """Why a count/dim/bound argument is not fixed at compile time; None when it is."""
    if arg.is_const or arg.tag == STATIC:
        return None
    if arg.is_tensor:
        return "is a tensor, so its value is only known at run time", Confidence.HIGH
    if arg.tag == DATA:
        return "is read from tensor values (.item(), int(t), .tolist() or a data-dependent size)", Confidence.HIGH
    return "is not a compile-time constant (its origin is unknown here)", Confidence.LOW


def _diag(code: str, network: bool, span: Span, message: str, api: str | None = None,
          ms_api: str | None = None, confidence: Confidence = Confidence.HIGH) -> Diagnostic:
    if not network:
        code = "TMS25" + code[-1]
        message = "outside the network: " + message + DATA_SUFFIX
    info = CODES[code]
    return Diagnostic(code=info.code, severity=info.severity, category=info.category, span=span,
                      message=message, torch_api=api, mindspore_api=ms_api, doc_url=info.doc_url,
                      confidence=confidence)


DATA_SUFFIX = ("; this code is not reached from any forward of this file (data loading, preprocessing or "
               "host code), so it runs in Python, but varying sizes it produces reach the network as varying "
               "input shapes: pad to a fixed maximum or bucket the lengths, and carry a mask")


def check_call(call: ApiCall, entry: MappingEntry | None, target: Target | None, network: bool) -> Diagnostic | None:
    """The dynamic-shape finding for one resolved API call, or None when its shapes are static."""
    fact = entry.dynamic_shape if entry is not None else None
    if call.confidence is Confidence.LOW or fact is None:
        return None
    ms_api = target.api if target is not None else None
    where = f" ({ms_api} in MindSpore)" if ms_api else ""
    if always_dynamic(fact, call.args):
        return _always(call, fact, where, ms_api, network)
    if any(a.keyword in fact.static_with for a in call.args if a.keyword):
        return None
    for rule in fact.args:
        if rule.varargs:
            candidates = [a for a in call.args if a.keyword is None]
        else:
            arg = arg_for(call.args, rule.name, rule.position)
            candidates = [arg] if arg is not None else []
        for arg in candidates:
            found = _judge_arg(call, rule, arg, where, ms_api, network)
            if found is not None:
                return found
    return None


def _always(call: ApiCall, fact: DynamicShape, where: str, ms_api: str | None, network: bool,
            confidence: Confidence = Confidence.HIGH) -> Diagnostic:
    remedy = fact.remedy or _DEFAULT_REMEDY
    what = f"{fact.what} " if fact.what else ""
    message = (f"dynamic shape: {call.api}{where} {what}returns as many elements as the input's values "
               f"select, so MindSpore cannot fix its output shape when it compiles the graph (the graph "
               f"falls back to dynamic-shape execution or fails to compile); remedy: {remedy}")
    return _diag("TMS201", network, call.span, message, call.api, ms_api, confidence)


def _judge_arg(call: ApiCall, fact: DynamicArg, arg: Arg, where: str, ms_api: str | None,
               network: bool) -> Diagnostic | None:
    if arg.starred:
        return None
    rule, name = fact.rule, fact.name
    if rule is DynRule.INDEX:
        if arg.tag != DYN:
            return None  # the index's shape is the input's shape: static unless it is itself dynamic
        message = (f"dynamic shape: {call.api}{where}: the index tensor '{name}' has a data-dependent length "
                   f"(it comes from nonzero, masking or the like), so the result's length changes with the "
                   f"data; remedy: pad the index to a fixed maximum length and mask the padded rows")
        return _diag("TMS202", network, call.span, message, call.api, ms_api)
    origin = _origin(arg)
    if origin is None:
        return None
    reason, confidence = origin
    if rule is DynRule.DIM and (confidence is Confidence.LOW or arg.is_tensor):
        # an axis from configuration is the normal case; only a value read from data is a risk
        # (a tensor in the axis position is the other operand: torch.max(a, b))
        return None
    if rule is DynRule.DIM:
        message = (f"dynamic shape: {call.api}{where}: the axis '{name}' {reason}; MindSpore needs axes as "
                   f"compile-time constants to infer the output shape; remedy: use a constant axis "
                   f"(an int literal or a configuration attribute)")
        return _diag("TMS202", network, call.span, message, call.api, ms_api, confidence)
    if rule is DynRule.BOUND:
        message = (f"dynamic shape: {call.api}{where}: '{name}' {reason}, so the slice length changes with the "
                   f"data; remedy: cut to a fixed maximum length and mask the padding, or bucket input "
                   f"lengths with padding")
        return _diag("TMS204", network, call.span, message, call.api, ms_api, confidence)
    message = (f"dynamic shape: {call.api}{where}: '{name}' {reason}, so the output shape can change from call "
               f"to call and MindSpore must recompile or run the graph with dynamic shapes; remedy: use a fixed "
               f"maximum (e.g. the largest k you need) and mask the surplus")
    return _diag("TMS202", network, call.span, message, call.api, ms_api, confidence)


# ---------------------------------------------------------------- scope
# A class as the scope needs it: (name, bases, methods defined in its body, nn.Module subclass). A base is
# a class of the same file or "@" + an import reference; see resolve.ClassInfo and model.ScopeFacts.
ClassFact = tuple[str, tuple[str, ...], tuple[str, ...], bool]


def class_facts(classes: Iterable[Any]) -> tuple[ClassFact, ...]:
    """The resolver's `ClassInfo`s as small tuples."""
    return tuple((c.name, tuple(c.bases), tuple(c.own), bool(c.is_module)) for c in classes)


class _Methods:
    """Method lookup through the classes of one file: `self.helper` reaches the base that defines it,
    and a method called on a class also reaches the overrides of its subclasses in the file."""

    def __init__(self, classes: Iterable[ClassFact]) -> None:
        self.classes: dict[str, ClassFact] = {}
        self.subclasses: dict[str, list[str]] = {}
        for fact in classes:
            self.classes.setdefault(fact[0], fact)
            for base in fact[1]:
                if base[:1] != "@":
                    self.subclasses.setdefault(base, []).append(fact[0])

    def defining(self, name: str, method: str) -> str | None:
        """The class of the file whose body defines `method` for class `name` (depth-first, left to right)."""
        todo, seen = [name], set()
        while todo:
            current = todo.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            fact = self.classes[current]
            if method in fact[2]:
                return current
            todo[:0] = [b for b in fact[1] if b[:1] != "@"]
        return None

    def expand(self, target: str) -> tuple[str, ...]:
        """The contexts a call edge `Cls.method` may run: the definition found through the bases, the
        subclasses' overrides; any other target is itself."""
        owner, dot, method = target.partition(".")
        if not dot or "." in method or owner not in self.classes:
            return (target,)
        out = [target]
        found = self.defining(owner, method)
        if found is not None and found != owner:
            out.append(f"{found}.{method}")
        todo, seen = list(self.subclasses.get(owner, ())), {owner}
        while todo:
            sub = todo.pop()
            if sub in seen:
                continue
            seen.add(sub)
            if method in self.classes[sub][2]:
                out.append(f"{sub}.{method}")
            todo.extend(self.subclasses.get(sub, ()))
        return tuple(out)


def network_contexts(calls: Iterable[ApiCall], events: Iterable[ShapeEvent],
                     classes: Iterable[ClassFact] = ()) -> frozenset[str]:
    """Contexts (functions) in the network graph: forward and what it calls, transitively.

    `classes` (see `class_facts`) lets ``self.helper(x)`` reach a helper inherited from a base class
    of the same file, and the overrides of a method in subclasses."""
    roots: set[str] = set()
    edges: dict[str, list[str]] = {}
    for call in calls:
        if call.in_network and call.context:
            roots.add(call.context)
    for event in events:
        if event.in_network and event.context:
            roots.add(event.context)
        if event.kind == CALL and event.context:
            edges.setdefault(event.context, []).extend(event.targets)
    if not edges:
        return frozenset(roots)
    methods = _Methods(classes)
    seen = set(roots)
    todo = list(roots)
    while todo:
        context = todo.pop()
        for source in _prefixes(context):
            for target in edges.get(source, ()):
                for reached in methods.expand(target) if methods.classes else (target,):
                    if reached not in seen:
                        seen.add(reached)
                        todo.append(reached)
    # a nested function of a network function belongs to the network too
    for source in list(edges):
        if source not in seen and any(prefix in seen for prefix in _prefixes(source)):
            seen.add(source)
    return frozenset(seen)


def _prefixes(context: str) -> list[str]:
    out = [context]
    while "." in context:
        context = context.rpartition(".")[0]
        out.append(context)
    return out


def in_network(flag: bool, context: str, network: frozenset[str]) -> bool:
    if flag:
        return True
    if not context or not network:
        return False
    return any(prefix in network for prefix in _prefixes(context))


def _replaced(diags: Iterable[Diagnostic]) -> tuple[tuple[Span, str], ...]:
    """(span, code) of the data-processing findings that network findings `diags` replace."""
    return tuple((d.span, "TMS25" + d.code[-1]) for d in diags if d.code[-1] in "1234")


def filter_latent(scope: ScopeFacts, keep: Callable[[Diagnostic], bool]) -> ScopeFacts:
    """`scope` with only the latent findings that `keep` accepts (select/ignore, `# noqa`); what they
    replace stays, so a re-graded function loses its TMS25x findings whether or not TMS20x is shown."""
    latent = tuple((context, tuple(d for d in diags if keep(d)), replaced)
                   for context, diags, replaced in scope.latent)
    if latent == scope.latent:
        return scope
    return replace(scope, latent=latent)


def scope_facts(calls: Sequence[ApiCall], events: Sequence[ShapeEvent], classes: tuple[ClassFact, ...],
                imports: Sequence[tuple[str, str]], network: frozenset[str], view: TableView) -> ScopeFacts | None:
    """What the project pass (project_graph.py) needs to extend this file's network graph across files.

    Latent findings: per function outside this file's network graph, the findings it would have as
    network code (the TMS20x versions of its TMS25x findings, its control flow and host syncs), with
    the (span, code) of the TMS25x findings they replace. Edges are kept only where they can lead to
    such findings or out of the file, so a file with nothing to re-grade and no imports carries nothing."""
    methods = _Methods(classes)
    off = [c for c in calls if not in_network(c.in_network, c.context, network)]
    off_events = [e for e in events if e.kind != CALL and not in_network(e.in_network, e.context, network)]
    found: dict[str, list[Diagnostic]] = {}
    if off or off_events:
        for call in off:
            if call.confidence is Confidence.LOW:
                continue
            entry = view.lookup(call.api)
            if entry is None or entry.dynamic_shape is None:
                continue
            if view.category(entry) is not Category.MISSING:
                diag = check_call(call, entry, view.target(entry), True)
            else:
                continue  # judged by _extra_items
            if diag is not None:
                found.setdefault(call.context, []).append(diag)
        for context, diag in _event_items(off, off_events, _ALWAYS):
            found.setdefault(context, []).append(diag)
        for context, diag in _extra_items(off, view, _ALWAYS):
            found.setdefault(context, []).append(diag)
    known: set[str] = {c.context for c in calls if c.context} | {e.context for e in events if e.context}
    local: dict[str, set[str]] = {}  # off-network context -> contexts of the file it may run
    outside: dict[str, set[str]] = {}  # context -> callees that other modules may define
    for event in events:
        if event.kind != CALL or not event.context:
            continue
        net = in_network(event.in_network, event.context, network)
        for target in event.targets:
            if target[:1] == "@":
                outside.setdefault(event.context, set()).add(target)
                continue
            owner, dot, method = target.partition(".")
            expanded = methods.expand(target) if methods.classes else (target,)
            if dot and owner in methods.classes:
                # a method: inherited from a base in another module, or overridden in a subclass there
                outside.setdefault(event.context, set()).add(target)
            if not net:
                local.setdefault(event.context, set()).update(t for t in expanded if t in known and t != event.context)
    for context in known:  # reaching a function reaches the functions nested in it
        for prefix in _prefixes(context)[1:]:
            if prefix in known and not in_network(False, prefix, network):
                local.setdefault(prefix, set()).add(context)
                break
    # keep what can lead to a finding or out of the file
    relevant = set(found) | set(outside)
    callers: dict[str, list[str]] = {}
    for source, targets in local.items():
        for target in targets:
            callers.setdefault(target, []).append(source)
    todo = list(relevant)
    while todo:
        for source in callers.get(todo.pop(), ()):
            if source not in relevant:
                relevant.add(source)
                todo.append(source)
    roots = tuple((c, tuple(sorted(outside[c]))) for c in sorted(outside) if in_network(False, c, network))
    edges = []
    for context in sorted(relevant):
        if in_network(False, context, network):
            continue
        targets = {t for t in local.get(context, ()) if t in relevant} | outside.get(context, set())
        if targets:
            edges.append((context, tuple(sorted(targets))))
    latent_items = tuple((c, tuple(found[c]), _replaced(found[c])) for c in sorted(found))
    if not (roots or edges or classes or imports or latent_items):
        return None
    return ScopeFacts(roots=roots, edges=tuple(edges), classes=classes, imports=tuple(imports), latent=latent_items)


# ---------------------------------------------------------------- events
_SYNC_APIS = {"torch.Tensor.item": ".item()", "torch.Tensor.tolist": ".tolist()", "torch.Tensor.numpy": ".numpy()"}


def _ALWAYS(flag: bool, context: str) -> bool:
    return True


def event_diagnostics(calls: Iterable[ApiCall], events: Iterable[ShapeEvent],
                      network: frozenset[str]) -> list[Diagnostic]:
    """Findings that are not decided by one API call: subscripts, control flow, host syncs."""
    return [diag for _, diag in _event_items(calls, events, lambda flag, context: in_network(flag, context, network))]


def _event_items(calls: Iterable[ApiCall], events: Iterable[ShapeEvent],
                 is_network: Callable[[bool, str], bool]) -> Iterator[tuple[str, Diagnostic]]:
    """(context, finding) for `event_diagnostics`; `is_network(flag, context)` decides the scope."""
    for call in calls:
        what = _SYNC_APIS.get(call.api)
        if what is not None and call.confidence is Confidence.HIGH and is_network(call.in_network, call.context):
            yield call.context, _host_sync(call.span, what, call.api)
    for event in events:
        kind = event.kind
        if kind == CALL:
            continue
        net = is_network(event.in_network, event.context)
        if kind in (BOOL_INDEX, MASK_INDEX):
            sure = kind == BOOL_INDEX
            index = f"'{event.detail}'" if event.detail else "the index"
            message = (f"dynamic shape: boolean-mask indexing: {index} is a boolean tensor"
                       f"{'' if sure else ' (judged by its name)'}, so the result keeps as many elements as "
                       f"the mask has True values; MindSpore cannot fix that shape when compiling the graph; "
                       f"remedy: keep the shape: multiply by the mask or use where(mask, x, 0) (select), "
                       f"and reduce with masked sums and counts")
            yield event.context, _diag("TMS203", net, event.span, message,
                                       confidence=Confidence.HIGH if sure else Confidence.LOW)
        elif kind == DATA_SLICE:
            message = (f"dynamic shape: the slice bound '{event.detail}' is read from tensor values, so the slice "
                       f"length changes with the data and MindSpore must run the graph with dynamic shapes; "
                       f"remedy: slice to a fixed maximum length and mask the padding, or bucket input lengths")
            yield event.context, _diag("TMS204", net, event.span, message)
        elif not net:
            continue  # control flow and host syncs are normal in data processing
        elif kind in (CONDITION, LOOP, WEAK_CONDITION):
            head = "the loop count" if kind == LOOP else "the condition"
            message = (f"data-dependent control flow: {head} '{event.detail}' depends on tensor values; "
                       f"MindSpore's graph compiler must turn it into graph control flow, which fails to "
                       f"compile or falls back when the branches (or iterations) produce different shapes, "
                       f"and reading the value forces a device-to-host copy; remedy: compute both branches and "
                       f"pick per element with where/select, or use a fixed loop count and mask the surplus")
            yield event.context, _diag("TMS205", True, event.span, message,
                                       confidence=Confidence.LOW if kind == WEAK_CONDITION else Confidence.HIGH)
        elif kind == HOST_SYNC:
            yield event.context, _host_sync(event.span, f"{event.detail}(tensor)", None)
        elif kind == ASSERT:
            yield event.context, _host_sync(event.span, f"assert '{event.detail}'", None,
                                            "check the inputs before the network runs (in data processing "
                                            "or the training loop), or drop the check from construct")


def _host_sync(span: Span, what: str, api: str | None, remedy: str = "") -> Diagnostic:
    message = (f"host sync in network code: {what} copies a tensor value to Python; in a MindSpore graph "
               f"this is not a graph operation (it breaks the graph or forces a sync), and any shape derived "
               f"from it is dynamic; remedy: "
               + (remedy or "keep the value as a tensor inside the network, and move the conversion out of "
                            "forward (to the training loop, logging or metrics)"))
    return _diag("TMS206", True, span, message, api)


def extra_call_diagnostics(calls: Iterable[ApiCall], view: TableView, network: frozenset[str]) -> list[Diagnostic]:
    """Dynamic-shape findings that come in addition to a call's mapping finding.

    - APIs MindSpore lacks (kthvalue): they keep their TMS103. For a mapped API the dynamic-shape
      finding replaces the mapping finding (checks.check_call); an API with no MindSpore counterpart
      must be rewritten anyway, and the rewrite must keep shapes static.
    - In network code, an always-dynamic method (``x.nonzero()``) on a receiver not proven a tensor
      (a helper's parameter): TMS201 with low confidence, beside the TMS105.
    """
    return [diag for _, diag in _extra_items(calls, view, lambda flag, context: in_network(flag, context, network))]


def _extra_items(calls: Iterable[ApiCall], view: TableView,
                 is_network: Callable[[bool, str], bool]) -> Iterator[tuple[str, Diagnostic]]:
    """(context, finding) for `extra_call_diagnostics`; `is_network(flag, context)` decides the scope."""
    for call in calls:
        entry = view.lookup(call.api)
        fact = entry.dynamic_shape if entry is not None else None
        if entry is None or fact is None:
            continue
        if call.confidence is Confidence.LOW:
            if fact.unconditional and is_network(call.in_network, call.context):
                yield call.context, _always(call, fact, "", None, True, Confidence.LOW)
            continue
        if view.category(entry) is not Category.MISSING:
            continue
        found = check_call(call, entry, None, is_network(call.in_network, call.context))
        if found is not None:
            yield call.context, found
