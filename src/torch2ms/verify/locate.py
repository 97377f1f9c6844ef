"""`torch2ms verify FILE:LINE`: turn the torch call at a location of the user's file into a verify job.

The torch code is the call's own text; the MindSpore code is the same text with the
scanner's suggested rewrite applied (the edits of the finding's fix that fall inside
the call). Names the call reads become inputs: shapes come from ``--shape NAME=2,3``
or else from the mapping entry's example. Pure: no torch, no MindSpore.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..api import read_source
from ..engine import scan_source
from ..mappings import MappingTable
from ..model import Category, Diagnostic, ExampleKind, Span
from ..source import SourceText
from .code import split_layer

SETUP_MODULES = ("torch", "mindspore", "numpy", "math")
MS_SETUP = ["import mindspore", "import mindspore as ms", "from mindspore import mint, nn, ops"]


class LocateError(Exception):
    """The location cannot be verified. `where` is the file (and line), `reason` why, in words any face
    can show; `hint` what to pass on the command line to go on ("" when nothing would), which only the
    command line prints (an editor has no flags to give)."""

    def __init__(self, where: str, reason: str, hint: str = "") -> None:
        self.where, self.reason, self.hint = where, reason, hint
        super().__init__(f"{where}: {reason}" + (f"; {hint}" if hint else ""))


def unwrapped(code: str) -> str:
    """`code` without the one pair of parentheses verify puts around an expression, if it has them (never
    a parenthesis of the expression itself: `f(x)` stays whole)."""
    if code.startswith("(") and code.endswith(")"):
        try:
            ast.parse(code[1:-1], mode="eval")
            return code[1:-1]
        except SyntaxError:
            return code
    return code


@dataclass(frozen=True)
class Located:
    diagnostic: Diagnostic
    spec: dict[str, Any]


def parse_location(text: str) -> tuple[str, int] | None:
    path, sep, line = text.rpartition(":")
    if not sep or not line.isdigit() or not path:
        return None
    return path, int(line)


def parse_shape(text: str) -> tuple[str, dict[str, Any]]:
    """`x=2,3` or `x=2,3:int64` -> ("x", {"shape": [2, 3], "dtype": ...})."""
    name, sep, rest = text.partition("=")
    if not sep or not name.isidentifier():
        raise ValueError(f"--shape {text!r}: expected NAME=DIM,DIM[:DTYPE], e.g. x=2,3 or i=4:int64")
    dims, _, dtype = rest.partition(":")
    try:
        shape = [int(d) for d in dims.split(",") if d.strip()]
    except ValueError:
        raise ValueError(f"--shape {text!r}: dimensions must be integers") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"--shape {text!r}: dimensions must not be negative")
    spec: dict[str, Any] = {"shape": shape, "dtype": dtype or "float32"}
    return name, spec


def _inside(inner: Span, outer: Span) -> bool:
    return (inner.start_line, inner.start_col) >= (outer.start_line, outer.start_col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


def rewritten(src: SourceText, diag: Diagnostic) -> str | None:
    """The call's text with the fix's edits inside the call applied; None without a fix."""
    if diag.fix is None:
        return None
    base = src.offset(diag.span.start_line, diag.span.start_col)
    text = src.slice(diag.span)
    edits = sorted(((src.offset(e.span.start_line, e.span.start_col) - base,
                     src.offset(e.span.end_line, e.span.end_col) - base, e.text)
                    for e in diag.fix.edits if _inside(e.span, diag.span)), reverse=True)
    for start, end, new in edits:
        text = text[:start] + new + text[end:]
    return text


def _one_call(code: str) -> ast.Call | None:
    """The call expression `code` is, or None when it is anything else (or not one expression)."""
    try:
        node = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return node if isinstance(node, ast.Call) else None


def _call_at(tree: ast.Module, src: SourceText, span: Span) -> ast.Call | None:
    """The call expression of the file whose span is exactly `span`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == span.start_line and src.span(node) == span:
            return node
    return None


def _setup(tree: ast.Module, modules: tuple[str, ...]) -> list[str]:
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name.split(".")[0] in modules for a in node.names):
            out.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] in modules:
            out.append(ast.unparse(node))
    return out


def _bound(setup: list[str]) -> set[str]:
    names: set[str] = set()
    for line in setup:
        for node in ast.walk(ast.parse(line)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
    return names


def free_names(code: str, bound: set[str]) -> list[str]:
    """Names the expression reads that neither imports nor builtins provide, in order of appearance."""
    tree = ast.parse(code, mode="eval")
    local = {a.arg for node in ast.walk(tree) if isinstance(node, ast.Lambda) for a in node.args.args}
    local |= {n.id for node in ast.walk(tree) if isinstance(node, ast.comprehension)
              for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    seen: list[str] = []
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name)),
                       key=lambda n: (n.lineno, n.col_offset)):
        name = node.id
        if name in bound or name in local or hasattr(builtins, name) or name in seen:
            continue
        seen.append(name)
    return seen


def candidate(diagnostics: Iterable[Diagnostic], line: int) -> Diagnostic | None:
    """The finding `torch2ms verify FILE:LINE` checks: the outermost call starting on `line` whose
    torch API has a MindSpore counterpart (equivalent or different parameters)."""
    found = [d for d in diagnostics if d.span.start_line == line and d.torch_api
             and d.category in (Category.EQUIVALENT, Category.DIFF_PARAMS)]
    if not found:
        return None
    return max(found, key=lambda d: ((d.span.end_line, d.span.end_col) > (d.span.start_line, d.span.start_col),
                                     d.span.end_line - d.span.start_line, d.span.end_col - d.span.start_col,
                                     -d.span.start_col))


def unverifiable(src: SourceText, tree: ast.Module, diag: Diagnostic) -> str | None:
    """Why the finding's call cannot be verified, or None when it can. Only the call itself may run:
    its text, cut by the position model the scanner uses, must be exactly one call expression of the
    file's syntax tree, and the fix's rewrite of it one call expression too. Pure: the editor asks it
    before it offers the verify action."""
    node = _call_at(tree, src, diag.span)
    alone = _one_call(src.slice(diag.span))
    if node is None or alone is None or ast.dump(alone) != ast.dump(node):
        return f"{diag.torch_api} is not a call expression that can run on its own"
    ms_code = rewritten(src, diag)
    if ms_code is None:
        return f"{diag.torch_api} has no automatic rewrite to verify ({diag.message})"
    if _one_call(ms_code) is None:
        return f"the rewrite of {diag.torch_api} is not one call expression: {ms_code!r}"
    return None


def locate(path: str, line: int, table: MappingTable, shapes: dict[str, dict[str, Any]] | None = None,
           config: Any = None) -> Located:
    """The verify job for the outermost mapped torch call starting on `line` of `path`."""
    text, error = read_source(path)
    if text is None:
        reason = error.error.message if error is not None and error.error is not None else "cannot read"
        raise LocateError(path, reason)
    result = scan_source(text, path, config, table)
    if result.error is not None:
        raise LocateError(f"{path}:{result.error.span.start_line}", result.error.message)
    diag = candidate(result.diagnostics, line)
    if diag is None:
        here = [f"{d.code} {d.torch_api or ''}".strip() for d in result.diagnostics if d.span.start_line == line]
        extra = f" (found: {', '.join(here)})" if here else ""
        raise LocateError(f"{path}:{line}", f"no torch call with a MindSpore counterpart starts on this line{extra}")
    src = SourceText(text)
    tree = ast.parse(text)
    why_not = unverifiable(src, tree, diag)
    if why_not is not None:
        raise LocateError(f"{path}:{line}", why_not)
    return job(src, tree, diag, table, shapes, f"{path}:{line}")


def job(src: SourceText, tree: ast.Module, diag: Diagnostic, table: MappingTable,
        shapes: dict[str, dict[str, Any]] | None, where: str) -> Located:
    """The verify job of a finding `unverifiable` accepts: the call and its rewrite as code, with inputs of
    a known shape for every name they read (`shapes`, else the mapping example's), or LocateError. Pure:
    the editor asks it before it offers the verify action."""
    torch_code = src.slice(diag.span)
    ms_code = rewritten(src, diag)
    assert ms_code is not None
    entry = table.entries.get(diag.torch_api or "")
    example = entry.examples[0] if entry is not None and entry.examples else None
    kind = example.kind if example else ExampleKind.FUNCTION
    torch_setup = _setup(tree, SETUP_MODULES)
    ms_setup = [s for s in torch_setup if not s.split()[1].startswith("torch")] + MS_SETUP
    torch_code, ms_code = f"({torch_code})", f"({ms_code})"
    if example and kind in (ExampleKind.LAYER, ExampleKind.LOSS):
        # A layer's constructor: call the user's layer on the example's inputs.
        t_split = split_layer(example.torch)
        if t_split and _is_constructor(torch_code):
            torch_code = t_split[1].replace("__layer", torch_code, 1)
            ms_code = t_split[1].replace("__layer", ms_code, 1)
    try:
        names = free_names(torch_code, _bound(torch_setup) | {"torch"})
    except SyntaxError as exc:
        raise LocateError(where, f"cannot read the call: {exc.msg}") from None
    shapes = dict(shapes or {})
    example_inputs = dict(example.inputs) if example else {}
    inputs: dict[str, Any] = {}
    unmatched_example = [n for n in example_inputs if n not in names]
    for name in names:
        if name in shapes:
            inputs[name] = shapes[name]
        elif name in example_inputs:
            inputs[name] = example_inputs[name]
        elif unmatched_example:
            inputs[name] = example_inputs[unmatched_example.pop(0)]
        else:
            raise LocateError(where, f"cannot tell the shape of '{name}' in {unwrapped(torch_code)}",
                              f"give it with --shape {name}=2,3 (and :DTYPE for a non-float32 input)")
    spec: dict[str, Any] = {
        "id": where,
        "api": diag.torch_api,
        "torch": torch_code,
        "mindspore": ms_code,
        "inputs": inputs,
        "kind": (ExampleKind.FUNCTION if kind is ExampleKind.METHOD else kind).value,
        "torch_setup": torch_setup,
        "mindspore_setup": ms_setup,
    }
    if example:
        spec.update({k: example.extra[k] for k in ("rtol", "atol", "random", "grad") if k in example.extra})
    return Located(diagnostic=diag, spec=spec)


def _is_constructor(code: str) -> bool:
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and not isinstance(node.func, ast.Call)
