"""Cases from torch's own test database, made inside the verify worker (imports torch).

`torch.testing._internal.common_methods_invocations.op_db` (OpInfo: sample inputs per op and dtype)
and `common_modules.module_db` (ModuleInfo: constructor arguments and forward inputs per layer). A job
names one OpInfo (or ModuleInfo) and a dtype; the worker draws its CPU samples with a seed made from
the job's id (deterministic: no tensor crosses a process), keeps their values in `Runtime.held`, and
writes each sample as code writes the call (`torch2ms.verify.calls`). `worker.run_cases` then rewrites
and runs them as it does generated cases.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

from .calls import Dtype, Tensor, Unwritable, call_text, case_tags, layer_text
from .compare import canonical_dtype
from .generate import Case

MAX_SAMPLES = 400  # per job: a few OpInfos list thousands of samples for one dtype


@functools.cache
def databases() -> tuple[Any, Any]:
    """(op_db, module_db); importing them takes seconds (and needs expecttest and hypothesis)."""
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db

    return op_db, module_db


def _public(torch: Any, name: str) -> Any:
    obj = torch
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _dtype_names(dtypes: Any) -> list[str]:
    return sorted({canonical_dtype(str(d)) for d in dtypes})


def module_name(torch: Any, cls: type) -> str | None:
    """The public name code uses for a layer class (torch.nn.Linear), if torch.nn exports it."""
    return f"torch.nn.{cls.__name__}" if getattr(torch.nn, cls.__name__, None) is cls else None


def catalog(torch: Any) -> dict[str, Any]:
    """What the database holds: each OpInfo whose callable is torch's own public function (not a
    wrapper), with its method form and CPU dtypes; each ModuleInfo of a public torch.nn class."""
    op_db, module_db = databases()
    ops = []
    for op in op_db:
        if _public(torch, op.name) is not op.op:
            continue
        ops.append({"name": op.name, "variant": op.variant_test_name, "method": op.method_variant is not None,
                    "dtypes": _dtype_names(op.supported_dtypes("cpu"))})
    modules = []
    for info in module_db:
        name = module_name(torch, info.module_cls)
        if name is not None:
            modules.append({"name": name, "variant": "",
                            "dtypes": _dtype_names(info.dtypes)})
    return {"ops": ops, "modules": modules}


class _Writer:
    """Turns one sample's values into names (tensors, kept in `held`) and literals."""

    def __init__(self, rt: Any, key: str) -> None:
        self.rt = rt
        self.key = key
        self.inputs: dict[str, Any] = {}

    def value(self, value: Any) -> Any:
        torch, np = self.rt.torch, self.rt.np
        if isinstance(value, torch.Tensor):
            if value.layout != torch.strided or value.is_quantized or value.dtype == torch.complex32:
                raise Unwritable(f"a {value.layout} {value.dtype} tensor")
            name = f"x{len(self.inputs)}"
            dtype = canonical_dtype(str(value.dtype))
            t = value.detach()
            array = (t.float() if dtype == "bfloat16" else t.resolve_conj().resolve_neg()).numpy().copy()
            self.rt.held[f"{self.key}.{name}"] = array
            self.inputs[name] = {"held": f"{self.key}.{name}", "dtype": dtype}
            return Tensor(name, tuple(int(n) for n in value.shape))
        if isinstance(value, torch.dtype):
            return Dtype(canonical_dtype(str(value)).replace("py:", ""))
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, torch.Size):
            return tuple(int(v) for v in value)
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(v) for v in value) if type(value) in (list, tuple) \
                else tuple(self.value(v) for v in value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if value is None or isinstance(value, (bool, int, float, complex, str)):
            return value
        raise Unwritable(f"no literal for a {type(value).__name__}")


def _find(entries: Any, name: str, variant: str, attr: str) -> Any:
    for info in entries:
        if getattr(info, attr) == name and (info.variant_test_name or "") == variant:
            return info
    raise LookupError(f"{name} ({variant or 'no variant'}) is not in torch's test database")


def op_cases(rt: Any, spec: dict[str, Any]) -> list[Case]:
    """The CPU samples of one OpInfo for one dtype, each written as a call (`spec["kind"]`: the function
    or the method form)."""
    torch = rt.torch
    op_db, _ = databases()
    op = _find(op_db, str(spec["op"]), str(spec.get("variant") or ""), "name")
    dtype = str(spec["dtype"])
    method = spec.get("kind") == "method"
    torch.manual_seed(zlib.crc32(str(spec["id"]).encode()))
    rt.held.clear()
    cases: list[Case] = []
    for k, sample in enumerate(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=False)):
        if k >= MAX_SAMPLES:
            break
        writer = _Writer(rt, str(k))
        try:
            first = writer.value(sample.input)
            args = tuple(writer.value(a) for a in sample.args)
            kwargs = {str(n): writer.value(v) for n, v in sample.kwargs.items()}
            code = call_text(op.name, first, args, kwargs, method)
        except Unwritable:
            continue
        tags = case_tags("opinfo", dtype, [first, *args, *kwargs.values()], kwargs)
        cases.append(Case(tags, code, writer.inputs, seed=k))
    return cases


def module_cases(rt: Any, spec: dict[str, Any]) -> list[Case]:
    """The forward inputs of one ModuleInfo for one dtype, in train and in eval mode, each written as
    the layer built and called (`torch.nn.Linear(3, 4)(x0)`)."""
    torch = rt.torch
    _, module_db = databases()
    name = str(spec["op"])
    info = next((m for m in module_db if module_name(torch, m.module_cls) == name
                ), None)
    if info is None:
        raise LookupError(f"{name} is not in torch's test database")
    dtype = str(spec["dtype"])
    torch.manual_seed(zlib.crc32(str(spec["id"]).encode()))
    rt.held.clear()
    cases: list[Case] = []
    for training in (True, False):
        for k, module_input in enumerate(info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype),
                                                                  requires_grad=False, training=training)):
            if module_input.forward_input is None or len(cases) >= MAX_SAMPLES:
                continue
            writer = _Writer(rt, f"{int(training)}.{k}")
            try:
                ctor_args = tuple(writer.value(a) for a in module_input.constructor_input.args)
                ctor_kwargs = {str(n): writer.value(v) for n, v in module_input.constructor_input.kwargs.items()}
                if writer.inputs:  # a tensor given to the constructor (a weight): not a literal
                    continue
                inputs = tuple(writer.value(a) for a in module_input.forward_input.args)
                input_kwargs = {str(n): writer.value(v) for n, v in module_input.forward_input.kwargs.items()}
                code = layer_text(name, ctor_args, ctor_kwargs, inputs, input_kwargs)
            except Unwritable:
                continue
            tags = case_tags("moduleinfo", dtype, [*inputs, *input_kwargs.values()], ctor_kwargs)
            tags.append("train" if training else "eval")
            cases.append(Case(tags, code, writer.inputs, seed=k, extra={"train": training}))
    return cases


def handle(rt: Any, spec: dict[str, Any], emit: Any) -> dict[str, Any]:
    """A worker job: the catalog, or one OpInfo's (ModuleInfo's) samples run as the fix writes them."""
    from .worker import run_one

    if spec.get("catalog"):
        try:
            return {"id": spec.get("id"), "status": "passed", **catalog(rt.torch)}
        except Exception as exc:  # noqa: BLE001 - no database here: the caller says why
            return {"id": spec.get("id"), "status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    databases()  # the import before the job's time budget starts
    make = module_cases if spec.get("source") == "moduleinfo" else op_cases
    return run_one(rt, spec, lambda index, tags: emit({"progress": index, "tags": tags}), make)
