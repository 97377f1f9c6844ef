"""The public API of MindSpore as data (src/torch2ms/data/mindspore_api.json, written by
scripts/build_mindspore_api.py from the installed MindSpore): what a name is, its parameters, what it returns.

Read once per process; nothing here imports MindSpore.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..data import folder as data_folder

DATA_FILE = "mindspore_api.json"


NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "..."})()  # a default the data does not show


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # "pos" (positional only), "any" (positional or keyword), "kw" (keyword only), "*", "**"
    required: bool
    default: Any = NO_DEFAULT  # the default where it is a plain constant


@dataclass(frozen=True, slots=True)
class Signature:
    params: tuple[Param, ...]

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The parameters of a signature written as build_mindspore_api.py writes them."""
        tokens = [t.strip() for t in text.split(",") if t.strip()] if text else []
        out: list[Param] = []
        keyword_only = False
        for token in tokens:
            if token == "/":
                out = [Param(p.name, "pos", p.required) for p in out]
            elif token == "*":
                keyword_only = True
            elif token.startswith("**"):
                out.append(Param(token[2:], "**", False))
            elif token.startswith("*"):
                out.append(Param(token[1:], "*", False))
                keyword_only = True
            else:
                name, equals, default = token.partition("=")
                value = NO_DEFAULT
                if default:
                    try:
                        value = ast.literal_eval(default)
                    except (ValueError, SyntaxError):
                        value = NO_DEFAULT
                out.append(Param(name, "kw" if keyword_only else "any", not equals, value))
        return cls(tuple(out))

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def positional(self) -> list[Param]:
        return [p for p in self.params if p.kind in ("pos", "any")]

    def accepts_var_positional(self) -> bool:
        return any(p.kind == "*" for p in self.params)

    def accepts_var_keyword(self) -> bool:
        return any(p.kind == "**" for p in self.params)

    def text(self) -> str:
        parts = []
        for p in self.params:
            prefix = "*" if p.kind == "*" else "**" if p.kind == "**" else ""
            parts.append(prefix + p.name + ("" if p.required or prefix else f"={p.default!r}"))
        return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True, slots=True)
class Member:
    """A member of Tensor, Cell or a class: an attribute, or a method (signature None: not introspectable)."""

    name: str
    attribute: bool
    signature: Signature | None = None
    returns: str = "?"


@dataclass(frozen=True, slots=True)
class ApiName:
    """What a qualified MindSpore name is: kind "mod" (`target` the module), "fn", "cls" or "val"."""

    qualname: str
    kind: str
    signature: Signature | None = None
    returns: str = "?"  # T, TS, X or ? (functions: what the docstring says)
    target: str = ""  # a module's real name
    cls: str = ""  # a class's key in the classes table
    cell: bool = False
    tensor: bool = False
    # the parameters MindSpore's docstring types as a dtype alone: (name, position; None: by keyword only)
    dtypes: tuple[tuple[str, int | None], ...] = ()
    # a container Cell class's method whose child the class never runs when called ("unlisted", observed:
    # SequentialCell's insert_child_to_cell registers the child; its construct runs the cells it was built with)
    unlisted: str = ""


def _dtypes(raw: dict[str, Any]) -> tuple[tuple[str, int | None], ...]:
    found = raw.get("dt")
    return tuple((str(name), pos if isinstance(pos, int) else None) for name, pos in sorted(found.items())) \
        if isinstance(found, dict) else ()


def _member(name: str, raw: dict[str, Any]) -> Member:
    if raw.get("a"):
        return Member(name, True)
    sig = raw.get("s")
    return Member(name, False, Signature.parse(sig) if isinstance(sig, str) else None, str(raw.get("r", "?")))


class MindSporeApi:
    """Lookups over the data: `name(qualname)`, `tensor_member`, `cell_member`, `class_member`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.version: str = str(data.get("mindspore_version", ""))
        self._modules: dict[str, dict[str, Any]] = data.get("modules", {})
        self._classes: dict[str, dict[str, Any]] = data.get("classes", {})
        self._tensor: dict[str, Any] = data.get("tensor", {})
        self._cell: dict[str, Any] = data.get("cell", {})
        self._parameter: dict[str, Any] = data.get("parameter", {})

    def is_module(self, qualname: str) -> bool:
        return qualname in self._modules

    def name(self, qualname: str) -> ApiName | None:
        """The name `qualname` (e.g. mindspore.ops.max_pool2d), following module aliases
        (mindspore.nn.functional -> its real module); None when its module is known and lacks it
        or when its module is not in the data (see `known_module`)."""
        if qualname in self._modules:
            return ApiName(qualname, "mod", target=qualname)
        module, _, leaf = qualname.rpartition(".")
        names = self._modules.get(module)
        if names is None:
            parent = self.name(module) if "." in module else None
            if parent is not None and parent.kind == "mod" and parent.target != module and parent.target in self._modules:
                return self.name(f"{parent.target}.{leaf}")
            return None
        raw = names.get(leaf)
        if raw is None:
            return None
        kind = raw.get("k", "val")
        if kind == "mod":
            return ApiName(qualname, "mod", target=str(raw.get("to", "")))
        if kind == "cls":
            key = str(raw.get("c", ""))
            info = self._classes.get(key, {})
            sig = info.get("s")
            return ApiName(qualname, "cls", Signature.parse(sig) if isinstance(sig, str) else None, cls=key,
                           cell=bool(info.get("cell")), tensor=bool(info.get("tensor")), dtypes=_dtypes(info),
                           unlisted=str(info.get("unlisted", "")))
        if kind == "fn":
            sig = raw.get("s")
            return ApiName(qualname, "fn", Signature.parse(sig) if isinstance(sig, str) else None,
                           returns=str(raw.get("r", "?")), dtypes=_dtypes(raw))
        return ApiName(qualname, "val")

    def known_module(self, qualname: str) -> str | None:
        """The longest prefix of `qualname` that names a module of the data (its real name), or None."""
        parts = qualname.split(".")
        for end in range(len(parts), 0, -1):
            prefix = ".".join(parts[:end])
            found = self.name(prefix)
            if found is not None and found.kind == "mod" and found.target in self._modules:
                return prefix
        return None

    def tensor_member(self, name: str, parameter: bool = False) -> Member | None:
        raw = self._tensor.get(name)
        if raw is None and parameter:
            raw = self._parameter.get(name)
        return None if raw is None else _member(name, raw)

    def cell_member(self, name: str) -> Member | None:
        raw = self._cell.get(name)
        return None if raw is None else _member(name, raw)

    def unlisted(self, cls: str) -> str:
        """The method of the container Cell class `cls` whose child the class never runs (see `ApiName`), or ""."""
        return str(self._classes.get(cls, {}).get("unlisted", ""))

    def class_member(self, cls: str, name: str) -> Member | None:
        raw = self._classes.get(cls, {}).get("m", {}).get(name)
        return None if raw is None else _member(name, raw)


@lru_cache(maxsize=1)
def load_api() -> MindSporeApi:
    text = data_folder().joinpath(DATA_FILE).read_text(encoding="utf-8")
    return MindSporeApi(json.loads(text))
