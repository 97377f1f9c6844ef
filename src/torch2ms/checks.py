"""Pure functions: a resolved `ApiCall` and its mapping entry -> one `Diagnostic`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
import re
from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

from . import dynamic_shape
from .codes import CODES
from .mappings import TableView, doc_url
from .model import (
    ApiCall, CallKind, Category, Confidence, Diagnostic, Edit, FactKind, Fix, MappingEntry, ParamFact, Span, Target,
    TargetChoice, arg_for,
)
from .source import SourceText
from .transforms.fixer import ATTRIBUTE_TITLE, ONCE, Fixer

if TYPE_CHECKING:
    from .training_rules import LabelCast

_CODE_BY_CATEGORY = {
    Category.EQUIVALENT: "TMS101",
    Category.DIFF_PARAMS: "TMS102",
    Category.MISSING: "TMS103",
}


def _version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(v) for v in version)


def relevant_params(call: ApiCall, target: Target) -> list[ParamFact]:
    """The parameter facts that matter for this call: the ones it passes, and defaults it relies on."""
    return [fact for fact in target.params if _relevant(call, target, fact)]


def _relevant(call: ApiCall, target: Target, fact: ParamFact) -> bool:
    passed = fact.passed(call.args)
    match fact.kind:
        case FactKind.TRANSLATED | FactKind.DROPPED:
            return passed is not None
        case FactKind.RETYPED if "list" in fact.values:  # any value but a list display
            return passed is not None and not passed.starred
        case FactKind.RETYPED:  # an int, or a value that may be one
            return passed is not None and (not passed.is_const or isinstance(passed.value, int))
        case FactKind.RENAMED:  # only a keyword argument is affected
            return any(a.keyword == fact.torch for a in call.args if a.keyword)
        case FactKind.UNSUPPORTED_VALUES:
            return passed is not None and (not passed.is_const or fact.matches(passed.value))
        case FactKind.SEMANTICS_DIFFER | FactKind.UNSUPPORTED_INPUTS if fact.torch is not None:  # when passed
            # (with `values` or `types`: one of those, or unknown)
            return passed is not None and (not (fact.values or fact.types) or not passed.is_const
                                           or fact.matches(passed.value))
        case FactKind.DEFAULT_DIFFERS:
            # (not where another passed parameter sets the same MindSpore one: unbiased= for ddof)
            return passed is None and not any(
                other.kind is FactKind.TRANSLATED and other.ms == fact.ms and other.ms is not None
                and other.passed(call.args) is not None for other in target.params)
        case FactKind.SEMANTICS_DIFFER | FactKind.UNSUPPORTED_INPUTS | FactKind.ADDED_REQUIRED:
            return True
        case _:
            assert_never(fact.kind)


def _message(call: ApiCall, entry: MappingEntry, category: Category, choice: TargetChoice,
             version: tuple[int, ...]) -> str:
    api = call.api
    target = choice.target
    if category is Category.MISSING:
        if target is not None and choice.device is not None and choice.device in target.no_kernel:
            where = "Ascend" if choice.device == "ascend" else choice.device.upper()
            return (f"{api} has no MindSpore {_version_text(version)} form that runs on {where}: {target.api} "
                    f"has no {where} kernel (choose another device with --device)")
        text = f"{api} has no MindSpore {_version_text(version)} equivalent"
        return f"{text}: {entry.note}" if entry.note else text
    assert target is not None
    where = choice.device_note()
    if category is Category.EQUIVALENT:
        text = f"{api} -> {target.api}"
        if entry.category_for(version, choice.device) is Category.DIFF_PARAMS:
            text += " (this call uses none of the parameters that differ)"
        return text + (f" ({where})" if where else "")
    details = "; ".join(f.describe() for f in relevant_params(call, target))
    text = f"{api} -> {target.api} with different parameters"
    if details:
        text += f": {details}"
    if entry.note and not details:
        text += f" ({entry.note})"
    if where:
        text += f" ({where})"
    return text


def check_call(call: ApiCall, view: TableView, network: bool | None = None,
               fixer: Callable[[ApiCall, Diagnostic], Diagnostic] | None = None) -> Diagnostic:
    """`view`: the tables for the scan's MindSpore version and device (the form for the device is named,
    `MappingEntry.choose`); `network`: whether the call is in the network graph (default: the resolver's
    `in_network`); `fixer`: gives the finding its fix (`transforms.Fixer`), built with the finding from the same call."""
    if call.kind is CallKind.TYPE:
        return _type_reference(call, view, fixer)
    diag = _finding(call, view, network)
    if fixer is None:
        return diag
    if diag.category is Category.DYNAMIC_SHAPE:
        # The rewrite does not change what sets the output's shape: the finding keeps its dynamic-shape
        # code and carries the fix of the call's mapping finding (torch.nonzero -> mindspore.mint.nonzero).
        # (the fixer decides from that finding's code whether there is a rewrite at all)
        fix = fixer(call, _finding(call, view, network, shapes=False)).fix
        return diag.with_fix(fix) if fix is not None else diag
    return fixer(call, diag)


def _type_reference(call: ApiCall, view: TableView,
                    fixer: Callable[[ApiCall, Diagnostic], Diagnostic] | None) -> Diagnostic:
    """TMS106: a torch type named where nothing runs (`x: torch.Tensor`, `isinstance(m, nn.Conv2d)`,
    `except torch.OutOfMemoryError`). The entry's facts are about calling the API, not about its name:
    none is told; the fix renames the reference (the rename an attribute use of the API gets)."""
    info = CODES["TMS106"]
    entry = view.lookup(call.api)
    target = view.target(entry) if entry is not None else None
    if target is not None:
        message = f"{call.api} names a type here (nothing runs): the MindSpore type is {target.api}"
    elif entry is not None:
        message = (f"{call.api} names a type here (nothing runs); MindSpore {_version_text(view.version)} has no "
                   f"such type: the reference goes with the code that uses it")
    else:
        message = f"{call.api} names a type here (nothing runs); it is not in the mapping tables"
    diag = Diagnostic(code=info.code, severity=info.severity, category=info.category, span=call.span,
                      message=message, torch_api=call.api, mindspore_api=target.api if target else None,
                      doc_url=doc_url(entry, target) or info.doc_url)
    if fixer is None:
        return diag
    if target is None:  # a transform the entry names may port what the type is used for (a custom gradient's class)
        return fixer(call, diag)
    # the fixer rewrites an equivalent attribute use of the API: the same name written elsewhere
    as_use = Diagnostic(code="TMS101", severity=info.severity, category=Category.EQUIVALENT, span=call.span,
                        message=message, torch_api=call.api, mindspore_api=target.api)
    fix = fixer(replace(call, kind=CallKind.ATTRIBUTE), as_use).fix
    return diag.with_fix(fix) if fix is not None else diag


def _finding(call: ApiCall, view: TableView, network: bool | None, shapes: bool = True) -> Diagnostic:
    entry = view.lookup(call.api)
    in_network = call.in_network if network is None else network
    if call.confidence is Confidence.LOW:
        info = CODES["TMS105"]
        target = view.target(entry) if entry else None
        suffix = f" -> {target.api}" if target else ""
        return Diagnostic(
            code=info.code, severity=info.severity, category=info.category, span=call.span,
            message=f"possible Tensor method .{call.api.rpartition('.')[2]}() (receiver not proven a tensor): "
                    f"{call.api}{suffix}",
            torch_api=call.api, mindspore_api=target.api if target else None,
            doc_url=doc_url(entry, target) or info.doc_url, confidence=Confidence.LOW,
        )
    if entry is None:
        info = CODES["TMS104"]
        return Diagnostic(
            code=info.code, severity=info.severity, category=info.category, span=call.span,
            message=f"{call.api} is not in the mapping tables; check MindSpore's documentation by hand",
            torch_api=call.api, doc_url=info.doc_url,
        )
    choice = view.choose(entry)
    category = entry.category_of(choice)
    target = choice.target
    if category is not Category.MISSING and shapes:  # dynamic-shape rules: torch2ms/dynamic_shape.py
        dynamic = dynamic_shape.check_call(call, entry, target, in_network)
        if dynamic is not None:
            return dynamic
    # The category of this call: the entry's parameter differences count only where the call passes the
    # parameter or relies on its default. An entry of different parameters whose facts all concern
    # parameters the call does not use is equivalent for it, unless its note tells of another difference.
    if target is not None and category in (Category.EQUIVALENT, Category.DIFF_PARAMS) and target.params:
        if relevant_params(call, target):
            category = Category.DIFF_PARAMS
        elif not entry.note:
            category = Category.EQUIVALENT
    code = _CODE_BY_CATEGORY[category]
    info = CODES[code]
    return Diagnostic(
        code=code, severity=info.severity, category=category, span=call.span,
        message=_message(call, entry, category, choice, view.version),
        torch_api=call.api, mindspore_api=target.api if target else None,
        doc_url=doc_url(entry, target) or info.doc_url,
    )


def _written(text: str, form: str) -> bool:
    """Whether `text` is already `form` written around some argument (the module spelled any way), or around a
    computed value passed once to a lambda (`Fixer.written`'s `once`)."""
    text = text.strip()
    once = re.fullmatch(rf"\(lambda {ONCE}: (?P<body>.+)\)\((?P<value>.+)\)", text, re.DOTALL)
    if once is not None and _written(once.group("body"), form):
        return True
    first, *rest = re.escape(form).replace(re.escape("mindspore."), r"[\w.]+\.").split(re.escape("{arg}"))
    if not rest:
        return False
    pattern = first + r"(?P<arg>.+?)" + rest[0] + "".join(r"(?P=arg)" + part for part in rest[1:])
    if re.fullmatch(pattern, text, re.DOTALL) is not None or re.fullmatch(pattern, f"({text})", re.DOTALL) is not None:
        return True  # (an argument's span leaves out the parentheses around it)
    try:  # the form in parentheses of its own (`((y.astype(...) if ... else y))`, as migrate writes it)
        inner = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    unwrapped = ast.get_source_segment(text, inner)
    return unwrapped is not None and unwrapped != text and _written(unwrapped, form)


def layer_call(call: ApiCall, view: TableView, source: SourceText, fixer: Fixer | None = None,
               casts: Mapping[str, LabelCast] | None = None) -> Diagnostic | None:
    """A torch layer instance called with keywords its forward names and MindSpore's construct names otherwise
    (`self.fc(input=x)`: mindspore.mint.nn.Linear's construct takes `x`), or a loss called with labels its
    MindSpore class takes in another dtype (`casts`: data/training.yaml's `label_casts`, `criterion(out, y)` ->
    `criterion(out, y.astype(mindspore.int32))`), as a finding whose fix renames the keywords and casts the
    labels (`fixer`: the scan's, None when fixes are off); None where the call passes neither (or the layer has
    no form for the scan)."""
    entry = view.lookup(call.api)
    target = view.target(entry) if entry is not None else None
    if target is None:
        return None
    renames = dict(target.forward)
    passed = [a for a in call.args if a.keyword in renames and a.keyword_span is not None and not a.starred]
    cast = (casts or {}).get(call.api) if target.api.startswith("mindspore.") else None
    labels = arg_for(call.args, cast.keyword, cast.position) if cast is not None else None
    if labels is not None and (labels.starred or labels.is_const
                               or cast is not None and _written(source.slice(labels.span), cast.form)):
        labels = None
    left = [] if any(a.starred for a in call.args) else \
        [(name, form) for name, position, form in target.forward_defaults if arg_for(call.args, name, position) is None]
    if not passed and labels is None and not left:
        return None
    info = CODES["TMS102"]
    parts = []
    if passed:
        parts.append(f"called with torch's forward keywords: in {target.api}'s construct " +
                     ", ".join(f"'{a.keyword}' is '{renames[str(a.keyword)]}'" for a in passed))
    if cast is not None and labels is not None:
        parts.append(f"called with labels {target.api} takes in another dtype (int64 class indices raise): "
                     f"written {cast.form.format(arg='LABELS')}")
    if left:
        parts.append(f"called without {', '.join(repr(name) for name, _ in left)}, which {target.api}'s construct "
                     "requires: torch's default is " + "; ".join(form.format(input="INPUT", layer="LAYER")
                                                                 for _, form in left))
    fix = None
    if fixer is not None:
        edits: tuple[Edit, ...] | None = tuple(Edit(a.keyword_span, renames[str(a.keyword)])
                                               for a in passed if a.keyword_span is not None)
        if cast is not None and labels is not None:
            written = fixer.written(labels.span, cast.form, once=True)  # (labels a call computes: evaluated once)
            edits = edits + written if edits is not None and written is not None else None
        if left and edits is not None:
            added = _defaults_written(call, left, source, fixer)
            edits = edits + added if added is not None else None
        if edits:
            fix = Fix(title=f"Pass {target.api}'s construct arguments", edits=edits, safe=labels is None)
    return Diagnostic(code=info.code, severity=info.severity, category=Category.DIFF_PARAMS, span=call.span,
                      message=f"{call.api} " + "; ".join(parts), torch_api=call.api, mindspore_api=target.api,
                      doc_url=doc_url(entry, target) or info.doc_url, fix=fix)


_PLAIN_CHAIN = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def _defaults_written(call: ApiCall, left: Sequence[tuple[str, str]], source: SourceText,
                      fixer: Fixer) -> tuple[Edit, ...] | None:
    """The edits that pass the forward parameters `left` (name, form) a layer's call leaves out, after its positional
    arguments: the form with {input} the call's first argument (which `Fixer.written` evaluates once, refusing one
    that calls something) and {layer} the layer called (a name or attribute chain); None where it cannot be written
    (the input passed by keyword, a layer that is not a plain name, a keyword among the arguments)."""
    positional = [a for a in call.args if a.keyword is None]
    if not positional or len(positional) != len(call.args) or call.func_span is None:
        return None
    layer = source.slice(call.func_span).strip()
    if _PLAIN_CHAIN.fullmatch(layer) is None:
        return None
    forms = ", ".join(form.replace("{input}", "{arg}").replace("{layer}", layer) for _, form in left)
    return fixer.written(positional[0].span, "{arg}, " + forms) if len(positional) == 1 else None


def layer_attribute(calls: Sequence[ApiCall], store: bool, view: TableView,
                    fixer: Fixer | None = None) -> Diagnostic | None:
    """An attribute of a torch layer instance (`calls`: ``CLASS.NAME`` for each class the value may be, see
    `resolve.LayerAttribute`) that the layer's MindSpore class for the scan names otherwise or lacks (the
    targets' `attributes`). A read: a finding whose fix writes MindSpore's name (``m.groups`` -> ``m.group`` on
    mindspore.nn.Conv2d), the same in every class, or an error where a class has none (the read raises
    AttributeError). A write (`store`): a warning without fix, as MindSpore's layer may read the value only when it
    is built (``norm.eps = 1e-5`` changes nothing in a mindspore.nn.LayerNorm, whose primitive holds its epsilon),
    also where the class holds it by torch's name and reads it only when built (the targets' `built_attributes`:
    ``bn.eps = 1e-3`` on a mindspore.nn.BatchNorm2d).
    None where every class keeps torch's name or a class has no MindSpore form for the scan."""
    if not calls:
        return None
    attr = calls[0].api.rpartition(".")[2]
    names: dict[str, tuple[str, str | None]] = {}  # torch class -> (MindSpore class, its name for the attribute)
    built: list[str] = []  # the MindSpore classes that hold it by torch's name and read it only when built
    differing: list[tuple[str, str]] = []  # (MindSpore class, what each side gave) where it holds another value
    for call in calls:
        cls = call.api.rpartition(".")[0]
        entry = view.lookup(cls)
        target = view.target(entry) if entry is not None else None
        if target is None or not target.api.startswith("mindspore."):
            return None
        named, ms_name = target.attribute(attr)
        tensor = entry.renamed_tensor(target, attr) if entry is not None and not named and not store else None
        if tensor is not None:  # a tensor of the layer read by torch's name (the weight facts: weight -> gamma)
            named, ms_name = True, tensor
        names[cls] = (target.api, ms_name if named else attr)
        if not named and attr in target.built_attributes:
            built.append(target.api)
        note = target.differing(attr) if not named else None
        if note is not None:
            differing.append((target.api, note))
    written = {ms_name for _, ms_name in names.values()}
    if written == {attr} and not store and differing:
        info = CODES["TMS102"]
        return Diagnostic(code=info.code, severity=info.severity, category=Category.DIFF_PARAMS, span=calls[0].span,
                          message=f"{calls[0].api}: " + "; ".join(
                              f"{ms_class} holds '{attr}' with another value ({note})" for ms_class, note in differing)
                          + f" (MindSpore {_version_text(view.version)}): read it where torch's value is not relied on, "
                          "or keep the value given where the layer is built",
                          torch_api=calls[0].api, mindspore_api=differing[0][0], doc_url=info.doc_url)
    if written == {attr} and not (store and built):
        return None
    call = calls[0]
    torch_api = call.api
    version = _version_text(view.version)
    each = "; ".join(f"{ms_class} has no attribute '{attr}'" if ms_name is None else
                     f"'{ms_name}' in {ms_class}" for ms_class, ms_name in names.values())
    first = next(iter(names.values()))[0]
    if store and written == {attr}:
        info = CODES["TMS102"]
        return Diagnostic(code=info.code, severity=info.severity, category=Category.DIFF_PARAMS, span=call.span,
                          message=f"{torch_api} set after the layer is built: {' and '.join(built)} "
                                  f"{'reads' if len(built) == 1 else 'read'} '{attr}' only when built (MindSpore "
                                  f"{version}), so the value set changes nothing: pass it where the layer is built",
                          torch_api=torch_api, mindspore_api=built[0], doc_url=info.doc_url)
    if store:
        info = CODES["TMS102"]
        return Diagnostic(code=info.code, severity=info.severity, category=Category.DIFF_PARAMS, span=call.span,
                          message=f"{torch_api} set after the layer is built: {each} (MindSpore {version}); MindSpore's "
                                  "layer may read the value only when it is built: pass it where the layer is built",
                          torch_api=torch_api, mindspore_api=first, doc_url=info.doc_url)
    if None in written:
        lacking = sorted(ms_class for ms_class, ms_name in names.values() if ms_name is None)
        info = CODES["TMS103"]
        return Diagnostic(code=info.code, severity=info.severity, category=Category.MISSING, span=call.span,
                          message=f"{torch_api}: {' and '.join(lacking)} {'has' if len(lacking) == 1 else 'have'} "
                                  f"no attribute '{attr}' in MindSpore {version} (reading it raises AttributeError): "
                                  "take the value from where the layer is built",
                          torch_api=torch_api, mindspore_api=lacking[0], doc_url=info.doc_url)
    if len(written) > 1:
        info = CODES["TMS102"]
        return Diagnostic(code=info.code, severity=info.severity, category=Category.DIFF_PARAMS, span=call.span,
                          message=f"{torch_api}: the MindSpore classes the value may be name the attribute otherwise: "
                                  f"{each}", torch_api=torch_api, mindspore_api=first, doc_url=info.doc_url)
    ms_name = written.pop()
    assert ms_name is not None
    ms_classes = sorted({ms_class for ms_class, _ in names.values()})
    info = CODES["TMS101"]
    fix = None
    if fixer is not None:
        span = call.span
        name_span = Span(span.end_line, span.end_col - len(attr), span.end_line, span.end_col)
        fix = Fix(title=f"{ATTRIBUTE_TITLE}: '{ms_name}'", edits=(Edit(name_span, ms_name),), safe=True)
    return Diagnostic(code=info.code, severity=info.severity, category=Category.EQUIVALENT, span=call.span,
                      message=f"{torch_api} -> {ms_classes[0]}.{ms_name}: the attribute's name in MindSpore's "
                              f"{' and '.join(ms_classes)}", torch_api=torch_api,
                      mindspore_api=f"{ms_classes[0]}.{ms_name}", doc_url=info.doc_url, fix=fix)
