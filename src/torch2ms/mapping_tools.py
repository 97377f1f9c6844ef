"""`torch2ms mappings check` and `torch2ms mappings stats`: the mapping tables checked against real libraries.

Unlike the scanner, this module imports torch and MindSpore, but only inside the
functions that need them, so importing it costs nothing. The signature helpers
are shared with scripts/build_tables.py, which generates the tables.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from .extras import require
from .mappings import MappingError, MappingTable, load_table
from .model import Category, FactKind, Target

# The namespaces whose public callables the tables classify (see src/torch2ms/data/README.md).
STATS_NAMESPACES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.Tensor", "torch.linalg", "torch.fft",
    "torch.special", "torch.optim", "torch.optim.lr_scheduler", "torch.nn.init",
    "torch.distributions", "torch.utils.data", "torch.amp", "torch.distributed",
)

# torch parameters that are general differences between the frameworks (device placement,
# out=, memory layout, legacy loss flags, RNG generators, named tensors). They are documented
# once in src/torch2ms/data/README.md and are not reported as signature drift.
GENERAL_PARAMS = frozenset({
    "out", "layout", "device", "requires_grad", "pin_memory", "memory_format", "stable",
    "sparse_grad", "size_average", "reduce", "self", "generator", "names", "dtype_out",
})

# Parameter-fact kinds that name a torch parameter and so declare it.
_DECLARING = frozenset(FactKind) - {FactKind.ADDED_REQUIRED, FactKind.UNSUPPORTED_INPUTS}

# Non-greedy: the parameter list ends at the first ")" followed by "->" or the end of the line,
# not at the last ")" of a tuple return annotation such as "-> (Tensor, Tensor, Tensor)".
_DOC_SIG = re.compile(r"^\s*(?:[\w.]+\.)?(?P<name>\w+)\((?P<params>.*?)\)\s*(?:->.*)?$")


# ------------------------------------------------------------------------------- helpers
def resolve(path: str) -> Any:
    """The object at a dotted path (importing the longest importable module prefix), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 - any import failure means "not this prefix"
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


_PLATFORMS = re.compile(r"Supported Platforms:\s*\n?((?:\s*``\w+``)+)")
_PLATFORM_NAMES = {"ascend": "ascend", "gpu": "gpu", "cpu": "cpu"}


def documented_devices(obj: Any) -> list[str] | None:
    """The devices MindSpore's documentation lists for an API ("Supported Platforms:"), in the
    order cpu, gpu, ascend; None when its docstring says nothing about platforms."""
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return None
    found = _PLATFORMS.search(doc)
    if found is None:
        return None
    named = {_PLATFORM_NAMES[w.lower()] for w in re.findall(r"``(\w+)``", found.group(1)) if w.lower() in _PLATFORM_NAMES}
    return [d for d in ("cpu", "gpu", "ascend") if d in named] or None


def split_params(text: str) -> list[tuple[str, str | None]]:
    """'input, other, *, alpha=1' -> [('input', None), ('other', None), ('alpha', '1')]."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        part = part.strip()
        if not part or part in ("*", "/") or part.startswith("*"):
            continue  # keyword-only marker, positional-only marker, *args, **kwargs
        name, _, default = part.partition("=")
        name = name.split(":")[0].strip()
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            out.append((name, default.strip() or None))
    return out


def _callable_of(obj: Any) -> Any:
    """What a call of `obj` runs: a class's __init__, else the object itself."""
    return obj.__init__ if isinstance(obj, type) else obj  # type: ignore[misc]


def _signature_params(obj: Any) -> tuple[list[tuple[str, str | None]], bool] | None:
    target = _callable_of(obj)
    if _keeps_cell_init(target):
        return [], False
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())
    params = [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
              for p in sig.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]
    return params, variadic


def torch_params(obj: Any, name: str) -> list[list[tuple[str, str | None]]] | None:
    """The parameter lists of a torch callable, one per documented overload; None when unknown."""
    found = _signature_params(obj)
    if found is not None and not found[1]:
        return [found[0]]
    overloads = [split_params(params) for params in _doc_signatures(obj, name)]
    return overloads or None


def _doc_signatures(obj: Any, name: str) -> list[str]:
    """The parameter lists of the signatures a torch builtin's docstring opens with, overloads written
    as `.. function:: name(...)` included."""
    doc = getattr(obj, "__doc__", None) or ""
    found = []
    for line in doc.splitlines()[:60]:
        if "return_types." in line:
            continue  # printed output of an example: torch.return_types.topk(values=..., indices=...)
        match = _DOC_SIG.match(line.strip().removeprefix(".. function::"))
        if match and match.group("name") == name:
            found.append(match.group("params"))
    return found


def _positional_names(text: str) -> list[str]:
    """The names a call may pass by position in a docstring parameter list: those before `*`."""
    names = []
    for name_default in text.split(","):
        part = name_default.strip()
        if part.startswith("*"):
            break  # keyword-only marker or *args: the rest is keyword-only
        if part == "/":
            continue
        name = part.partition("=")[0].split(":")[0].strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return []  # a default with a comma, or something else unreadable: trust nothing
        names.append(name)
    return names


def torch_positions(obj: Any, name: str) -> dict[str, int]:
    """Parameter -> positional index (receiver not counted) for the parameters of a torch callable
    that a call may pass by position, where every overload agrees on the index."""
    overloads: list[list[str]] = []
    target = _callable_of(obj)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        sig = None
    if sig is not None and not any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
        overloads.append([p.name for p in sig.parameters.values() if p.name != "self"
                          and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    else:
        overloads.extend(_positional_names(params) for params in _doc_signatures(obj, name))
    # Ambiguous across overloads (max(input, dim) and max(input, other)): a name at two indexes, or
    # two names at one index; none of those is given a position.
    at_index: dict[int, set[str]] = {}
    of_name: dict[str, set[int]] = {}
    for names in overloads:
        for index, param in enumerate(names):
            at_index.setdefault(index, set()).add(param)
            of_name.setdefault(param, set()).add(index)
    return {param: next(iter(indexes)) for param, indexes in of_name.items()
            if len(indexes) == 1 and len(at_index[next(iter(indexes))]) == 1}


def ms_params(obj: Any) -> list[tuple[str, str | None]] | None:
    """The parameters of a MindSpore callable; None when unreadable or variadic (accepts anything)."""
    found = _signature_params(obj)
    if found is None or found[1]:
        return None
    return found[0]


def _keeps_cell_init(constructor: Any) -> bool:
    """A MindSpore Cell class without a constructor of its own: it takes no arguments of the layer's
    (Cell's auto_prefix and flags are plumbing, never the counterpart of a torch argument)."""
    return getattr(constructor, "__qualname__", "") == "Cell.__init__"


def ms_positional(obj: Any) -> list[tuple[str, bool]] | None:
    """(name, required) for each parameter a call of a MindSpore callable may pass by position, in
    order. None when unreadable or variadic."""
    target = _callable_of(obj)
    if _keeps_cell_init(target):
        return []
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
        return None
    return [(p.name, p.default is inspect.Parameter.empty) for p in sig.parameters.values()
            if p.name != "self" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def drift(entry_api: str, torch_obj: Any, target: Target, ms_obj: Any) -> list[str]:
    """torch parameters that the target's signature lacks and the target's facts do not declare."""
    if not callable(torch_obj) or not callable(ms_obj):
        return []
    tparams = torch_params(torch_obj, entry_api.rpartition(".")[2])
    mparams = ms_params(ms_obj)
    if not tparams or mparams is None:
        return []
    mnames = {n for n, _ in mparams}
    declared = {f.torch for f in target.params if f.kind in _DECLARING and f.torch}
    out: list[str] = []
    for overload in tparams:
        for name, _ in overload:
            if name in GENERAL_PARAMS or name.startswith("_") or name in mnames or name in declared:
                continue
            if name not in out:
                out.append(name)
    return out


# ------------------------------------------------------------------------------- check
@dataclass
class CheckResult:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entries: int = 0
    targets: int = 0
    examples: int = 0
    # Sources of libraries that are not importable here (torchvision, ...): root -> count, and why.
    not_checked: dict[str, int] = field(default_factory=dict)
    not_checked_reason: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _unavailable(root: str, cache: dict[str, str | None]) -> str | None:
    """Why the package `root` cannot be used to resolve names here (None: it can). torch is required."""
    if root == "torch":
        return None
    if root not in cache:
        reason = None
        try:
            if importlib.util.find_spec(root) is None:
                reason = f"{root} not installed"
            else:
                importlib.import_module(root)
        except Exception as exc:  # noqa: BLE001 - e.g. a build of it made for another torch
            reason = f"{root} cannot be imported ({type(exc).__name__})"
        cache[root] = reason
    return cache[root]


def _quiet_import() -> tuple[Any, Any]:
    import warnings

    warnings.filterwarnings("ignore")
    import torch
    import mindspore

    return torch, mindspore


def check_table(table: MappingTable) -> CheckResult:
    """Resolve every torch source and MindSpore target, compare signatures, require examples."""
    _quiet_import()
    result = CheckResult(entries=len(table.entries))
    libraries: dict[str, str | None] = {}
    for api in sorted(table.entries):
        entry = table.entries[api]
        where = entry.source
        root = api.partition(".")[0]
        absent = _unavailable(root, libraries)
        torch_obj = None if absent else resolve(api)
        if absent:  # the MindSpore side is still resolved below
            result.not_checked[root] = result.not_checked.get(root, 0) + 1
            result.not_checked_reason[root] = absent
        elif torch_obj is None:
            result.problems.append(f"{where}: {api}: the torch API does not resolve in the installed {root}")
        base = table.entries.get(entry.inplace_of) if entry.inplace_of else None
        sig_api, sig_obj = api, torch_obj
        if base is not None and entry.targets is base.targets:  # inherited: compare the base's signature
            sig_api, sig_obj = base.api, resolve(base.api)
        for target in entry.targets:
            result.targets += 1
            ms_obj = resolve(target.api)
            if ms_obj is None:
                result.problems.append(f"{where}: {api}: target {target.api} does not resolve "
                                       f"in the installed MindSpore")
                continue
            if sig_obj is not None:
                missing = drift(sig_api, sig_obj, target, ms_obj)
                if missing:
                    result.problems.append(
                        f"{where}: {api}: signature drift: torch parameter(s) {', '.join(missing)} not in "
                        f"{target.api}'s signature and not declared in its params")
        if entry.category is not Category.MISSING and not entry.targets:
            result.problems.append(f"{where}: {api}: category {entry.category.value} needs an ms target")
        if entry.category is Category.MISSING and not entry.note:
            result.problems.append(f"{where}: {api}: a missing entry needs a note with the workaround")
        result.examples += len(entry.examples)
        if entry.category is not Category.MISSING and not entry.examples and entry.inplace_of is None \
                and not absent and not entry.not_runnable:  # no example can run without the library
            result.warnings.append(f"{where}: {api}: {entry.category.value} entry without an example")
        for number, example in enumerate(entry.examples):
            try:
                compile(example.torch, "<torch example>", "eval")
                compile(example.mindspore, "<mindspore example>", "eval")
            except SyntaxError as exc:
                result.problems.append(f"{where}: {api}: examples[{number}]: not one Python expression: {exc.msg}")
    return result


# ------------------------------------------------------------------------------- stats
def public_callables(namespace: str) -> list[str] | None:
    """Public callables of a namespace in the installed torch; None when torch is not installed."""
    try:
        torch, _ = _quiet_torch()
    except ImportError:
        return None
    if namespace == "torch.Tensor":
        obj: Any = torch.Tensor
        names = [n for n in dir(obj) if not n.startswith("_")]
    else:
        obj = importlib.import_module(namespace)
        names = list(getattr(obj, "__all__", None) or [n for n in dir(obj) if not n.startswith("_")])
    out = []
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001
            continue
        if inspect.ismodule(value) or not callable(value):
            continue
        out.append(name)
    return out


def _quiet_torch() -> tuple[Any, None]:
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    return torch, None


@dataclass
class NamespaceStats:
    namespace: str
    public: int
    classified: int
    unclassified: list[str]
    by_category: dict[str, int] = field(default_factory=dict)

    @property
    def percent(self) -> float:
        return 100.0 * self.classified / self.public if self.public else 100.0


def compute_stats(table: MappingTable, use_installed: bool = True) -> tuple[list[NamespaceStats], dict[str, int], str]:
    """Coverage per namespace and entries per category; the third item names the API source."""
    rows = []
    source = "inventory.json"
    version = tuple(int(p) for p in table.meta.default_target.split("."))
    for ns in STATS_NAMESPACES:
        names = public_callables(ns) if use_installed else None
        if names is None:
            names = list(table.inventory.namespaces.get(ns, ()))
        else:
            source = "installed torch"
        done = [n for n in names if f"{ns}.{n}" in table.entries]
        by_category: dict[str, int] = {}
        for n in done:
            key = table.entries[f"{ns}.{n}"].category_for(version, None).value
            by_category[key] = by_category.get(key, 0) + 1
        rows.append(NamespaceStats(ns, len(names), len(done), [n for n in names if f"{ns}.{n}" not in table.entries],
                                   by_category))
    categories: dict[str, int] = {}
    for entry in table.entries.values():
        key = entry.category_for(version, None).value
        categories[key] = categories.get(key, 0) + 1
    categories["with_examples"] = sum(1 for e in table.entries.values() if e.examples)
    categories["dynamic_shape"] = sum(1 for e in table.entries.values() if e.dynamic_shape)
    # Entries the table declares impossible to run where verify runs (not_runnable): kept rare.
    categories["not_runnable"] = sum(1 for e in table.entries.values() if e.not_runnable and not e.examples)
    return rows, categories, source


def library_stats(table: MappingTable) -> dict[str, dict[str, int]]:
    """Entries per category for the namespaces outside torch (torchvision.transforms, ...).

    Their public API is not inventoried (the libraries are not installed here); the tables hold
    the official tables' rows for them.
    """
    roots = {ns.partition(".")[0] for ns in STATS_NAMESPACES}
    version = tuple(int(p) for p in table.meta.default_target.split("."))
    out: dict[str, dict[str, int]] = {}
    for api in sorted(table.entries):
        if api.partition(".")[0] in roots:
            continue
        counts = out.setdefault(api.rpartition(".")[0], {"entries": 0})
        counts["entries"] += 1
        key = table.entries[api].category_for(version, None).value
        counts[key] = counts.get(key, 0) + 1
    return out


# ------------------------------------------------------------------------------- CLI glue
def run_check(out: TextIO = sys.stdout, directory: str | None = None) -> int:
    require("torch2ms mappings check", "verify", "torch", "mindspore")  # it resolves every name in both
    try:
        table = load_table(directory)
    except MappingError as exc:
        print(f"schema: {exc}", file=out)
        return 1
    print(f"schema: {len(table.files)} files, {len(table.entries)} entries valid", file=out)
    result = check_table(table)
    for warning in result.warnings:
        print(f"warning: {warning}", file=out)
    for problem in result.problems:
        print(problem, file=out)
    for root, count in sorted(result.not_checked.items()):
        print(f"not checked: {count} {root} source(s): {result.not_checked_reason[root]} "
              f"(their MindSpore targets were resolved)", file=out)
    skipped = sum(result.not_checked.values())
    print(f"resolved {result.entries - skipped} torch APIs ({skipped} not checked) and "
          f"{result.targets} MindSpore targets; "
          f"{result.examples} examples; {len(result.warnings)} warning(s) (entries without a runnable example); "
          f"{len(result.problems)} problem(s)", file=out)
    return 0 if result.ok else 1


def run_stats(out: TextIO = sys.stdout, as_json: bool = False, show_missing: bool = False,
              directory: str | None = None) -> int:
    table = load_table(directory)
    rows, categories, source = compute_stats(table)
    total = sum(r.public for r in rows)
    classified = sum(r.classified for r in rows)
    percent = 100.0 * classified / total if total else 100.0
    if as_json:
        data = {
            "source": source,
            "namespaces": {r.namespace: {"public": r.public, "classified": r.classified,
                                         "percent": round(r.percent, 1), "by_category": r.by_category,
                                         "unclassified": r.unclassified}
                           for r in rows},
            "total": {"public": total, "classified": classified, "percent": round(percent, 1)},
            "categories": categories,
            "entries": len(table.entries),
            "libraries": library_stats(table),
        }
        out.write(json.dumps(data, indent=2) + "\n")
        return 0
    print(f"coverage of torch's public callables (from the {source}):", file=out)
    width = max(len(r.namespace) for r in rows)
    print(f"  {'namespace':<{width}}  classified / public        equivalent diff_params missing", file=out)
    for r in rows:
        cats = r.by_category
        print(f"  {r.namespace:<{width}}  {r.classified:5d} / {r.public:5d}  {r.percent:5.1f}%   "
              f"{cats.get('equivalent', 0):10d} {cats.get('diff_params', 0):11d} {cats.get('missing', 0):7d}",
              file=out)
        if show_missing and r.unclassified:
            print(f"  {'':<{width}}  not classified: {', '.join(r.unclassified)}", file=out)
    print(f"  {'total':<{width}}  {classified:5d} / {total:5d}  {percent:5.1f}%", file=out)
    libraries = library_stats(table)
    if libraries:
        print("other libraries (the official tables' rows; their public API is not inventoried):", file=out)
        lwidth = max(len(ns) for ns in libraries)
        print(f"  {'namespace':<{lwidth}}  entries  equivalent diff_params missing", file=out)
        for ns, cats in libraries.items():
            print(f"  {ns:<{lwidth}}  {cats['entries']:7d}  {cats.get('equivalent', 0):10d} "
                  f"{cats.get('diff_params', 0):11d} {cats.get('missing', 0):7d}", file=out)
    print(f"entries: {len(table.entries)} in {len(table.files)} files", file=out)
    for key in ("equivalent", "diff_params", "missing", "with_examples", "dynamic_shape", "not_runnable"):
        print(f"  {key:<14} {categories.get(key, 0):5d}", file=out)
    return 0
