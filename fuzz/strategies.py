"""Hypothesis strategies for Python programs that use torch.

`torch_programs()` builds valid, torch-heavy programs from a small grammar (import
forms and aliases, calls of real table APIs, tensor methods, nn.Module subclasses,
the statement kinds the resolver walks). `hypothesmith_programs()` takes
hypothesmith's grammar-derived programs and gives them torch imports and torch
names, so the resolver sees unusual syntax around torch uses.
"""

from __future__ import annotations

import keyword
import re
from functools import lru_cache

from hypothesis import strategies as st

from torch2ms.mappings import load_table

IMPORTS = (
    "import torch", "import torch as th", "import torch.nn as nn", "import torch.nn.functional as F",
    "from torch import nn", "from torch.nn import functional as F", "from torch import *",
    "from torch.nn import *", "import torch.optim as optim", "from torch import zeros, ones, nonzero",
    "import torch.nn", "import torch.linalg as LA", "F = torch.nn.functional", "th = torch",
)
ALIASES = {"torch": "torch", "th": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
           "optim": "torch.optim", "LA": "torch.linalg"}
NAMES = ("x", "y", "z", "t", "self", "model", "F", "nn", "torch", "th", "d", "out", "loss", "i")
METHODS = ("view", "reshape", "abs", "sum", "mean", "to", "cuda", "cpu", "item", "numpy", "backward", "nonzero",
           "masked_select", "unique", "clamp", "float", "values", "keys", "zero_grad", "step", "train", "eval",
           "state_dict", "register_buffer", "register_forward_hook", "parameters", "size", "shape", "T")


@lru_cache(maxsize=1)
def table_apis() -> tuple[str, ...]:
    """Real API names from the mapping table (module-level functions and classes)."""
    return tuple(sorted(api for api in load_table().entries if not api.startswith("torch.Tensor.")))


def _spelled(api: str, alias: str) -> str:
    """`torch.nn.functional.relu` spelled through an alias that covers it, else in full."""
    target = ALIASES[alias]
    if api.startswith(target + "."):
        return alias + api[len(target):]
    return api


@lru_cache(maxsize=1)
def api_call_name() -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(table_apis()), st.sampled_from(sorted(ALIASES))).map(
        lambda pair: _spelled(*pair))


_atoms = st.one_of(
    st.sampled_from(NAMES),
    st.integers(-3, 100).map(str),
    st.sampled_from(("None", "True", "0.5", "'s'", "b''", "...", "[]", "{}", "()", "torch.float32", "'cuda'")),
)


def _call(func: st.SearchStrategy[str], arg: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    keyword_arg = st.tuples(st.sampled_from(("dim", "min", "inplace", "device", "dtype", "keepdim", "p", "x")),
                            arg).map(lambda kv: f"{kv[0]}={kv[1]}")
    positional = st.lists(arg | arg.map(lambda a: "*" + a), max_size=3)
    named = st.lists(keyword_arg | arg.map(lambda a: "**" + a), max_size=2)
    args = st.tuples(positional, named).map(lambda pn: ", ".join(pn[0] + pn[1]))
    return st.tuples(func, args).map(lambda fa: f"{fa[0]}({fa[1]})")


@lru_cache(maxsize=1)
def expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            _call(api_call_name(), inner),
            _call(st.tuples(inner, st.sampled_from(METHODS)).map(lambda p: f"{p[0]}.{p[1]}"), inner),
            st.tuples(inner, st.sampled_from(METHODS)).map(lambda p: f"{p[0]}.{p[1]}"),
            st.tuples(inner, st.sampled_from(("+", "*", "@", "if c else", "and", "<", "//", "**")), inner)
            .map(lambda p: f"({p[0]} {p[1]} {p[2]})"),
            st.tuples(inner, inner).map(lambda p: f"{p[0]}[{p[1]}]"),
            inner.map(lambda e: f"(lambda x, *a, F=None, **k: {e})"),
            inner.map(lambda e: f"[{e} for x in y if x]"),
            inner.map(lambda e: f"{{k: {e} for k in d}}"),
            inner.map(lambda e: f"(t := {e})"),
            inner.map(lambda e: f'f"{{{e}}}"'),
            st.lists(inner, min_size=1, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
            inner.map(lambda e: f"await {e}"),
            inner.map(lambda e: f"not {e}"),
        )

    return st.recursive(_atoms | api_call_name(), extend, max_leaves=8)


def _indent(block: str) -> str:
    return "".join("    " + line + "\n" if line.strip() else "\n" for line in block.splitlines())


@lru_cache(maxsize=1)
def statements() -> st.SearchStrategy[str]:
    expr = expressions()
    target = st.sampled_from(("x", "y", "self.layer", "self.x", "F", "nn", "torch", "th", "d['k']", "a, *b"))
    simple = st.one_of(
        st.tuples(target, expr).map(lambda p: f"{p[0]} = {p[1]}"),
        st.tuples(st.sampled_from(("x", "y")), expr).map(lambda p: f"{p[0]} += {p[1]}"),
        st.tuples(st.sampled_from(("x", "y", "z")), st.sampled_from(("torch.Tensor", "nn.Module", "int")), expr)
        .map(lambda p: f"{p[0]}: {p[1]} = {p[2]}"),
        expr,
        expr.map(lambda e: f"return {e}"),
        expr.map(lambda e: f"yield {e}"),
        st.sampled_from(IMPORTS),
        st.sampled_from(("pass", "global F", "nonlocal x", "del x", "break", "continue",
                         "import os, sys", "from . import torch", "from __future__ import annotations",
                         "x = y = torch", "torch = None", "def torch(): pass", "F = lambda x: x")),
        st.tuples(expr, st.sampled_from(("noqa", "noqa: TMS101", "noqa:TMS2", "type: ignore"))).map(
            lambda p: f"{p[0]}  # {p[1]}"),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        body = st.lists(inner, min_size=1, max_size=3).map(lambda xs: _indent("\n".join(xs)))
        return st.one_of(
            st.tuples(expr, body).map(lambda p: f"if {p[0]}:\n{p[1]}else:\n    pass"),
            st.tuples(expr, body).map(lambda p: f"for x in {p[0]}:\n{p[1]}"),
            st.tuples(expr, body).map(lambda p: f"while {p[0]}:\n{p[1]}"),
            st.tuples(expr, body).map(lambda p: f"with {p[0]} as ctx:\n{p[1]}"),
            body.map(lambda b: f"try:\n{b}except Exception as F:\n    pass\nfinally:\n    pass"),
            st.tuples(st.sampled_from(("forward", "f", "__init__", "__getitem__", "collate_fn", "g")),
                      st.sampled_from(("self, x", "self, x: torch.Tensor", "x, F=None", "*args, **kw", "torch")),
                      st.sampled_from(("", "@torch.no_grad()\n", "@staticmethod\n", "@property\n")),
                      st.booleans(), body)
            .map(lambda p: f"{p[2]}{'async ' if p[3] else ''}def {p[0]}({p[1]}):\n{p[4]}"),
            st.tuples(st.sampled_from(("nn.Module", "torch.nn.Module", "Dataset", "torch.autograd.Function",
                                       "object", "th.nn.Module", "nn.Module, metaclass=M")), body)
            .map(lambda p: f"class C({p[0]}):\n{p[1]}"),
            st.tuples(expr, body).map(lambda p: f"match {p[0]}:\n    case [x, *_]:\n{_indent(p[1])}"
                                                f"    case _:\n        pass"),
        )

    return st.recursive(simple, extend, max_leaves=6)


@st.composite
def torch_programs(draw: st.DrawFn) -> str:
    """A syntactically valid program with torch imports and torch uses."""
    imports = draw(st.lists(st.sampled_from(IMPORTS), min_size=1, max_size=4))
    body = draw(st.lists(statements(), min_size=1, max_size=6))
    text = "\n".join(imports + body) + "\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_SWAPS = ("torch", "F", "nn", "x", "zeros", "Module", "forward", "self", "nonzero", "view", "backward", "T")


@lru_cache(maxsize=1)
def _grammar_programs() -> st.SearchStrategy[str]:
    import hypothesmith

    grammar: st.SearchStrategy[str] = hypothesmith.from_grammar()
    return grammar  # building it compiles CPython's grammar: once, not per draw


@st.composite
def hypothesmith_programs(draw: st.DrawFn) -> str:
    """hypothesmith's grammar-based programs with torch imports and some names swapped to torch ones."""
    source = draw(_grammar_programs())
    swaps = draw(st.lists(st.sampled_from(_SWAPS), min_size=1, max_size=6))

    def repl(match: re.Match[str]) -> str:
        word = match.group(0)
        if keyword.iskeyword(word) or not swaps or len(word) < 1:
            return word
        return swaps.pop()

    header = draw(st.sampled_from(("import torch\n", "import torch.nn as nn\nimport torch.nn.functional as F\n",
                                   "from torch import *\n", "import torch as x\n")))
    return header + _WORD.sub(repl, source, count=len(swaps))
