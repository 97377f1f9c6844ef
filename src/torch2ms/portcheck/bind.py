"""Whether a call's arguments bind to a signature, as Python's own binding decides (the TypeError it raises)."""

from __future__ import annotations

import ast

from .api import Signature


def bind_problems(sig: Signature, call: ast.Call, skip_first: bool = False) -> list[str]:
    """What Python would raise for `call` against `sig` (empty: it binds). `skip_first`: the call passes
    its first parameter implicitly (a method's receiver already left out of `sig` needs no skip).
    Arguments behind `*args` / `**kwargs` make the counts unknown: only what they cannot hide is checked."""
    params = list(sig.params)
    if skip_first and params and params[0].kind in ("pos", "any"):
        params = params[1:]
    star = any(isinstance(a, ast.Starred) for a in call.args)
    double_star = any(k.arg is None for k in call.keywords)
    positional = [p for p in params if p.kind in ("pos", "any")]
    var_positional = any(p.kind == "*" for p in params)
    var_keyword = any(p.kind == "**" for p in params)
    by_name = {p.name: p for p in params if p.kind in ("any", "kw")}
    given = [a for a in call.args if not isinstance(a, ast.Starred)]
    problems: list[str] = []
    if not star and not var_positional and len(given) > len(positional):
        problems.append(f"takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''} "
                        f"but {len(given)} were given")
    filled = {p.name for p in positional[:len(given)]} if not star else set()
    seen: set[str] = set()
    for keyword in call.keywords:
        name = keyword.arg
        if name is None:
            continue
        if name in seen:
            problems.append(f"keyword argument repeated: '{name}'")
            continue
        seen.add(name)
        param = by_name.get(name)
        if param is None:
            if not var_keyword:
                if any(p.name == name and p.kind == "pos" for p in params):
                    problems.append(f"'{name}' is positional-only but was passed as a keyword")
                else:
                    problems.append(f"got an unexpected keyword argument '{name}'")
            continue
        if name in filled:
            problems.append(f"got multiple values for argument '{name}'")
    if not star and not double_star:
        missing = [p.name for p in positional[len(given):] if p.required and p.name not in seen]
        missing += [p.name for p in params if p.kind == "kw" and p.required and p.name not in seen]
        if missing:
            problems.append("missing required argument" + ("s " if len(missing) > 1 else " ")
                            + ", ".join(f"'{m}'" for m in missing))
    return problems


def position_of(sig: Signature, name: str) -> int | None:
    """The positional index of parameter `name` in `sig`, or None (keyword-only or absent)."""
    for index, param in enumerate(p for p in sig.params if p.kind in ("pos", "any")):
        if param.name == name:
            return index
    return None
