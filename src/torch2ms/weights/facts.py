"""The tables' weight facts: where each tensor of a torch layer's state_dict goes in a MindSpore class.

A *form* is one (torch layer, MindSpore class) pair, e.g. torch.nn.BatchNorm2d ->
mindspore.nn.BatchNorm2d, with its facts (`WeightParam`, see torch2ms.model): torch name ->
MindSpore name (or none), a transform, or a sub-layer whose own form applies below a prefix.
`Facts` holds the forms; `place` resolves one state_dict name relative to a layer. Pure: no
torch, no MindSpore, no NumPy (a transform is applied with the array's own methods).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..mappings import param_from_json
from ..model import MappingEntry, WeightParam

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
Transform = tuple[tuple[str, Any], ...]
FormKey = tuple[str, str]  # (torch layer, MindSpore class)


@functools.lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    """A name pattern as a regular expression: each {word} is a number; a repeated {word} the same one."""
    out: list[str] = []
    seen: set[str] = set()
    pos = 0
    for found in _PLACEHOLDER.finditer(pattern):
        out.append(re.escape(pattern[pos:found.start()]))
        name = found.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>[0-9]+)")
        seen.add(name)
        pos = found.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out))


def match(pattern: str, name: str) -> dict[str, str] | None:
    """The placeholder values that make `pattern` spell `name`, or None."""
    found = _regex(pattern).fullmatch(name)
    return found.groupdict() if found else None


def fill(pattern: str, binding: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: binding.get(m.group(1), m.group(0)), pattern)


def describe_transform(transform: Transform) -> str:
    parts = []
    for kind, value in transform:
        if kind == "unsqueeze":
            parts.append(f"insert a unit axis at {value}")
        elif kind == "transpose":
            parts.append(f"permute axes to {list(value)}")
        else:
            parts.append(f"{kind} {value}")
    return ", ".join(parts)


def transformed_shape(shape: Iterable[int], transform: Transform) -> tuple[int, ...]:
    """The shape of a torch tensor of `shape` after the transform."""
    dims = list(shape)
    for kind, value in transform:
        if kind == "unsqueeze":
            dims.insert(int(value), 1)
        elif kind == "transpose":
            dims = [dims[int(axis)] for axis in value]
        else:
            raise ValueError(f"unknown weight transform {kind!r}")
    return tuple(dims)


def apply_transform(array: Any, transform: Transform) -> Any:
    """Apply the transform to an array (NumPy or any array with reshape/transpose)."""
    for kind, value in transform:
        if kind == "unsqueeze":
            array = array.reshape(transformed_shape(array.shape, ((kind, value),)))
        elif kind == "transpose":
            array = array.transpose(tuple(int(axis) for axis in value))
        else:
            raise ValueError(f"unknown weight transform {kind!r}")
    return array


def undo_transform(array: Any, transform: Transform) -> Any:
    """The torch array a transformed (MindSpore) array came from: the steps undone in reverse order."""
    for kind, value in reversed(transform):
        if kind == "unsqueeze":
            shape = list(array.shape)
            del shape[int(value)]
            array = array.reshape(tuple(shape))
        elif kind == "transpose":
            axes = [int(axis) for axis in value]
            array = array.transpose(tuple(axes.index(k) for k in range(len(axes))))
        else:
            raise ValueError(f"unknown weight transform {kind!r}")
    return array


@dataclass(frozen=True)
class Placed:
    """Where one torch tensor goes: a MindSpore name (None: MindSpore keeps no such tensor)."""

    ms: str | None
    transform: Transform = ()
    form: str = ""  # "torch.nn.BatchNorm2d -> mindspore.nn.BatchNorm2d": the facts that placed it
    note: str = ""


class Facts:
    """Weight forms by (torch layer, MindSpore class)."""

    def __init__(self, forms: Mapping[FormKey, tuple[WeightParam, ...]]) -> None:
        self.forms = dict(forms)

    @classmethod
    def from_entries(cls, entries: Iterable[MappingEntry]) -> Facts:
        return cls({(e.api, form.ms): form.params for e in entries for form in e.weights})

    def has(self, torch_api: str, ms_api: str) -> bool:
        return (torch_api, ms_api) in self.forms

    def ms_classes(self, torch_api: str) -> list[str]:
        return [ms for (api, ms) in self.forms if api == torch_api]

    # ------------------------------------------------------------------ placing
    def place(self, torch_api: str, ms_api: str, key: str) -> Placed | str:
        """Place the state_dict name `key` of a `torch_api` layer built as `ms_api`: the
        placement, or the reason there is none."""
        params = self.forms.get((torch_api, ms_api))
        label = f"{torch_api} -> {ms_api}"
        if params is None:
            return f"the tables have no weight facts for {label}"
        for param in params:
            if param.torch is None:
                continue
            if param.layer is not None and param.ms_layer is not None and param.ms is not None:
                depth = param.torch.count(".") + 1
                head, rest = ".".join(key.split(".")[:depth]), ".".join(key.split(".")[depth:])
                binding = match(param.torch, head)
                if binding is None or not rest:
                    continue
                inner = self.place(param.layer, param.ms_layer, rest)
                if isinstance(inner, str):
                    return inner
                prefix = fill(param.ms, binding)
                return Placed(f"{prefix}.{inner.ms}" if inner.ms is not None else None,
                              inner.transform, inner.form, inner.note)
            binding = match(param.torch, key)
            if binding is not None:
                return Placed(fill(param.ms, binding) if param.ms is not None else None,
                              param.transform, label, param.note)
        return f"no weight fact of {label} names '{key}'"

    def ms_only(self, torch_api: str, ms_api: str, name: str) -> str | None:
        """The note of a MindSpore-only parameter `name` of the form (it keeps its initial value), or None."""
        for param in self.forms.get((torch_api, ms_api), ()):
            if param.torch is None and param.ms is not None and match(param.ms, name) is not None:
                return param.note or "a MindSpore-only parameter"
            if param.layer is not None and param.ms_layer is not None and param.ms is not None:
                depth = param.ms.count(".") + 1
                head, rest = ".".join(name.split(".")[:depth]), ".".join(name.split(".")[depth:])
                if rest and match(param.ms, head) is not None:
                    note = self.ms_only(param.layer, param.ms_layer, rest)
                    if note is not None:
                        return note
        return None

    def renames(self) -> dict[str, str]:
        """MindSpore's spelling of a tensor's own name -> torch's, where every fact that renames it agrees
        (`gamma` -> `weight`, `moving_variance` -> `running_var`): the fallback for layers the facts do not
        name. Sub-layer prefixes, placeholders and transformed tensors are left out."""
        seen: dict[str, set[str]] = {}
        for params in self.forms.values():
            for param in params:
                if param.torch is None or param.ms is None or param.layer is not None or param.transform:
                    continue
                if "{" in param.torch or "{" in param.ms:
                    continue
                ms_name, torch_name = param.ms.rpartition(".")[2], param.torch.rpartition(".")[2]
                if ms_name != torch_name:
                    seen.setdefault(ms_name, set()).add(torch_name)
        return {ms_name: names.pop() for ms_name, names in sorted(seen.items()) if len(names) == 1}

    # ------------------------------------------------------------------ serialising
    def closure(self, torch_api: str, ms_api: str) -> Facts:
        """The form and every form its sub-layers name."""
        out: dict[FormKey, tuple[WeightParam, ...]] = {}
        todo = [(torch_api, ms_api)]
        while todo:
            key = todo.pop()
            if key in out or key not in self.forms:
                continue
            out[key] = self.forms[key]
            todo.extend((p.layer, p.ms_layer) for p in out[key] if p.layer and p.ms_layer)
        return Facts(out)

    def to_json(self) -> list[dict[str, Any]]:
        return [{"layer": api, "ms": ms, "params": [param_to_json(p) for p in params]}
                for (api, ms), params in sorted(self.forms.items())]

    @classmethod
    def from_json(cls, data: Iterable[Mapping[str, Any]]) -> Facts:
        return cls({(str(f["layer"]), str(f["ms"])): tuple(param_from_json(p) for p in f["params"]) for f in data})


def param_to_json(param: WeightParam) -> dict[str, Any]:
    out: dict[str, Any] = {"torch": param.torch, "ms": param.ms}
    if param.transform:
        out["transform"] = {k: list(v) if isinstance(v, tuple) else v for k, v in param.transform}
    if param.layer:
        out["layer"], out["ms_layer"] = param.layer, param.ms_layer
    if param.note:
        out["note"] = param.note
    return out
