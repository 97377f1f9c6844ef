"""TMS351/TMS352: the data pipeline (torch.utils.data, torchvision data processing, torch ops
inside it)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..model import CallKind, Confidence, Diagnostic
from .facts import Facts, diag, listing

_DATASET_METHODS = ("__getitem__", "__iter__", "__next__", "__getitems__")


def check_data_pipeline(facts: Facts) -> Iterator[Diagnostic]:
    """TMS351: torch.utils.data and torchvision data processing; TMS352: torch ops inside it."""
    data_classes = [c for c in facts.class_list if c.is_dataset or c.is_sampler]
    for cls in data_classes:
        base = next((b for b in cls.bases if b.startswith("torch.utils.data.")), "torch.utils.data.Dataset")
        ms = facts.apis.data_targets.get(base, "mindspore.dataset.GeneratorDataset")
        what = "sampler" if cls.is_sampler and not cls.is_dataset else "dataset"
        yield diag("TMS351", facts.def_span(cls.node),
                    f"class {cls.name} is a torch {what} ({base}): data processing stays outside the network; "
                    f"in MindSpore wrap it in {ms} (a source class with __getitem__/__len__ that returns NumPy "
                    f"arrays) or use a mindspore.dataset loader", torch_api=base, mindspore_api=ms)
    for call in facts.calls:
        if call.kind != CallKind.CALL or not call.api.startswith("torch.utils.data."):
            continue
        last = call.api.rpartition(".")[2]
        if not last[:1].isupper() and last not in ("random_split", "default_collate", "get_worker_info"):
            continue
        target = facts.apis.data_targets.get(call.api)
        if call.api.endswith("DataLoader"):
            how = ("MindSpore builds the pipeline from the dataset: "
                   "mindspore.dataset.GeneratorDataset(source, column_names, shuffle=...).batch(batch_size); "
                   "num_workers becomes num_parallel_workers")
        elif last.endswith("Sampler"):
            how = f"use {target or 'a mindspore.dataset sampler'} (pass it as sampler= to the MindSpore dataset)"
        else:
            how = "data processing belongs to mindspore.dataset (or NumPy) in MindSpore"
        yield diag("TMS351", call.span, f"{call.api}: {how}", torch_api=call.api, mindspore_api=target,
                    confidence=call.confidence)
    for node in facts.imports:
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        hit = next((m for m in modules if m.startswith(("torchvision.transforms", "torchvision.datasets"))), None)
        if hit is None:
            continue
        part = "transforms" if "transforms" in hit else "datasets"
        ms = "mindspore.dataset.vision" if part == "transforms" else "mindspore.dataset"
        yield diag("TMS351", facts.span(node),
                    f"torchvision {part} are data processing: use {ms} (or keep the PIL/NumPy/OpenCV code and feed "
                    f"its NumPy output to a mindspore.dataset pipeline)", torch_api=f"torchvision.{part}",
                    mindspore_api=ms)
    # TMS352: torch ops inside __getitem__ / collate functions, one finding per function.
    data_functions = {f"{c.name}.{m}" for c in facts.class_list if c.is_dataset for m in _DATASET_METHODS}
    collates = facts.callback_names
    for context, func in facts.functions:
        if context not in data_functions and func.name not in collates and "collate" not in func.name.lower():
            continue
        ops = sorted({c.api for c in facts.calls
                      if (c.context == context or c.context.startswith(context + "."))
                      and c.kind in (CallKind.CALL, CallKind.METHOD) and c.confidence is Confidence.HIGH
                      and not c.api.startswith("torch.utils.data.")})
        if not ops:
            continue
        role = "collate function" if context not in data_functions else context.rpartition(".")[2]
        yield diag("TMS352", facts.def_span(func),
                    f"{context} ({role}) runs torch ops: {listing(ops)}; a MindSpore data pipeline works on NumPy "
                    f"arrays, so build samples with NumPy/PIL/OpenCV or mindspore.dataset transforms here",
                    torch_api=ops[0])

