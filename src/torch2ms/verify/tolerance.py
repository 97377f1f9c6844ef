"""How far a ported network's results may stray from torch's and still count as the same computation.

Two implementations of one float computation differ by rounding: each result carries an error of a
few units in the last place (`EPSILON` of its dtype) per operation, and a value that sums N terms
(a matrix product, a convolution, a mean, a gradient over a batch) may carry about sqrt(N) of them.
So an error is judged against the size of the values it concerns, scaled by the dtype's epsilon and
the reduction's size, never against a fixed absolute number: a gradient of magnitude 3 may differ by
3e-4 where one of magnitude 1e-3 may not. Besides the verdict, the measures msprobe reports: the
cosine similarity and the relative error (the largest difference over the largest magnitude).
Pure NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

EPSILON = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
ULPS = 64.0  # rounding steps allowed per term of a reduction, times sqrt(its size)
FLOOR = 1e-30


def relative_bound(dtype: str, reduction: int = 1, rtol: float = 0.0) -> float:
    """The relative error allowed for a result of `dtype` that reduces over `reduction` terms: at least
    `rtol` (the user's), at least ULPS epsilons times sqrt(reduction)."""
    eps = EPSILON.get(dtype, EPSILON["float32"])
    return max(rtol, ULPS * eps * math.sqrt(max(1, reduction)))


@dataclass(frozen=True)
class Measure:
    """One torch array against one MindSpore array."""

    max_abs: float
    relative: float  # max |a - b| / max |a|
    cosine: float  # 1.0 for equal directions (and for two zero arrays)
    same_shape: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"max_abs": self.max_abs, "relative": self.relative, "cosine": self.cosine}


def measure(a: Any, b: Any) -> Measure:
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return Measure(math.inf, math.inf, 0.0, same_shape=False)
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    if x.size == 0:
        return Measure(0.0, 0.0, 1.0)
    nan = np.isnan(x) | np.isnan(y)
    if not np.array_equal(np.isnan(x), np.isnan(y)):
        return Measure(math.inf, math.inf, 0.0)
    x, y = x[~nan], y[~nan]
    if x.size == 0:
        return Measure(0.0, 0.0, 1.0)
    diff = float(np.max(np.abs(x - y)))
    scale = float(np.max(np.abs(x)))
    relative = diff / max(scale, FLOOR) if diff > 0 else 0.0
    nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    cosine = 1.0 if nx < FLOOR and ny < FLOOR else (float(np.dot(x, y)) / max(nx * ny, FLOOR))
    return Measure(diff, relative, cosine)


def judge(m: Measure, dtype: str, reduction: int = 1, rtol: float = 0.0) -> str:
    """The rule a comparison breaks, or "" when it passes: the shape, or the relative error above its bound."""
    if not m.same_shape:
        return "shape differs"
    bound = relative_bound(dtype, reduction, rtol)
    if m.relative > bound:
        return f"relative error {m.relative:.3g} > {bound:.3g} ({dtype}, reduction {reduction})"
    return ""
