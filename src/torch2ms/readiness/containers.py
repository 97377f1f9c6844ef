"""TMS321/TMS322: layers or Parameters kept in a plain list, tuple or dict on ``self``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..model import CallKind, Diagnostic, Edit, Fix, Span
from .facts import Facts, diag


def _element_kind(facts: Facts, node: ast.expr) -> str | None:
    """'module' or 'parameter' for a call that builds one, else None."""
    if not isinstance(node, ast.Call):
        return None
    api = facts.api_at(node, kinds=(CallKind.CALL,))
    if api is not None:
        if api in facts.apis.parameter_apis:
            return "parameter"
        if api.startswith("torch.nn.") and api[9:10].isupper() and api not in facts.apis.not_modules:
            return "module"
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in facts.classes and facts.classes[func.id].is_module:
        return "module"
    return None


def _container_elements(value: ast.expr) -> tuple[str, list[ast.expr]] | None:
    if isinstance(value, ast.List):
        return "list", list(value.elts)
    if isinstance(value, ast.Tuple):
        return "tuple", list(value.elts)
    if isinstance(value, ast.Dict):
        if any(key is None for key in value.keys):
            return None
        return "dict", list(value.values)
    if isinstance(value, ast.ListComp):
        return "list", [value.elt]
    if isinstance(value, ast.DictComp):
        return "dict", [value.value]
    return None



def _wrap_fix(facts: Facts, value: ast.expr, shape: str, target: str) -> Fix | None:
    from ..transforms.edits import EditBuilder  # the shared import-insertion helper of the fixes

    span = facts.span(value)
    prefix, suffix = f"{target}(", ")"
    if shape == "tuple":
        if facts.line(span.start_line)[span.start_col:span.start_col + 1] != "(":
            return None  # an unparenthesized tuple `a, b`: wrapping it would make two arguments
        prefix, suffix = f"{target}(list(", "))"  # CellList takes a list, not a tuple
    edits = [Edit(Span(span.start_line, span.start_col, span.start_line, span.start_col), prefix),
             Edit(Span(span.end_line, span.end_col, span.end_line, span.end_col), suffix)]
    try:
        imp = EditBuilder(facts.text, facts.tree).import_edit()
    except (ValueError, IndexError):
        return None
    if imp is not None:
        edits.append(imp)
    edits.sort(key=lambda e: (e.span.start_line, e.span.start_col))
    return Fix(title=f"Wrap in {target}", edits=tuple(edits), safe=False)


def check_containers(facts: Facts) -> Iterator[Diagnostic]:
    """TMS321/TMS322: plain lists, tuples or dicts of layers or of Parameters stored on `self`."""
    for context, stmt in facts.self_assigns:
        owner, _, method_name = context.partition(".")
        cls = facts.classes.get(owner)
        method = facts.function_of.get(context)
        if cls is None or not cls.is_module or "." in method_name or method is None or not method.args.args:
            continue
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        value = stmt.value
        if value is None or not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name) \
                or target.value.id != method.args.args[0].arg:
            continue
        shape_elts = _container_elements(value)
        if shape_elts is None or not shape_elts[1]:
            continue
        shape, elts = shape_elts
        kinds = {_element_kind(facts, e) for e in elts}
        if len(kinds) != 1 or None in kinds:
            continue
        element = kinds.pop()
        assert element is not None
        ms = facts.apis.container_targets.get((element, shape))
        attr = f"self.{target.attr}"
        if element == "module":
            message = (f"{attr} keeps layers in a plain {shape}: torch does not register them (their "
                       f"parameters are missing from parameters() and state_dict()), and MindSpore needs "
                       f"{ms} (or mindspore.nn.SequentialCell when they run in order) to register and "
                       f"compile them")
            code, api = "TMS321", "torch.nn.Module"
        else:
            if ms is None:
                message = (f"{attr} keeps Parameters in a plain dict: use torch.nn.ParameterDict in torch; "
                           f"in MindSpore store each Parameter as an attribute of the Cell")
            else:
                message = (f"{attr} keeps Parameters in a plain {shape}: torch does not register them; "
                           f"MindSpore groups Parameters in {ms} (each needs a unique name)")
            code, api = "TMS322", "torch.nn.Parameter"
        fix = _wrap_fix(facts, value, shape, ms) if ms is not None else None
        yield diag(code, facts.span(value), message, torch_api=api, mindspore_api=ms, fix=fix)

