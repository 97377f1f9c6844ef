"""GRAPH-mode readiness (TMS441): the constructs MindSpore's static graph compiler rejects, found in each
Cell's `construct` and in what it calls (methods of the Cell called on `self`, functions of the file,
functions decorated with `mindspore.jit`). The rules are data: src/torch2ms/data/graph_mode.yaml, each
compiled in GRAPH mode by tests/test_graph_mode.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from .. import syntax
from ..data import folder as data_folder
from . import names as ms_names

DATA_FILE = "graph_mode.yaml"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True, slots=True)
class GraphRule:
    reason: str
    raises: str
    example: str
    node: str = ""  # an ast node class name
    member: str = ""  # or a method name ...
    receiver: str = ""  # ... on a value of this kind ("parameter"; "self": the Cell itself; "": any value) ...
    cell: str = ""  # ... ("self") where the Cell derives from this MindSpore class (public name) ...
    positional: int = -1  # ... called with this many positional arguments (-1: any number) ...
    allowed: tuple[str, ...] = ()  # ... unless they are these, as written ("1, 0")


@lru_cache(maxsize=1)
def load_rules() -> tuple[GraphRule, ...]:
    import yaml  # only where a file is read as MindSpore code: a scan starts without yaml

    text = data_folder().joinpath(DATA_FILE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    out = []
    for index, raw in enumerate(data["rules"]):
        unknown = set(raw) - {"node", "member", "receiver", "cell", "positional", "allowed", "reason", "raises",
                              "example"}
        if unknown or not raw.get("reason") or bool(raw.get("node")) == bool(raw.get("member")):
            raise ValueError(f"{DATA_FILE}: rules[{index}]: a rule has a reason and either node or member "
                             f"(unknown keys: {sorted(unknown)})")
        if raw.get("node") and not isinstance(getattr(ast, raw["node"], None), type):
            raise ValueError(f"{DATA_FILE}: rules[{index}].node: {raw['node']!r} is not an ast node class")
        out.append(GraphRule(**{**raw, "allowed": tuple(raw.get("allowed", ()))}))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class GraphCode:
    """A function of the file that runs as graph code, and why (the construct it is reached from)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    name: str
    via: str  # "" for a construct or a jit function; else the construct that calls it
    cls: str  # the class whose self it sees ("" for a function)


def graph_code(tree: ast.Module, names: dict[str, str], cell_classes: dict[str, list[str]]) -> list[GraphCode]:
    """The graph code of a file: the construct of each Cell subclass (`cell_classes`: name -> the file's
    base classes), functions decorated with mindspore.jit, and what they call, transitively."""
    methods: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for stmt in tree.body:
        if isinstance(stmt, _FUNCTIONS):
            functions[stmt.name] = stmt
    for node in syntax.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods[node.name] = {m.name: m for m in node.body if isinstance(m, _FUNCTIONS)}

    def method_of(cls: str, name: str, depth: int = 0) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        if depth > 20 or cls not in methods:
            return None
        if name in methods[cls]:
            return cls, methods[cls][name]
        for base in cell_classes.get(cls, []):
            found = method_of(base, name, depth + 1)
            if found is not None:
                return found
        return None

    out: list[GraphCode] = []
    seen: set[int] = set()
    todo: list[GraphCode] = []
    for cls in cell_classes:
        found = method_of(cls, "construct")
        if found is not None:
            todo.append(GraphCode(found[1], f"{found[0]}.construct", "", cls))
    for node in syntax.walk(tree):
        if isinstance(node, _FUNCTIONS) and any(
                ms_names.dotted(d.func if isinstance(d, ast.Call) else d, names) in ("mindspore.jit", "mindspore.ms_function")
                for d in node.decorator_list):
            todo.append(GraphCode(node, node.name, "", ""))
    while todo:
        item = todo.pop(0)
        if id(item.node) in seen:
            continue
        seen.add(id(item.node))
        out.append(item)
        root = item.via or item.name
        for call in ast.walk(item.node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                    and item.cls:
                found = method_of(item.cls, func.attr)
                if found is not None and found[1].name != "construct":
                    todo.append(GraphCode(found[1], f"{found[0]}.{func.attr}", root, item.cls))
            elif isinstance(func, ast.Name) and func.id in functions:
                todo.append(GraphCode(functions[func.id], func.id, root, ""))
    return out


def _walk_graph(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body (a class defined inside is reported, not entered)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        item = stack.pop()
        yield item
        if not isinstance(item, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(item))


def violations(code: GraphCode, parameter_attrs: set[str], names: dict[str, str],
               bases: frozenset[str] = frozenset()) -> Iterator[tuple[ast.AST, GraphRule]]:
    """(node, rule) for each construct of `code` a rule rejects; `parameter_attrs`: the attributes of
    self that hold a Parameter; `names`: the file's MindSpore imports (a member rule is a method's, not a
    module's function: ``ops.transpose(x, perm)``); `bases`: the MindSpore classes (public names) the class whose
    self `code` sees derives from, for the rules on the Cell's own methods."""
    by_node = {rule.node: rule for rule in load_rules() if rule.node}
    members: dict[str, list[GraphRule]] = {}
    for each in load_rules():
        if each.member:
            members.setdefault(each.member, []).append(each)
    for node in _walk_graph(code.node):
        rule = by_node.get(type(node).__name__)
        if rule is not None:
            yield node, rule
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in members:
            for member_rule in members[node.func.attr]:
                if ms_names.dotted(node.func.value, names) is None \
                        and _member_matches(member_rule, node, parameter_attrs, bases):
                    yield node, member_rule
                    break


def _member_matches(rule: GraphRule, call: ast.Call, parameter_attrs: set[str], bases: frozenset[str]) -> bool:
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    on_self = isinstance(receiver, ast.Name) and receiver.id == "self"
    if rule.receiver == "self":
        return on_self and rule.cell in bases  # the Cell's own method, where its class derives from rule.cell
    if on_self:
        return False  # the Cell's own method or operator (`self.transpose = ops.Transpose()`), not a tensor's
    if rule.receiver == "parameter" and not (
            isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
            and receiver.value.id == "self" and receiver.attr in parameter_attrs):
        return False
    if rule.positional >= 0:
        if len(call.args) != rule.positional or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if ", ".join(ast.unparse(a) for a in call.args) in rule.allowed:
            return False
    return True
