"""Small pure helpers over example code (no torch, no MindSpore)."""

from __future__ import annotations

import ast

LAYER_NAME = "__layer"


def split_layer(code: str) -> tuple[str, str] | None:
    """`Ctor(args)(inputs)` -> ("Ctor(args)", "__layer(inputs)"); None for any other shape of code."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
        ctor = ast.unparse(node.func)
        node.func = ast.Name(id=LAYER_NAME, ctx=ast.Load())
        return ctor, ast.unparse(node)
    return None


def receiver(code: str) -> str | None:
    """The name a method is called on (`x` of `x.add_(y)`), if it is a plain name."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def call_forms(torch_code: str, ms_code: str, torch_params: list[tuple[str, bool]] | None, layer: bool,
               first_fixed: int, renames: dict[str, str], skip_defaults: set[str],
               dropped: set[str]) -> list[tuple[str, str, str]]:
    """Variants of an example's call: (form name, torch code, MindSpore code).

    `torch_params` lists the torch callable's parameters as (name, has_default), in order,
    for the arguments that may be passed by keyword. "keyword": the positional arguments
    from `first_fixed` on become keywords, named by torch and renamed for MindSpore as the
    entry declares. "defaults": the last argument is left out on both sides when torch has a
    default for it and the entry does not declare that the defaults differ.
    """
    if not torch_params:
        return []
    forms: list[tuple[str, str, str]] = []
    t_tree, m_tree = ast.parse(torch_code.strip(), mode="eval"), ast.parse(ms_code.strip(), mode="eval")
    t_call, m_call = _outer(t_tree, layer), _outer(m_tree, layer)
    if t_call is None or m_call is None or len(t_call.args) != len(m_call.args):
        return []
    if any(isinstance(a, ast.Starred) for a in t_call.args + m_call.args) or \
            any(k.arg is None for k in t_call.keywords + m_call.keywords):
        return []
    names = dict(torch_params)
    order = [name for name, _ in torch_params]
    positional = len(t_call.args)
    if positional > first_fixed and positional <= len(order):
        moved = order[first_fixed:positional]
        if not any(name in dropped for name in moved):
            t_kw = [ast.keyword(arg=name, value=v) for name, v in zip(moved, t_call.args[first_fixed:])]
            m_kw = [ast.keyword(arg=renames.get(name, name), value=v) for name, v in zip(moved, m_call.args[first_fixed:])]
            forms.append(("keyword",
                          _with(t_tree, layer, t_call.args[:first_fixed], t_call.keywords + t_kw),
                          _with(m_tree, layer, m_call.args[:first_fixed], m_call.keywords + m_kw)))
    # defaults: leave out the last argument that torch has a default for
    if t_call.keywords and len(t_call.keywords) == len(m_call.keywords):
        last = t_call.keywords[-1].arg or ""
        m_name = renames.get(last, last)
        if names.get(last) and last not in skip_defaults and m_call.keywords[-1].arg == m_name:
            forms.append(("defaults",
                          _with(t_tree, layer, t_call.args, t_call.keywords[:-1]),
                          _with(m_tree, layer, m_call.args, m_call.keywords[:-1])))
    elif not t_call.keywords and not m_call.keywords and first_fixed < positional <= len(order):
        last = order[positional - 1]
        if names.get(last) and last not in skip_defaults:
            forms.append(("defaults",
                          _with(t_tree, layer, t_call.args[:-1], []),
                          _with(m_tree, layer, m_call.args[:-1], [])))
    return forms


def _outer(tree: ast.Expression, layer: bool) -> ast.Call | None:
    node = tree.body
    if not isinstance(node, ast.Call):
        return None
    if layer:
        return node.func if isinstance(node.func, ast.Call) else None
    return node


def _with(tree: ast.Expression, layer: bool, args: list[ast.expr], keywords: list[ast.keyword]) -> str:
    """The code of `tree` with its target call's arguments replaced (the tree itself is left alone)."""
    copy = ast.parse(ast.unparse(tree), mode="eval")
    call = _outer(copy, layer)
    assert call is not None
    call.args = [ast.parse(ast.unparse(a), mode="eval").body for a in args]
    call.keywords = [ast.keyword(arg=k.arg, value=ast.parse(ast.unparse(k.value), mode="eval").body)
                     for k in keywords]
    return ast.unparse(copy)
