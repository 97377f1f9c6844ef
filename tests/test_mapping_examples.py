"""One test per mapping example: the scanner reports exactly the entry's category for the example's torch code."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import pytest

from torch2ms.engine import scan_source
from torch2ms.mappings import load_table, parse_version
from torch2ms.model import Category, DynamicShape, DynCondition, MappingEntry, ParamFact

TABLE = load_table()
VERSION = parse_version(TABLE.meta.default_target)
LINE = 4  # the line of `return <torch code>` in the wrapper below
_NAME = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)")


def _cases() -> list[tuple[str, int]]:
    return [(api, n) for api, entry in sorted(TABLE.entries.items()) for n in range(len(entry.examples))]


def _wrap(entry: MappingEntry, number: int) -> str:
    example = entry.examples[number]
    names = sorted(example.inputs) or ["x"]
    params = ", ".join(f"{name}: torch.Tensor" for name in names)
    # Inside forward() the example is network code, where dynamic shapes are TMS201/TMS202.
    return (f"import torch\nclass _Example(torch.nn.Module):\n    def forward(self, {params}):\n"
            f"        return {example.torch}\n")


def _outer_call(code: str, api: str) -> ast.Call | None:
    """The outermost call in `code` whose callee ends with the API's last name."""
    last = api.rpartition(".")[2]
    for node in ast.walk(ast.parse(code, mode="eval")):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == last:
                return node
    return None


def _only_a_type_target(code: str, api: str) -> bool:
    """The example names the API only as an isinstance/issubclass target (README: a type reference)."""
    tree = ast.parse(code, mode="eval")
    targets = [arg for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2
               for arg in (node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]])]
    return bool(targets) and any(ast.unparse(t) == api for t in targets) and _outer_call(code, api) is None


def _is_const(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_const(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_const(e) for e in node.elts)
    return False


def _passed(call: ast.Call | None, name: str | None, position: int | None) -> ast.expr | None:
    if call is None:
        return None
    found = next((k.value for k in call.keywords if k.arg is not None and k.arg == name), None)
    if found is None and position is not None and position < len(call.args) \
            and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        found = call.args[position]
    return found


def _touches(fact: ParamFact, call: ast.Call | None) -> bool:
    """Whether a parameter fact concerns the example's call: a renamed keyword it writes, a dropped
    parameter it passes, an unsupported value it may pass, a default it relies on, a value to translate
    or to write in another type, a parameter whose meaning differs that it passes; other facts always."""
    if fact.kind == "renamed":
        return call is not None and any(k.arg == fact.torch for k in call.keywords)
    if fact.kind == "dropped":
        return _passed(call, fact.torch, fact.position) is not None
    if fact.kind == "unsupported_values":
        arg = _passed(call, fact.torch, fact.position)
        return arg is not None and (not _is_const(arg) or ast.literal_eval(arg) in fact.values)
    if fact.kind == "default_differs":
        return _passed(call, fact.torch, fact.position) is None
    if fact.kind == "translated":
        return _passed(call, fact.torch, fact.position) is not None
    if fact.kind in ("semantics_differ", "unsupported_inputs") and fact.torch is not None:
        arg = _passed(call, fact.torch, fact.position)
        return arg is not None and (not fact.values or not _is_const(arg) or ast.literal_eval(arg) in fact.values)
    if fact.kind == "retyped":  # an int (or a value that may be one) where MindSpore takes another type
        arg = _passed(call, fact.torch, fact.position)
        return arg is not None and (not _is_const(arg) or type(ast.literal_eval(arg)) is int)
    return True


def _holds(condition: DynCondition, dyn: DynamicShape, call: ast.Call, inputs: Mapping[str, Any]) -> bool:
    """Whether an example's call meets a condition of an always-dynamic fact."""
    if condition is DynCondition.ONE_ARGUMENT:
        return len(call.args) + len(call.keywords) == 1
    first = dyn.args[0] if dyn.args else None
    arg = next((k.value for k in call.keywords if first is not None and k.arg == first.name), None)
    if arg is None and first is not None and first.position is not None and first.position < len(call.args):
        arg = call.args[first.position]
    return isinstance(arg, ast.Name) and arg.id in inputs


def expected_code(entry: MappingEntry, number: int) -> str:
    """The code the entry's data promises for this example (independent of checks.py): its category,
    where an entry's parameter differences count only if the example's call touches one of them (or the
    entry's note tells of another difference); in network code a host sync (.item()) is TMS206."""
    if _only_a_type_target(entry.examples[number].torch, entry.api):
        return "TMS106"
    category = entry.category_for(VERSION, "cpu")
    target = entry.target_for(VERSION, "cpu")
    if target is not None and target.params and category in (Category.EQUIVALENT, Category.DIFF_PARAMS):
        call = _outer_call(entry.examples[number].torch, entry.api)
        if any(_touches(f, call) for f in target.params):
            category = Category.DIFF_PARAMS
        elif not entry.note:
            category = Category.EQUIVALENT
    if entry.api in ("torch.Tensor.item", "torch.Tensor.tolist", "torch.Tensor.numpy"):
        return "TMS206"  # one finding per use: the host sync in forward outranks the mapping
    dyn = entry.dynamic_shape
    if dyn is not None and category is not Category.MISSING:
        call = _outer_call(entry.examples[number].torch, entry.api)
        assert call is not None, "a dynamic-shape example must call the API"
        if any(k.arg in dyn.static_with for k in call.keywords):
            return _CODES[category]
        if dyn.always and (not dyn.when or any(_holds(c, dyn, call, entry.examples[number].inputs) for c in dyn.when)):
            return "TMS201"
        for fact in dyn.args:
            arg = next((k.value for k in call.keywords if k.arg == fact.name), None)
            if arg is None and fact.position is not None and fact.position < len(call.args):
                arg = call.args[fact.position]
            if arg is not None and not _is_const(arg):
                if isinstance(arg, ast.Name) and arg.id in entry.examples[number].inputs:
                    # An input tensor as the argument (an index, or the other operand of max): whether it
                    # makes the shape dynamic is decided by the rules from where the tensor comes from.
                    return _CODES[category] + "|TMS202"
                return "TMS202"
    return _CODES[category]


_CODES = {Category.EQUIVALENT: "TMS101", Category.DIFF_PARAMS: "TMS102", Category.MISSING: "TMS103"}


@pytest.mark.parametrize(("api", "number"), _cases(), ids=[f"{a}[{n}]" for a, n in _cases()])
def test_example_reports_its_category(api: str, number: int) -> None:
    entry = TABLE.entries[api]
    source = _wrap(entry, number)
    result = scan_source(source, "example.py", table=TABLE)
    assert result.error is None, result.error
    mine = [d for d in result.diagnostics
            if d.span.start_line == LINE and d.span.end_line == LINE and d.torch_api == api]
    assert mine, f"no finding for {api} in:\n{source}\ngot: {[(d.code, d.torch_api) for d in result.diagnostics]}"
    outermost = max(mine, key=lambda d: (d.span.end_col - d.span.start_col, -d.span.start_col))
    assert outermost.code in expected_code(entry, number).split("|"), f"{outermost.code}: {outermost.message}\n{source}"


def test_there_are_many_examples() -> None:
    assert len(_cases()) >= 1000
