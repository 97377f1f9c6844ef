"""Compare a torch result with a MindSpore result, both already turned into plain values.

The worker converts every result into a *plain value* before comparing, so this
module needs only NumPy (never torch or MindSpore):

- a tensor becomes ``Arr(array, dtype)``: a NumPy array (bfloat16 widened to
  float32) and the canonical dtype name of the original tensor (see `DTYPES`);
- a Python ``bool``/``int``/``float``/``complex`` becomes ``Arr`` of a 0-d array
  with the dtype name ``"py:bool"``, ``"py:int"``, ...;
- a tuple, list or named tuple (``torch.return_types.*``) becomes a Python ``list``;
- a dtype object becomes ``("dtype", name)``; anything else ``("object", type name)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

# Canonical dtype names. torch names are ``str(torch.float32)[6:]``; MindSpore's are
# ``str(mindspore.float32).lower()``. Both libraries name their dtypes alike except for
# the spellings below, so the correspondence table is the identity after this map.
DTYPE_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128", "bool_": "bool",
}
DTYPES = (
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)

# (rtol, atol) per dtype, used unless the example states its own rtol/atol.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-7, 1e-7),
    "py:float": (1e-6, 1e-6),
    "py:complex": (1e-6, 1e-6),
}
# Python number types and the tensor dtypes that count as the same kind of value.
_PY_KIND = {"py:bool": "b", "py:int": "iu", "py:float": "f", "py:complex": "c"}


def canonical_dtype(name: str) -> str:
    name = name.lower().rpartition(".")[2]
    return DTYPE_ALIASES.get(name, name)


@dataclass
class Arr:
    value: Any  # numpy.ndarray
    dtype: str


@dataclass
class Outcome:
    """The verdict of one comparison."""

    ok: bool = True
    reason: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    compared: int = 0  # number of tensors/values whose contents were compared
    notes: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> Outcome:
        if self.ok:
            self.ok = False
            self.reason = reason
        return self

    def merge(self, other: Outcome, where: str = "") -> None:
        self.max_abs_err = max(self.max_abs_err, other.max_abs_err)
        self.max_rel_err = max(self.max_rel_err, other.max_rel_err)
        self.compared += other.compared
        self.notes.extend(other.notes)
        if not other.ok:
            self.fail(f"{where}: {other.reason}" if where else other.reason)


def describe(value: Any) -> str:
    if isinstance(value, Arr):
        return f"{value.dtype}{list(np.shape(value.value))}"
    if isinstance(value, list):
        return f"sequence of {len(value)}"
    if isinstance(value, tuple) and len(value) == 2:
        return f"{value[0]} {value[1]}"
    return type(value).__name__


def tolerance(dtype: str, rtol: float | None, atol: float | None) -> tuple[float, float]:
    base = DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))
    return (base[0] if rtol is None else rtol, base[1] if atol is None else atol)


def dtypes_agree(a: str, b: str, declared: dict[str, str] | None = None) -> bool:
    """Same dtype, a Python number against a 0-d tensor of its kind, or a difference the example declares."""
    if a == b or (declared and declared.get(a) == b):
        return True
    if a.startswith("py:") or b.startswith("py:"):
        # A Python number on one side, a 0-d tensor of the same kind on the other.
        py, other = (a, b) if a.startswith("py:") else (b, a)
        if other.startswith("py:"):
            return False
        kind = np.dtype("float32" if other == "bfloat16" else other).kind
        return kind in _PY_KIND.get(py, "")
    return False


def _errors(a: NDArray[Any], b: NDArray[Any]) -> tuple[float, float]:
    if a.size == 0:
        return 0.0, 0.0
    diff = np.abs(a - b)
    max_abs = float(np.max(diff))
    mag = np.abs(a)
    nonzero = mag > 0
    max_rel = float(np.max(diff[nonzero] / mag[nonzero])) if np.any(nonzero) else (0.0 if max_abs == 0 else math.inf)
    return max_abs, max_rel


def compare_arrays(a: Arr, b: Arr, rtol: float | None = None, atol: float | None = None,
                   dtypes: dict[str, str] | None = None) -> Outcome:
    out = Outcome(compared=1)
    x, y = np.asarray(a.value), np.asarray(b.value)
    if x.shape != y.shape:
        return out.fail(f"shape differs: torch {list(x.shape)}, MindSpore {list(y.shape)}")
    if not dtypes_agree(a.dtype, b.dtype, dtypes):
        out.fail(f"dtype differs: torch {a.dtype}, MindSpore {b.dtype}")
    kinds = x.dtype.kind + y.dtype.kind
    if "c" in kinds:
        x, y = x.astype(np.complex128), y.astype(np.complex128)
    elif "f" in kinds:
        x, y = x.astype(np.float64), y.astype(np.float64)
    else:  # bool and integers compare exactly
        x, y = x.astype(np.int64), y.astype(np.int64)
        if not np.array_equal(x, y):
            bad = int(np.sum(x != y))
            ax, rx = _errors(x.astype(np.float64), y.astype(np.float64))
            out.max_abs_err, out.max_rel_err = ax, rx
            return out.fail(f"values differ at {bad} of {x.size} positions")
        return out
    dtype = a.dtype if a.dtype in DEFAULT_TOLERANCE else b.dtype
    r, t = tolerance(dtype, rtol, atol)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    if not np.array_equal(nan_x, nan_y):
        return out.fail(f"NaN positions differ ({int(nan_x.sum())} NaN in torch, {int(nan_y.sum())} in MindSpore)")
    inf_x, inf_y = np.isinf(x), np.isinf(y)
    if not np.array_equal(inf_x, inf_y) or not np.array_equal(x[inf_x], y[inf_y]):
        return out.fail("inf positions or signs differ")
    finite = ~(nan_x | inf_x)
    fx, fy = x[finite], y[finite]
    out.max_abs_err, out.max_rel_err = _errors(fx, fy)
    close = np.abs(fx - fy) <= t + r * np.abs(fy)
    if not np.all(close):
        bad = int(np.sum(~close))
        out.fail(f"values differ at {bad} of {x.size} positions (max abs err {out.max_abs_err:.3g}, "
                 f"max rel err {out.max_rel_err:.3g}, rtol {r:g}, atol {t:g})")
    return out


def _stats(x: NDArray[Any]) -> tuple[float, float, int]:
    finite = x[np.isfinite(x)] if x.dtype.kind in "fc" else x
    if finite.size == 0:
        return 0.0, 0.0, 0
    return float(np.mean(finite)), float(np.std(finite)), int(finite.size)


def compare_shape(a: Arr, b: Arr, dtypes: dict[str, str] | None = None) -> Outcome:
    """Values that mean nothing (uninitialised memory): shape and dtype only."""
    out = Outcome()
    x, y = np.asarray(a.value), np.asarray(b.value)
    if x.shape != y.shape:
        return out.fail(f"shape differs: torch {list(x.shape)}, MindSpore {list(y.shape)}")
    if not dtypes_agree(a.dtype, b.dtype, dtypes):
        return out.fail(f"dtype differs: torch {a.dtype}, MindSpore {b.dtype}")
    out.notes.append("compared shape and dtype only")
    return out


def compare_random(a: Arr, b: Arr, dtypes: dict[str, str] | None = None) -> Outcome:
    """A random op: same shape and dtype, and means that agree within a wide statistical bound."""
    out = compare_shape(a, b, dtypes)
    if not out.ok:
        return out
    out.notes.clear()
    x, y = np.asarray(a.value), np.asarray(b.value)
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        x, y = np.abs(x), np.abs(y)
    x, y = x.astype(np.float64), y.astype(np.float64)
    if int(np.isfinite(x).sum()) != int(np.isfinite(y).sum()):
        return out.fail("random results differ in their number of finite values")
    mx, sx, n = _stats(x)
    my, sy, _ = _stats(y)
    if n:
        bound = 6.0 * math.sqrt((sx * sx + sy * sy) / n) + 1e-6 * max(1.0, abs(mx))
        if abs(mx - my) > bound:
            return out.fail(f"random results have different means: torch {mx:.4g}, MindSpore {my:.4g}")
    out.notes.append(f"random: compared shape, dtype and mean (torch {mx:.4g}+-{sx:.3g}, MindSpore {my:.4g}+-{sy:.3g})")
    return out


DRAW_STATISTICS = ("mean", "standard deviation", "fraction of zeros", "mean magnitude of the non-zero values")


def _leaves(value: Any) -> list[Arr]:
    if isinstance(value, Arr):
        return [value]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return []


def _draw_stats(leaf: Arr) -> list[float]:
    """One draw's statistics of one array (finite values; complex as magnitudes): DRAW_STATISTICS."""
    x = np.asarray(leaf.value)
    x = (np.abs(x) if x.dtype.kind == "c" else x).astype(np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [0.0, 0.0, 0.0, 0.0]
    nonzero = np.abs(x[x != 0])
    return [float(np.mean(x)), float(np.std(x)), float(np.mean(x == 0)),
            float(np.mean(nonzero)) if nonzero.size else 0.0]


def compare_draws(a_draws: list[Any], b_draws: list[Any]) -> Outcome:
    """A random op over independent draws (the same inputs, other seeds): for each array of the result,
    each draw's mean, standard deviation, fraction of zeros and mean magnitude of the non-zero values;
    torch's and MindSpore's averages over the draws must agree within 6 standard errors of their
    draw-to-draw spread. Draws are independent where the elements of one draw may not be (channel
    dropout, permutations), and the fraction of zeros with the scale of the kept values tells p from
    1 - p (a dropout rate passed as MindSpore's keep_prob) where the mean alone cannot."""
    out = Outcome()
    draws = min(len(a_draws), len(b_draws))
    if draws < 2:
        return out
    a_leaves = [_leaves(d) for d in a_draws[:draws]]
    b_leaves = [_leaves(d) for d in b_draws[:draws]]
    if len({len(x) for x in a_leaves + b_leaves}) != 1:
        return out.fail("random results differ in their structure between draws")
    for k in range(len(a_leaves[0])):
        xa = np.array([_draw_stats(d[k]) for d in a_leaves])
        xb = np.array([_draw_stats(d[k]) for d in b_leaves])
        for j, name in enumerate(DRAW_STATISTICS):
            ma, mb = float(xa[:, j].mean()), float(xb[:, j].mean())
            se = math.sqrt(float(xa[:, j].var(ddof=1) + xb[:, j].var(ddof=1)) / draws)
            bound = 6.0 * se + 1e-6 * max(1.0, abs(ma), abs(mb))
            if abs(ma - mb) > bound:
                where = f"[{k}] " if len(a_leaves[0]) > 1 else ""
                return out.fail(f"random results {where}differ in their {name} over {draws} draws: "
                                f"torch {ma:.4g}, MindSpore {mb:.4g}")
    out.notes.append(f"random: compared the {', '.join(DRAW_STATISTICS)} over {draws} draws")
    return out


def compare_magnitudes(a: Arr, b: Arr, rtol: float | None = None, atol: float | None = None,
                       dtypes: dict[str, str] | None = None) -> Outcome:
    """Values up to sign (or, for complex numbers, phase): |torch| against |MindSpore|.

    For results that are unique only up to sign, such as singular vectors: each
    column of U and V may be negated in either library.
    """
    x, y = np.asarray(a.value), np.asarray(b.value)
    if x.dtype.kind in "fciu" and x.dtype != np.bool_:
        x = np.abs(x)
    if y.dtype.kind in "fciu" and y.dtype != np.bool_:
        y = np.abs(y)
    out = compare_arrays(Arr(x, a.dtype), Arr(y, b.dtype), rtol, atol, dtypes)
    out.notes.append("compared magnitudes (values up to sign)")
    return out


def compare(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
            random: bool = False, where: str = "result", mode: str | None = None,
            dtypes: dict[str, str] | None = None) -> Outcome:
    """Compare two plain values (see the module docstring) recursively.

    `mode`: "values" (allclose), "statistics" (random ops; the default when `random`),
    "shape" (shape and dtype only) or "abs" (values up to sign). `dtypes` declares expected dtype differences
    (torch dtype -> MindSpore dtype), e.g. {"int64": "int32"}.
    """
    mode = mode or ("statistics" if random else "values")
    out = Outcome()
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)):
            return out.fail(f"{where}: structure differs: torch {describe(a)}, MindSpore {describe(b)}")
        if len(a) != len(b):
            return out.fail(f"{where}: torch returns {len(a)} values, MindSpore {len(b)}")
        for k, (x, y) in enumerate(zip(a, b)):
            out.merge(compare(x, y, rtol, atol, where=f"{where}[{k}]", mode=mode, dtypes=dtypes))
            if not out.ok:
                break
        return out
    if isinstance(a, Arr) and isinstance(b, Arr):
        if mode == "shape":
            inner = compare_shape(a, b, dtypes)
        elif mode == "statistics":
            inner = compare_random(a, b, dtypes)
        elif mode == "abs":
            inner = compare_magnitudes(a, b, rtol, atol, dtypes)
        else:
            inner = compare_arrays(a, b, rtol, atol, dtypes)
        out.merge(inner, where)
        return out
    if isinstance(a, tuple) and isinstance(b, tuple):
        if a[0] == "dtype" == b[0]:
            out.compared += 1
            if canonical_dtype(a[1]) != canonical_dtype(b[1]):
                out.fail(f"{where}: dtype objects differ: torch {a[1]}, MindSpore {b[1]}")
            return out
        if a[0] == "object" and b[0] == "object":
            out.notes.append(f"{where}: objects ({a[1]}, {b[1]}) compared by presence only")
            return out
    return out.fail(f"{where}: structure differs: torch {describe(a)}, MindSpore {describe(b)}")


def plain_to_json(value: Any, arrays: dict[str, Any]) -> Any:
    """A plain value as JSON, its arrays moved into `arrays` (to be saved with ``numpy.savez``)."""
    if isinstance(value, Arr):
        key = f"a{len(arrays)}"
        arrays[key] = np.asarray(value.value)
        return {"array": key, "dtype": value.dtype}
    if isinstance(value, list):
        return {"list": [plain_to_json(v, arrays) for v in value]}
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("dtype", "object"):
        return {value[0]: str(value[1])}
    return {"object": type(value).__name__}


def plain_from_json(data: Any, arrays: Any) -> Any:
    """The inverse of `plain_to_json`; `arrays` maps keys to arrays (a loaded ``.npz``)."""
    if "array" in data:
        return Arr(np.asarray(arrays[data["array"]]), str(data["dtype"]))
    if "list" in data:
        return [plain_from_json(v, arrays) for v in data["list"]]
    if "dtype" in data:
        return ("dtype", str(data["dtype"]))
    return ("object", str(data.get("object")))
