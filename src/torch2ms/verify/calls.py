"""A sample of torch's test database written as the call code would write, and its case tags.

Pure: no torch, no MindSpore. The worker (`torch2ms.verify.samples`) turns a sample's tensors into
`Tensor` names and its dtypes into `Dtype` names; this module writes the call text
(`torch.add(x0, x1, alpha=2)`, or the method form `x0.add(x1, alpha=2)`) and says which values
code cannot spell (a callable, a generator: the sample is left out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tensor:
    """A tensor argument, written as its variable's name; `shape`: its shape (for the case's tags)."""

    name: str
    shape: tuple[int, ...] = (1,)


@dataclass(frozen=True)
class Dtype:
    """A dtype argument, written `torch.<name>`."""

    name: str


class Unwritable(ValueError):
    """A value no literal or variable spells (the sample is left out)."""


def literal(value: Any) -> str:
    """The source text of an argument value."""
    if isinstance(value, Tensor):
        return value.name
    if isinstance(value, Dtype):
        return f"torch.{value.name}"
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(float(value))
    if isinstance(value, complex):
        return f"complex({literal(value.real)}, {literal(value.imag)})"
    if isinstance(value, tuple):
        items = [literal(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    raise Unwritable(f"no literal for a {type(value).__name__}")


def call_text(callee: str, first: Any, args: tuple[Any, ...], kwargs: dict[str, Any], method: bool) -> str:
    """The call of `callee` on the sample's input `first`: `torch.<callee>(first, *args, **kwargs)`, or
    the method form `first.<callee>(*args, **kwargs)` (`first` must then be one tensor)."""
    if not all(isinstance(k, str) and k.isidentifier() for k in kwargs):
        raise Unwritable("a keyword that is not a name")
    written = [literal(a) for a in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    if method:
        if not isinstance(first, Tensor):
            raise Unwritable("a method form needs one tensor as its receiver")
        return f"{first.name}.{callee}(" + ", ".join(written) + ")"
    return f"torch.{callee}(" + ", ".join([literal(first)] + written) + ")"


def layer_text(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: tuple[Any, ...],
               input_kwargs: dict[str, Any]) -> str:
    """A layer built and called in one expression: `torch.nn.Linear(3, 4)(x0)`."""
    ctor = [literal(a) for a in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    call = [literal(a) for a in inputs] + [f"{k}={literal(v)}" for k, v in input_kwargs.items()]
    return f"{cls}(" + ", ".join(ctor) + ")(" + ", ".join(call) + ")"


def tensors_in(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def case_tags(source: str, dtype: str, values: list[Any], kwargs: dict[str, Any]) -> list[str]:
    """What a sample exercises, in the generator's tag words (facts' `covers` cite them): its source,
    its dtype, each keyword given (`opt=NAME`), the rank of its first tensor (`rank=2`: a layer's input
    without the batch dimension has one less than the batched one), `0-d` when a tensor is 0-d, `empty`
    when one has no element, `broadcast` when two tensors have different shapes that broadcast together, and
    `bool-arg` when a Python bool is passed by position (where torch may read it as a number: `arange(False, True)`)."""
    tags = [source, f"dtype={dtype}"] + [f"opt={k}" for k in kwargs]
    shapes = [t.shape for v in values for t in tensors_in(v)]
    if shapes:
        tags.append(f"rank={len(shapes[0])}")
    if any(len(shape) == 0 for shape in shapes):
        tags.append("0-d")
    if any(0 in shape for shape in shapes):
        tags.append("empty")
    if any(a != b and broadcastable(a, b) for a in shapes for b in shapes):
        tags.append("broadcast")
    if any(type(v) is bool for v in values):
        tags.append("bool-arg")
    return tags


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two shapes broadcast together (each trailing pair equal, or one of them 1)."""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b)))
