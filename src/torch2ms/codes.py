"""The stable diagnostic codes: one row per code, data only.

Codes never change meaning once released. The scheme:

- TMS1xx  API mapping status of a torch API use
- TMS2xx  dynamic-shape risks (network code); TMS25x the same in data processing
- TMS3xx  migration-readiness checks beyond the API table
- TMS4xx  the port check: the code read as MindSpore code (torch2ms/portcheck/, docs/port-check.md)
- TMS9xx  the file could not be analysed
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Category, Severity

MAPPING_TABLE_URL = "https://www.mindspore.cn/docs/en/master/note/api_mapping/pytorch_api_mapping.html"
DYNAMIC_SHAPE_URL = "https://www.mindspore.cn/docs/en/r2.5.0/migration_guide/dynamic_shape.html"
MIGRATION_GUIDE_URL = "https://www.mindspore.cn/docs/en/master/migration_guide/overview.html"
_MS_DOCS = "https://www.mindspore.cn/docs/en/r2.5.0/"
GRADIENT_URL = _MS_DOCS + "migration_guide/model_development/gradient.html"
SPARSE_URL = _MS_DOCS + "api_python/mindspore/mindspore.COOTensor.html"
CELLLIST_URL = _MS_DOCS + "api_python/nn/mindspore.nn.CellList.html"
CELL_URL = _MS_DOCS + "migration_guide/model_development/model_and_cell.html"
DEVICE_URL = _MS_DOCS + "api_python/mindspore/mindspore.set_device.html"
PARALLEL_URL = _MS_DOCS + "model_train/parallel/data_parallel.html"
AMP_URL = _MS_DOCS + "api_python/mindspore.amp.html"
DATASET_URL = _MS_DOCS + "migration_guide/model_development/dataset.html"
TRAINING_URL = _MS_DOCS + "migration_guide/model_development/training_and_evaluation.html"
LR_URL = _MS_DOCS + "migration_guide/model_development/learning_rate_and_optimizer.html"
MS_API_URL = _MS_DOCS + "api_python/mindspore.html"
TENSOR_URL = _MS_DOCS + "api_python/mindspore/mindspore.Tensor.html"
GRAPH_SYNTAX_URL = "https://www.mindspore.cn/tutorials/en/r2.5.0/compile/static_graph.html"


# The kinds of readiness codes (TMS3xx), in report order; the tens digit of a code is its kind.
SECOND_ORDER = "Second-order gradients"
SPARSE = "Sparse tensors"
CONTAINERS = "Containers of layers"
STRUCTURE = "Module structure"
DEVICES = "Devices and precision"
DATA = "Data pipeline"
TRAINING = "Training loop"
READINESS_KINDS: tuple[str, ...] = (SECOND_ORDER, SPARSE, CONTAINERS, STRUCTURE, DEVICES, DATA, TRAINING)


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    name: str
    severity: Severity
    category: Category
    summary: str
    doc_url: str
    kind: str | None = None  # the kind a readiness code is grouped under (READINESS_KINDS)


_ROWS = (
    ("TMS101", "equivalent-api", Severity.INFO, Category.EQUIVALENT,
     "The torch API has an equivalent MindSpore API.", MAPPING_TABLE_URL),
    ("TMS102", "different-parameters", Severity.WARNING, Category.DIFF_PARAMS,
     "The MindSpore API differs in parameters (renamed, dropped, other defaults or values).", MAPPING_TABLE_URL),
    ("TMS103", "missing-api", Severity.ERROR, Category.MISSING,
     "MindSpore has no equivalent for this torch API at the target version.", MAPPING_TABLE_URL),
    ("TMS104", "unmapped-api", Severity.WARNING, Category.UNMAPPED,
     "The torch API is not in the mapping tables.", MAPPING_TABLE_URL),
    ("TMS105", "possible-tensor-method", Severity.INFO, Category.UNCERTAIN,
     "A method call whose receiver may be a tensor but is not proven one (low confidence).", MAPPING_TABLE_URL),
    ("TMS106", "type-reference", Severity.INFO, Category.TYPE_REFERENCE,
     "A torch type named where nothing runs (an annotation, an isinstance/issubclass target, an except clause): "
     "the name changes, no call does; not counted as an API use.", MAPPING_TABLE_URL),
    ("TMS201", "dynamic-shape-op", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "The op's output shape depends on tensor values.", DYNAMIC_SHAPE_URL),
    ("TMS202", "dynamic-shape-argument", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "The op makes a dynamic shape because an argument is not a constant.", DYNAMIC_SHAPE_URL),
    # TMS20x: network code (forward and what it calls); TMS25x: the same risk in data processing
    # (last digit matches: 251 <-> 201). See torch2ms/dynamic_shape.py and docs/dynamic-shapes.md.
    ("TMS203", "boolean-mask-index", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "Indexing with a boolean tensor (x[mask]) keeps a data-dependent number of elements.", DYNAMIC_SHAPE_URL),
    ("TMS204", "data-dependent-slice", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "A slice or narrow whose bounds are read from tensor values.", DYNAMIC_SHAPE_URL),
    ("TMS205", "data-dependent-control-flow", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "An if/while (or loop count) in network code that depends on tensor values.", DYNAMIC_SHAPE_URL),
    ("TMS206", "host-sync-in-network", Severity.WARNING, Category.DYNAMIC_SHAPE,
     ".item(), .tolist(), .numpy(), int()/float()/bool() of a tensor or an assert on tensor values in network code.", DYNAMIC_SHAPE_URL),
    ("TMS251", "dynamic-shape-op-in-data", Severity.INFO, Category.DYNAMIC_SHAPE,
     "TMS201 outside the network: a value-dependent output size in data processing.", DYNAMIC_SHAPE_URL),
    ("TMS252", "dynamic-shape-argument-in-data", Severity.INFO, Category.DYNAMIC_SHAPE,
     "TMS202 outside the network: an argument read from tensor values sets an output size.", DYNAMIC_SHAPE_URL),
    ("TMS253", "boolean-mask-index-in-data", Severity.INFO, Category.DYNAMIC_SHAPE,
     "TMS203 outside the network: boolean-mask indexing in data processing.", DYNAMIC_SHAPE_URL),
    ("TMS254", "data-dependent-slice-in-data", Severity.INFO, Category.DYNAMIC_SHAPE,
     "TMS204 outside the network: a slice with bounds read from tensor values.", DYNAMIC_SHAPE_URL),
    # TMS3xx: migration readiness; the last field is the code's kind (READINESS_KINDS).
    ("TMS301", "second-order-gradient", Severity.WARNING, Category.READINESS,
     "Gradients of gradients (create_graph=True, hessian): check each op on the network path supports them.", GRADIENT_URL, SECOND_ORDER),
    ("TMS311", "sparse-tensor", Severity.WARNING, Category.READINESS,
     "Sparse tensors or sparse gradients: MindSpore's COO/CSR tensors support a limited set of ops.", SPARSE_URL, SPARSE),
    ("TMS321", "plain-layer-container", Severity.WARNING, Category.READINESS,
     "Layers kept in a plain list, tuple or dict on self: MindSpore needs CellList / SequentialCell / CellDict.", CELLLIST_URL, CONTAINERS),
    ("TMS322", "plain-parameter-container", Severity.WARNING, Category.READINESS,
     "Parameters kept in a plain list or tuple on self: MindSpore groups them in a ParameterTuple.", CELLLIST_URL, CONTAINERS),
    ("TMS331", "module-subclass", Severity.INFO, Category.READINESS,
     "An nn.Module subclass: it becomes a mindspore.nn.Cell and forward becomes construct.", CELL_URL, STRUCTURE),
    ("TMS332", "module-buffer", Severity.INFO, Category.READINESS,
     "register_buffer: MindSpore keeps such state as a Parameter with requires_grad=False.", CELL_URL, STRUCTURE),
    ("TMS333", "module-hook", Severity.WARNING, Category.READINESS,
     "A module hook: MindSpore Cell hooks run in PyNative mode only.", CELL_URL, STRUCTURE),
    ("TMS334", "custom-autograd-function", Severity.WARNING, Category.READINESS,
     "A custom torch.autograd.Function: MindSpore writes custom gradients as a Cell's bprop.", GRADIENT_URL, STRUCTURE),
    ("TMS335", "train-eval-mode", Severity.INFO, Category.READINESS,
     "model.train() / model.eval(): MindSpore uses cell.set_train(True/False).", CELL_URL, STRUCTURE),
    ("TMS336", "state-dict", Severity.WARNING, Category.READINESS,
     "state_dict / load_state_dict: MindSpore uses checkpoint APIs and other parameter names.", CELL_URL, STRUCTURE),
    ("TMS341", "device-placement", Severity.INFO, Category.READINESS,
     "A device move or query: MindSpore selects one device for the whole program.", DEVICE_URL, DEVICES),
    ("TMS342", "data-parallel-wrapper", Severity.WARNING, Category.READINESS,
     "DataParallel / DistributedDataParallel: MindSpore sets data parallelism in the parallel context.", PARALLEL_URL, DEVICES),
    ("TMS343", "mixed-precision", Severity.WARNING, Category.READINESS,
     "autocast / GradScaler: MindSpore uses amp levels on the network and its own loss scalers.", AMP_URL, DEVICES),
    ("TMS351", "data-pipeline", Severity.INFO, Category.READINESS,
     "torch.utils.data or torchvision data processing: port it to mindspore.dataset or NumPy.", DATASET_URL, DATA),
    ("TMS352", "torch-op-in-data-pipeline", Severity.WARNING, Category.READINESS,
     "torch ops inside Dataset.__getitem__ or a collate function: data processing should produce NumPy.", DATASET_URL, DATA),
    ("TMS361", "manual-training-step", Severity.WARNING, Category.READINESS,
     "zero_grad / backward / step: MindSpore trains with a value-and-grad function and optimizer(grads).", TRAINING_URL, TRAINING),
    ("TMS362", "gradient-clipping", Severity.INFO, Category.READINESS,
     "Gradient clipping of .grad fields: in MindSpore clip the gradient tuple.", TRAINING_URL, TRAINING),
    ("TMS363", "gradient-accumulation", Severity.WARNING, Category.READINESS,
     "Gradient accumulation through repeated backward(): MindSpore gradients must be summed by hand.", TRAINING_URL, TRAINING),
    ("TMS364", "lr-scheduler-step", Severity.INFO, Category.READINESS,
     "A learning-rate scheduler stepped by hand: MindSpore passes the schedule to the optimizer.", LR_URL, TRAINING),
    ("TMS365", "random-seed", Severity.INFO, Category.READINESS,
     "torch.manual_seed: use mindspore.set_seed; distributed training needs the same seed everywhere.", TRAINING_URL, TRAINING),
    # TMS4xx: the port check (the code read as MindSpore code, torch2ms/portcheck/)
    ("TMS401", "unknown-mindspore-api", Severity.ERROR, Category.PORT_CHECK,
     "A MindSpore name (module attribute, import, class member) that the target MindSpore version does not have.", MS_API_URL),
    ("TMS402", "arguments-do-not-bind", Severity.ERROR, Category.PORT_CHECK,
     "A MindSpore call whose arguments do not bind to the API's signature (unknown keyword, too many positional arguments, a required one missing, one given twice), or a number passed where it takes a dtype.", MS_API_URL),
    ("TMS403", "missing-tensor-member", Severity.ERROR, Category.PORT_CHECK,
     "A method or attribute used on a MindSpore tensor or Cell that MindSpore's Tensor or Cell does not have.", TENSOR_URL),
    ("TMS404", "same-name-differs", Severity.WARNING, Category.PORT_CHECK,
     "A MindSpore Tensor method with torch's name that differs from torch's where this call relies on the difference, a layer attribute of torch's name that holds another value, or a child added to a container Cell that never runs it.", TENSOR_URL),
    ("TMS405", "torch-positional-order", Severity.WARNING, Category.PORT_CHECK,
     "A positional argument where MindSpore's parameter at that position is not torch's.", MS_API_URL),
    ("TMS406", "no-kernel-on-device", Severity.ERROR, Category.PORT_CHECK,
     "The MindSpore form (or this argument value of it) has no kernel or raises on the chosen device.", MS_API_URL),
    ("TMS407", "torch-name-left", Severity.WARNING, Category.PORT_CHECK,
     "A torch name still used in a file that names MindSpore (a port in progress) where no other finding covers it: the port still needs torch.", MS_API_URL),
    ("TMS441", "graph-mode-unsupported", Severity.WARNING, Category.PORT_CHECK,
     "A construct that MindSpore's static graph compiler (GRAPH mode) rejects, in construct or what it calls.", GRAPH_SYNTAX_URL),
    ("TMS901", "syntax-error", Severity.ERROR, Category.FILE_ERROR,
     "The file is not valid Python 3 and could not be analysed.", MIGRATION_GUIDE_URL),
    ("TMS902", "decode-error", Severity.ERROR, Category.FILE_ERROR,
     "The file could not be decoded (invalid encoding or coding declaration).", MIGRATION_GUIDE_URL),
    ("TMS903", "read-error", Severity.ERROR, Category.FILE_ERROR,
     "The file was not read: missing, unreadable, binary, too large, not a regular file (FIFO, socket, device), a symlink loop or a link out of the scanned folders.", MIGRATION_GUIDE_URL),
    ("TMS904", "analysis-error", Severity.ERROR, Category.FILE_ERROR,
     "The analysis failed on this file (an internal error; please report it).", MIGRATION_GUIDE_URL),
    ("TMS905", "file-limit", Severity.ERROR, Category.FILE_ERROR,
     "The work on this file was stopped at the per-file limit of CPU time or memory (--file-timeout, --file-memory-mb); the message says which.", MIGRATION_GUIDE_URL),
)

CODES: dict[str, CodeInfo] = {row[0]: CodeInfo(*row) for row in _ROWS}


def info(code: str) -> CodeInfo:
    return CODES[code]


class SelectorError(ValueError):
    """A code or prefix that selects no code; the message suggests the nearest ones."""


def _selectors() -> list[str]:
    """Every valid selector: each code and each of its prefixes from "TMS" on, and "ALL"."""
    out = {"ALL"}
    for code in CODES:
        for end in range(3, len(code) + 1):
            out.add(code[:end])
    return sorted(out)


def check_selector(text: str) -> str:
    """`text` upper-cased when it is a code or a prefix of one (ALL is TMS, every code); else a SelectorError."""
    import difflib

    value = text.strip().upper()
    valid = _selectors()
    if value in valid:
        return "TMS" if value == "ALL" else value
    near = difflib.get_close_matches(value, [s for s in valid if len(s) >= min(len(value), 6)] or valid, n=3,
                                     cutoff=0.5)
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    raise SelectorError(f"unknown code or prefix {text.strip()!r}: no torch2ms code starts with it{hint} "
                        f"(`torch2ms rule --all` lists the codes)")
