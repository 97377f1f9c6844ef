"""Migration-readiness checks: what a PyTorch project does that MindSpore handles differently.

These findings (codes TMS3xx, category ``readiness``) come in addition to the API-table
findings (TMS1xx) for the same calls. They look at constructs rather than single APIs:
a training loop, a module class, a container of layers, a data-loading function.

Everything here is a pure function of one file: the resolved `ApiCall` list (what each
call is in torch) and a light ``ast`` pass over the same tree (structure the resolver
does not record: class bases, loops, what is stored on ``self``). Names that the resolver
cannot prove (``model.train()`` on a function parameter) are matched by method name in
files that import torch; such findings carry low confidence unless the name is one only
torch code uses (``zero_grad``, ``register_buffer``).

`KIND_OF_CODE` groups the codes by kind for reports; `KINDS` gives the kinds in order.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from .codes import CODES
from .mappings import MappingTable
from .model import DEFAULT_DEVICE, ApiCall, Category, Confidence, Diagnostic, Edit, Fix, Span
from .source import SourceText

# ------------------------------------------------------------------ kinds and codes
SECOND_ORDER = "Second-order gradients"
SPARSE = "Sparse tensors"
CONTAINERS = "Containers of layers"
STRUCTURE = "Module structure"
DEVICES = "Devices and precision"
DATA = "Data pipeline"
TRAINING = "Training loop"

KINDS: tuple[str, ...] = (SECOND_ORDER, SPARSE, CONTAINERS, STRUCTURE, DEVICES, DATA, TRAINING)

KIND_OF_CODE: dict[str, str] = {
    "TMS301": SECOND_ORDER,
    "TMS311": SPARSE,
    "TMS321": CONTAINERS,
    "TMS322": CONTAINERS,
    "TMS331": STRUCTURE,
    "TMS332": STRUCTURE,
    "TMS333": STRUCTURE,
    "TMS334": STRUCTURE,
    "TMS335": STRUCTURE,
    "TMS336": STRUCTURE,
    "TMS341": DEVICES,
    "TMS342": DEVICES,
    "TMS343": DEVICES,
    "TMS351": DATA,
    "TMS352": DATA,
    "TMS361": TRAINING,
    "TMS362": TRAINING,
    "TMS363": TRAINING,
    "TMS364": TRAINING,
    "TMS365": TRAINING,
}
READINESS_CODES: tuple[str, ...] = tuple(KIND_OF_CODE)


def kind_of(code: str) -> str | None:
    """The kind title a readiness code is grouped under (None for other codes)."""
    return KIND_OF_CODE.get(code)


# ------------------------------------------------------------------ API facts
_SECOND_ORDER_APIS = frozenset({
    "torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
    "torch.autograd.functional.jacobian", "torch.autograd.functional.vjp", "torch.autograd.functional.jvp",
})
_ALWAYS_SECOND_ORDER = frozenset({
    "torch.autograd.functional.hessian", "torch.autograd.functional.hvp", "torch.autograd.functional.vhp",
})
_SPARSE_APIS = frozenset({
    "torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor", "torch.sparse_bsr_tensor",
    "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor", "torch.sparse_coo", "torch.sparse_csr",
    "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc", "torch.optim.SparseAdam",
    "torch.Tensor.to_sparse", "torch.Tensor.to_sparse_coo", "torch.Tensor.to_sparse_csr",
    "torch.Tensor.to_sparse_csc", "torch.Tensor.to_sparse_bsr", "torch.Tensor.to_sparse_bsc",
    "torch.Tensor.coalesce", "torch.Tensor.sparse_mask", "torch.Tensor.sparse_dim", "torch.Tensor.dense_dim",
    "torch.Tensor.crow_indices", "torch.Tensor.col_indices", "torch.Tensor.is_coalesced",
})
_SPARSE_FLAG_APIS = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag", "torch.nn.functional.embedding",
                               "torch.nn.functional.embedding_bag", "torch.nn.Embedding.from_pretrained",
                               "torch.nn.EmbeddingBag.from_pretrained"})
_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                    "register_full_backward_pre_hook", "register_backward_hook"})
_PARALLEL_APIS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.data_parallel", "torch.distributed.init_process_group",
})
_AMP_PREFIXES = ("torch.cuda.amp.", "torch.amp.", "torch.cpu.amp.")
_CLIP_APIS = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grads_with_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
})
_SEED_APIS = frozenset({
    "torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.seed", "torch.random.seed",
})
_NOT_MODULES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                          "torch.nn.ParameterList", "torch.nn.ParameterDict"})
_PARAMETER_APIS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_DEVICE_TEXT = re.compile(r"(?i)device|^dev$|cuda|gpu|^rank$|local_rank")
_DEVICE_STRING = re.compile(r"^(cuda|cpu|mps|xpu|npu|hpu|meta)(:\d+)?$")
_OPTIMIZER_NAME = re.compile(r"(?i)opt")
_SCHEDULER_NAME = re.compile(r"(?i)sched|^lr_|_lr$|^lr$|warmup")
_MODEL_NAME = re.compile(r"(?i)model|net|module|encoder|decoder|classifier|backbone|generator|discriminator|^m$|"
                         r"^self$|critic|actor|policy|head|student|teacher|ema")
_DATASET_METHODS = ("__getitem__", "__iter__", "__next__", "__getitems__")
_MAX_LISTED = 20
# Method calls found by name (receivers the resolver cannot prove) and data-loader callbacks.
_HOT = re.compile(r"\.\s*(?:backward|step|zero_grad|train|eval|state_dict|load_state_dict|register_buffer|"
                  r"register_\w*hook|cuda|to)\s*\(|\b(?:collate_fn|worker_init_fn)\b")

_DATA_TARGETS = {
    "torch.utils.data.DataLoader": "mindspore.dataset.GeneratorDataset",
    "torch.utils.data.Dataset": "mindspore.dataset.GeneratorDataset",
    "torch.utils.data.IterableDataset": "mindspore.dataset.GeneratorDataset",
    "torch.utils.data.TensorDataset": "mindspore.dataset.NumpySlicesDataset",
    "torch.utils.data.RandomSampler": "mindspore.dataset.RandomSampler",
    "torch.utils.data.SequentialSampler": "mindspore.dataset.SequentialSampler",
    "torch.utils.data.SubsetRandomSampler": "mindspore.dataset.SubsetRandomSampler",
    "torch.utils.data.WeightedRandomSampler": "mindspore.dataset.WeightedRandomSampler",
    "torch.utils.data.distributed.DistributedSampler": "mindspore.dataset.DistributedSampler",
    "torch.utils.data.DistributedSampler": "mindspore.dataset.DistributedSampler",
}


def wanted(enabled: Callable[[str], bool]) -> bool:
    """Whether any readiness code is switched on (the checks are skipped otherwise)."""
    return any(enabled(code) for code in READINESS_CODES)


# ------------------------------------------------------------------ file facts
@dataclass(eq=False)
class _Class:
    node: ast.ClassDef
    name: str
    bases: list[str] = field(default_factory=list)  # torch APIs of the bases (direct or through user classes)
    is_module: bool = False
    is_dataset: bool = False
    is_sampler: bool = False
    is_function: bool = False  # torch.autograd.Function


class _Facts:
    """What the checks share about one file: calls by span, classes, call nodes by method name."""

    def __init__(self, tree: ast.Module, calls: list[ApiCall], text: str, table: MappingTable,
                 version: tuple[int, ...], positions: SourceText, device: str | None = DEFAULT_DEVICE) -> None:
        self.tree = tree
        self.calls = calls
        self.text = text
        self.table = table
        self.version = version
        self.device = device
        self.pos = positions
        self.by_span: dict[Span, list[ApiCall]] = {}
        for call in calls:
            self.by_span.setdefault(call.span, []).append(call)
        self.imports_torch = False
        self.classes: dict[str, _Class] = {}
        self.class_list: list[_Class] = []
        self.methods: dict[str, list[ast.Call]] = {}  # attribute calls x.name(...) by name
        self.functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        self.function_of: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.self_assigns: list[tuple[str, ast.Assign | ast.AnnAssign]] = []  # x.attr = ... with its function
        self.callback_names: set[str] = set()  # functions passed as collate_fn= / worker_init_fn=
        self._call_index: dict[Span, ast.Call] | None = None
        self._collect(tree)

    # -------------------------------------------------------------- collection
    def _collect(self, tree: ast.Module) -> None:
        """One walk over the statements; expressions only where a method name the checks use appears."""
        hot = self._hot_lines()
        # Depth-first in source order, so a class is known before the classes that derive from it.
        stack: list[tuple[ast.stmt, str, ast.AST]] = [(s, "", tree) for s in reversed(tree.body)]
        while stack:
            node, context, parent = stack.pop()
            kind = type(node)
            inner = context
            if kind is ast.ClassDef:
                self._note_class(node)  # type: ignore[arg-type]
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                name = node.name  # type: ignore[attr-defined]
                if isinstance(parent, ast.ClassDef):
                    inner = f"{parent.name}.{name}"
                else:
                    inner = f"{context}.{name}" if context else name
                self.functions.append((inner, node))  # type: ignore[arg-type]
                self.function_of.setdefault(inner, node)  # type: ignore[arg-type]
            elif kind is ast.Import or kind is ast.ImportFrom:
                self.imports.append(node)  # type: ignore[arg-type]
                self._note_import(node)  # type: ignore[arg-type]
            elif (kind is ast.Assign or kind is ast.AnnAssign) and context:
                targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
                if len(targets) == 1 and isinstance(targets[0], ast.Attribute) \
                        and isinstance(targets[0].value, ast.Name) and node.value is not None:  # type: ignore[attr-defined]
                    self.self_assigns.append((context, node))  # type: ignore[arg-type]
            children: list[tuple[ast.stmt, str, ast.AST]] = []
            for _, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.stmt):
                            children.append((item, inner, node))
                        elif isinstance(item, (ast.ExceptHandler, ast.match_case)):
                            children.extend((sub, inner, node) for sub in item.body)
                            self._expressions(item, hot)
                        elif isinstance(item, ast.AST):
                            self._expressions(item, hot)
                elif isinstance(value, ast.AST):
                    self._expressions(value, hot)
            stack.extend(reversed(children))
        self.functions.sort(key=lambda item: (item[1].lineno, item[1].col_offset))
        for calls in self.methods.values():
            calls.sort(key=lambda c: (c.lineno, c.col_offset))

    def _hot_lines(self) -> list[int]:
        """Sorted lines where a method call the checks look at, or a collate_fn= keyword, starts."""
        return sorted({self.pos.position(m.start())[0] for m in _HOT.finditer(self.text)})

    def _expressions(self, node: ast.AST, hot: list[int]) -> None:
        """Record the calls inside one expression (or handler/pattern header) that spans a hot line."""
        first = getattr(node, "lineno", None)
        if first is None or not hot:
            return
        last = getattr(node, "end_lineno", None) or first
        index = bisect.bisect_left(hot, first)
        if index == len(hot) or hot[index] > last:
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.stmt):
                continue
            if isinstance(sub, ast.Call):
                if isinstance(sub.func, ast.Attribute):
                    self.methods.setdefault(sub.func.attr, []).append(sub)
                for kw in sub.keywords:
                    if kw.arg in ("collate_fn", "worker_init_fn") and isinstance(kw.value, ast.Name):
                        self.callback_names.add(kw.value.id)

    def _note_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            self.imports_torch |= any(a.name == "torch" or a.name.startswith("torch.") for a in node.names)
        elif node.level == 0 and node.module and (node.module == "torch" or node.module.startswith("torch.")):
            self.imports_torch = True

    def _note_class(self, node: ast.ClassDef) -> None:
        info = _Class(node, node.name)
        for base in node.bases:
            api = self.api_at(base, kinds=("attribute", "call"))
            if api is not None:
                info.bases.append(api)
                info.is_module |= api == "torch.nn.Module" or (api.startswith("torch.nn.") and api[9:10].isupper()
                                                               and api not in _NOT_MODULES)
                info.is_dataset |= api.startswith("torch.utils.data.") and api.endswith("Dataset")
                info.is_sampler |= api.startswith("torch.utils.data.") and api.endswith("Sampler")
                info.is_function |= api in ("torch.autograd.Function", "torch.autograd.function.Function")
            elif isinstance(base, ast.Name) and base.id in self.classes:
                parent = self.classes[base.id]
                info.bases.extend(parent.bases)
                info.is_module |= parent.is_module
                info.is_dataset |= parent.is_dataset
                info.is_sampler |= parent.is_sampler
                info.is_function |= parent.is_function
        self.classes[node.name] = info
        self.class_list.append(info)

    # -------------------------------------------------------------- helpers
    def call_node(self, span: Span) -> ast.Call | None:
        """The call expression at exactly `span` (the index is built on first use: few files need it)."""
        if self._call_index is None:
            wanted = {(c.span.start_line, c.span.end_line) for c in self.calls if c.kind in ("call", "method")}
            self._call_index = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and (node.lineno, node.end_lineno) in wanted:
                    self._call_index.setdefault(self.span(node), node)
        return self._call_index.get(span)

    def span(self, node: ast.expr | ast.stmt) -> Span:
        return self.pos.span(node)

    def api_at(self, node: ast.expr, kinds: tuple[str, ...] = ("call", "method", "attribute"),
               high_only: bool = False) -> str | None:
        """The torch API the resolver found at exactly this node, if any."""
        for call in self.by_span.get(self.span(node), ()):
            if call.kind in kinds and (not high_only or call.confidence is Confidence.HIGH):
                return call.api
        return None

    def line(self, number: int) -> str:
        return self.pos.line(number)

    def def_span(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
        """The span of the name in a `class NAME` / `def NAME` header."""
        line = self.line(node.lineno)
        start = self.pos.char_col(node.lineno, node.col_offset)
        match = re.compile(r"(?:class|def)\s+(" + re.escape(node.name) + r")\b").search(line, start)
        if match is None:
            return Span(node.lineno, start, node.lineno, start)
        return Span(node.lineno, match.start(1), node.lineno, match.end(1))

    def header_span(self, node: ast.For | ast.AsyncFor | ast.While) -> Span:
        """From the loop keyword to the end of its iterable or condition."""
        start = self.span(node)
        head = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
        end = self.span(head)
        return Span(start.start_line, start.start_col, end.end_line, end.end_col)

    def receiver_name(self, call: ast.Call) -> str:
        """The last name of a method call's receiver: `self.model.train()` -> 'model'."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return ""
        value = func.value
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.Attribute):
            return value.attr
        if isinstance(value, ast.Call):
            inner = value.func
            if isinstance(inner, ast.Name):
                return inner.id
            if isinstance(inner, ast.Attribute):
                return inner.attr
        return ""

    def target_of(self, api: str) -> str | None:
        entry = self.table.lookup(api)
        if entry is None:
            return None
        target = entry.target_for(self.version, self.device)
        if target is None or entry.category_for(self.version, self.device) is Category.MISSING:
            return None
        return target.api


def _diag(code: str, span: Span, message: str, torch_api: str | None = None, mindspore_api: str | None = None,
          fix: Fix | None = None, confidence: Confidence = Confidence.HIGH) -> Diagnostic:
    info = CODES[code]
    return Diagnostic(code=code, severity=info.severity, category=Category.READINESS, span=span, message=message,
                      torch_api=torch_api, mindspore_api=mindspore_api, fix=fix, doc_url=info.doc_url,
                      confidence=confidence)


def _listing(names: Iterable[str]) -> str:
    names = sorted(set(names))
    if len(names) <= _MAX_LISTED:
        return ", ".join(names)
    return ", ".join(names[:_MAX_LISTED]) + f" and {len(names) - _MAX_LISTED} more"


def _const_kw(call: ast.Call, name: str) -> tuple[bool, object]:
    """(present, value): value is the constant, or ... when the keyword is not a constant."""
    for kw in call.keywords:
        if kw.arg == name:
            if isinstance(kw.value, ast.Constant):
                return True, kw.value.value
            return True, ...
    return False, None


def _call_nodes(facts: _Facts, apis: Callable[[str], bool]) -> Iterator[tuple[ast.Call, ApiCall]]:
    """The call nodes the resolver resolved to an API that `apis` accepts, with that call."""
    for call in facts.calls:
        if call.kind in ("call", "method") and apis(call.api):
            node = facts.call_node(call.span)
            if node is not None:
                yield node, call


# ------------------------------------------------------------------ 1. second-order gradients
def _network_apis(facts: _Facts) -> list[str]:
    """torch APIs on the network path: the forward of the file's modules and the layers they build."""
    module_inits = {f"{c.name}.__init__" for c in facts.class_list if c.is_module}
    apis = set()
    for call in facts.calls:
        if call.kind not in ("call", "method") or call.confidence is not Confidence.HIGH:
            continue
        if call.in_network:
            apis.add(call.api)
        elif call.context in module_inits and call.api.startswith("torch.nn.") and call.api[9:10].isupper():
            apis.add(call.api)
    return sorted(apis)


def check_second_order(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS301: create_graph=True (gradients of gradients) and hessian-style APIs."""
    seen: set[Span] = set()
    network: list[str] | None = None
    candidates: list[tuple[ast.Call, str]] = []
    for node, call in _call_nodes(facts, lambda api: api in _ALWAYS_SECOND_ORDER or api in _SECOND_ORDER_APIS):
        if call.api in _ALWAYS_SECOND_ORDER:
            candidates.append((node, call.api))
        elif call.api in _SECOND_ORDER_APIS:
            present, value = _const_kw(node, "create_graph")
            if present and value is not False and value is not None:
                candidates.append((node, call.api))
    if facts.imports_torch:  # loss.backward(create_graph=True) on a receiver the resolver cannot prove
        for node in facts.methods.get("backward", ()):
            present, value = _const_kw(node, "create_graph")
            if present and value is not False and value is not None:
                candidates.append((node, "torch.Tensor.backward"))
    for node, api in candidates:
        span = facts.span(node)
        if span in seen:
            continue
        seen.add(span)
        if network is None:
            network = _network_apis(facts)
        if network:
            where = (f"check that each torch API on this file's network path supports second-order gradients "
                     f"in MindSpore: {_listing(network)}")
        else:
            where = ("this file has no network code; check the forward of the model being differentiated for "
                     "ops without second-order gradients")
        yield _diag("TMS301", span,
                    f"second-order gradient ({api.rpartition('.')[2]} builds a differentiable gradient graph): "
                    f"in MindSpore differentiate the gradient function again (mindspore.grad of a function that "
                    f"calls mindspore.grad); {where}",
                    torch_api=api, mindspore_api="mindspore.grad")


# ------------------------------------------------------------------ 2. sparse tensors
def check_sparse(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS311: sparse tensor construction, sparse ops and sparse-gradient embeddings."""
    seen: set[Span] = set()
    by_node: dict[Span, ast.Call] = {}
    for node, call in _call_nodes(facts, _SPARSE_FLAG_APIS.__contains__):
        by_node[call.span] = node
    for call in facts.calls:
        if call.span in seen:
            continue
        api = call.api
        if api in _SPARSE_FLAG_APIS:
            flagged = by_node.get(call.span)
            if flagged is None:
                continue
            present, value = _const_kw(flagged, "sparse")
            if not present or value is False or value is None:
                continue
            seen.add(call.span)
            yield _diag("TMS311", call.span,
                        f"{api} with sparse=True produces sparse gradients; MindSpore's embedding layers compute "
                        f"dense gradients (for sparse updates of a large table use an optimizer such as "
                        f"mindspore.nn.LazyAdam)", torch_api=api, confidence=call.confidence)
            continue
        if not (api in _SPARSE_APIS or api.startswith("torch.sparse.")):
            continue
        if call.kind == "attribute" and api.startswith("torch.sparse.") and api.count(".") == 1:
            continue
        seen.add(call.span)
        target = facts.target_of(api)
        known = (f"the mapping table maps it to {target}" if target
                 else "the mapping table knows no MindSpore sparse equivalent for it")
        yield _diag("TMS311", call.span,
                    f"sparse tensor use: {api}; MindSpore has COOTensor and CSRTensor with a limited operator "
                    f"set, and {known}", torch_api=api, mindspore_api=target, confidence=call.confidence)


# ------------------------------------------------------------------ 3. containers of layers
def _element_kind(facts: _Facts, node: ast.expr) -> str | None:
    """'module' or 'parameter' for a call that builds one, else None."""
    if not isinstance(node, ast.Call):
        return None
    api = facts.api_at(node, kinds=("call",))
    if api is not None:
        if api in _PARAMETER_APIS:
            return "parameter"
        if api.startswith("torch.nn.") and api[9:10].isupper() and api not in _NOT_MODULES:
            return "module"
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in facts.classes and facts.classes[func.id].is_module:
        return "module"
    return None


def _container_elements(value: ast.expr) -> tuple[str, list[ast.expr]] | None:
    if isinstance(value, ast.List):
        return "list", list(value.elts)
    if isinstance(value, ast.Tuple):
        return "tuple", list(value.elts)
    if isinstance(value, ast.Dict):
        if any(key is None for key in value.keys):
            return None
        return "dict", list(value.values)
    if isinstance(value, ast.ListComp):
        return "list", [value.elt]
    if isinstance(value, ast.DictComp):
        return "dict", [value.value]
    return None


_CONTAINER_TARGETS = {
    ("module", "list"): "mindspore.nn.CellList",
    ("module", "tuple"): "mindspore.nn.CellList",
    ("module", "dict"): "mindspore.nn.CellDict",
    ("parameter", "list"): "mindspore.ParameterTuple",
    ("parameter", "tuple"): "mindspore.ParameterTuple",
}


def _wrap_fix(facts: _Facts, value: ast.expr, shape: str, target: str) -> Fix | None:
    from .rewrite import FixSource  # the shared import-insertion helper of the fixes

    span = facts.span(value)
    prefix, suffix = f"{target}(", ")"
    if shape == "tuple":
        if facts.line(span.start_line)[span.start_col:span.start_col + 1] != "(":
            return None  # an unparenthesized tuple `a, b`: wrapping it would make two arguments
        prefix, suffix = f"{target}(list(", "))"  # CellList takes a list, not a tuple
    edits = [Edit(Span(span.start_line, span.start_col, span.start_line, span.start_col), prefix),
             Edit(Span(span.end_line, span.end_col, span.end_line, span.end_col), suffix)]
    try:
        imp = FixSource(facts.text, facts.tree).import_edit()
    except (ValueError, IndexError):
        return None
    if imp is not None:
        edits.append(imp)
    edits.sort(key=lambda e: (e.span.start_line, e.span.start_col))
    return Fix(title=f"Wrap in {target}", edits=tuple(edits), safe=False)


def check_containers(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS321/TMS322: plain lists, tuples or dicts of layers or of Parameters stored on `self`."""
    for context, stmt in facts.self_assigns:
        owner, _, method_name = context.partition(".")
        cls = facts.classes.get(owner)
        method = facts.function_of.get(context)
        if cls is None or not cls.is_module or "." in method_name or method is None or not method.args.args:
            continue
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        value = stmt.value
        if value is None or not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name) \
                or target.value.id != method.args.args[0].arg:
            continue
        shape_elts = _container_elements(value)
        if shape_elts is None or not shape_elts[1]:
            continue
        shape, elts = shape_elts
        kinds = {_element_kind(facts, e) for e in elts}
        if len(kinds) != 1 or None in kinds:
            continue
        element = kinds.pop()
        assert element is not None
        ms = _CONTAINER_TARGETS.get((element, shape))
        attr = f"self.{target.attr}"
        if element == "module":
            message = (f"{attr} keeps layers in a plain {shape}: torch does not register them (their "
                       f"parameters are missing from parameters() and state_dict()), and MindSpore needs "
                       f"{ms} (or mindspore.nn.SequentialCell when they run in order) to register and "
                       f"compile them")
            code, api = "TMS321", "torch.nn.Module"
        else:
            if ms is None:
                message = (f"{attr} keeps Parameters in a plain dict: use torch.nn.ParameterDict in torch; "
                           f"in MindSpore store each Parameter as an attribute of the Cell")
            else:
                message = (f"{attr} keeps Parameters in a plain {shape}: torch does not register them; "
                           f"MindSpore groups Parameters in {ms} (each needs a unique name)")
            code, api = "TMS322", "torch.nn.Parameter"
        fix = _wrap_fix(facts, value, shape, ms) if ms is not None else None
        yield _diag(code, facts.span(value), message, torch_api=api, mindspore_api=ms, fix=fix)


# ------------------------------------------------------------------ 4. module structure
def _name_confidence(facts: _Facts, node: ast.Call, apis: Iterable[str]) -> Confidence | None:
    """HIGH when the resolver proved the call one of `apis`; LOW for a torch-looking name; None: not torch."""
    found = [c for c in facts.by_span.get(facts.span(node), ()) if c.kind == "method"]
    if any(c.api in apis and c.confidence is Confidence.HIGH for c in found):
        return Confidence.HIGH
    if any(c.confidence is Confidence.HIGH and not c.api.startswith("torch.Tensor.") for c in found):
        return None  # proven to be some other torch API
    return Confidence.LOW if facts.imports_torch else None


def check_module_structure(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS331-TMS336: nn.Module classes, buffers, hooks, custom autograd, train/eval, state dicts."""
    for cls in facts.class_list:
        if cls.is_function:
            yield _diag("TMS334", facts.def_span(cls.node),
                        f"class {cls.name} is a custom torch.autograd.Function: MindSpore writes a custom "
                        f"gradient as a bprop method on a mindspore.nn.Cell (construct for the forward, bprop "
                        f"for the backward) and calls the Cell instead of {cls.name}.apply",
                        torch_api="torch.autograd.Function", mindspore_api="mindspore.nn.Cell")
        elif cls.is_module:
            names = {s.name for s in cls.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            forward = "; its forward method becomes construct" if "forward" in names else \
                "; its forward (inherited here) becomes construct"
            base = next((b for b in cls.bases if b.startswith("torch.nn.")), "torch.nn.Module")
            yield _diag("TMS331", facts.def_span(cls.node),
                        f"class {cls.name} subclasses {base}: in MindSpore it subclasses mindspore.nn.Cell"
                        f"{forward}", torch_api=base, mindspore_api="mindspore.nn.Cell")
    for node in facts.methods.get("register_buffer", ()):
        confidence = _name_confidence(facts, node, ("torch.nn.Module.register_buffer",))
        if confidence is None:
            continue
        yield _diag("TMS332", facts.span(node),
                    "register_buffer: MindSpore has no buffers; keep the state as a mindspore.Parameter with "
                    "requires_grad=False (saved in checkpoints) or as a plain Tensor attribute (not saved)",
                    torch_api="torch.nn.Module.register_buffer", mindspore_api="mindspore.Parameter",
                    confidence=Confidence.HIGH)
    for name in sorted(_HOOKS):
        for node in facts.methods.get(name, ()):
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}",))
            if confidence is None:
                continue
            ms_name = "register_backward_hook" if "backward" in name else name
            if name == "register_full_backward_pre_hook":
                ms_name = "register_backward_pre_hook"
            yield _diag("TMS333", facts.span(node),
                        f"{name}: mindspore.nn.Cell has {ms_name}, but hooks run only in PyNative mode, not in "
                        f"graph mode (jit); move the logic into construct for graph mode",
                        torch_api=f"torch.nn.Module.{name}", mindspore_api=f"mindspore.nn.Cell.{ms_name}",
                        confidence=Confidence.HIGH)
    for name, flag in (("train", True), ("eval", False)):
        for node in facts.methods.get(name, ()):
            if len(node.args) > 1 or node.keywords:
                continue
            if node.args and not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, bool)):
                continue
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}",))
            if confidence is None:
                continue
            if confidence is Confidence.LOW and not _MODEL_NAME.search(facts.receiver_name(node)):
                continue
            mode = flag if not node.args else (bool(node.args[0].value) if flag else False)  # type: ignore[attr-defined]
            yield _diag("TMS335", facts.span(node),
                        f"{name}(): MindSpore switches training behaviour (dropout, batch statistics) with "
                        f"cell.set_train({mode})", torch_api=f"torch.nn.Module.{name}",
                        mindspore_api="mindspore.nn.Cell.set_train", confidence=confidence)
    for name in ("state_dict", "load_state_dict"):
        for node in facts.methods.get(name, ()):
            confidence = _name_confidence(facts, node, (f"torch.nn.Module.{name}", f"torch.optim.Optimizer.{name}"))
            if confidence is None:
                continue
            if name == "state_dict":
                how = ("save with mindspore.save_checkpoint(cell, path), or read cell.parameters_dict()")
                ms = "mindspore.save_checkpoint"
            else:
                how = ("load with mindspore.load_checkpoint(path) and mindspore.load_param_into_net(cell, params)")
                ms = "mindspore.load_param_into_net"
            yield _diag("TMS336", facts.span(node),
                        f"{name}(): {how}; parameter names differ from torch (BatchNorm running_mean/running_var "
                        f"are moving_mean/moving_variance, its weight/bias are gamma/beta), so torch checkpoints "
                        f"need a name mapping", torch_api=f"torch.nn.Module.{name}", mindspore_api=ms,
                        confidence=confidence)


# ------------------------------------------------------------------ 5. devices and precision
def _device_like(facts: _Facts, node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(_DEVICE_STRING.match(node.value))
    if isinstance(node, ast.Name):
        return bool(_DEVICE_TEXT.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_DEVICE_TEXT.search(node.attr))
    if isinstance(node, ast.Call):
        return facts.api_at(node, kinds=("call",)) == "torch.device"
    return False


def check_devices(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS341-TMS343: device moves and queries, data parallel wrappers, mixed precision."""
    found: list[Diagnostic] = []
    for call in facts.calls:
        api = call.api
        if call.kind == "attribute" and api != "torch.autocast":
            continue
        if api in _PARALLEL_APIS:
            found.append(_diag(
                "TMS342", call.span,
                f"{api}: MindSpore does not wrap the model; start processes with msrun, call "
                f"mindspore.communication.init() and set data parallel once with "
                f"mindspore.set_auto_parallel_context(parallel_mode='data_parallel', gradients_mean=True)",
                torch_api=api, mindspore_api="mindspore.set_auto_parallel_context", confidence=call.confidence))
        elif api == "torch.autocast" or _amp_entry_point(api):
            last = api.rpartition(".")[2]
            if last == "GradScaler":
                how = ("loss scaling in MindSpore is mindspore.amp.DynamicLossScaler or StaticLossScaler (scale the "
                       "loss in the forward function, unscale the gradients, check them with mindspore.amp.all_finite)")
                ms = "mindspore.amp.DynamicLossScaler"
            else:
                how = ("MindSpore sets mixed precision once on the network with "
                       "mindspore.amp.auto_mixed_precision(net, amp_level='O1'/'O2'/'O3') instead of an autocast region")
                ms = "mindspore.amp.auto_mixed_precision"
            found.append(_diag("TMS343", call.span, f"{api}: {how}", torch_api=api, mindspore_api=ms,
                               confidence=call.confidence))
        elif api == "torch.device" or (api.startswith("torch.cuda.") and not api.startswith("torch.cuda.amp.")
                                       and api not in _SEED_APIS):
            found.append(_diag(
                "TMS341", call.span,
                f"{api}: MindSpore has no per-tensor devices; choose the device once for the whole program with "
                f"mindspore.set_device('GPU'/'Ascend'/'CPU') and drop device handling",
                torch_api=api, mindspore_api="mindspore.set_device", confidence=call.confidence))
    if facts.imports_torch:
        for node in facts.methods.get("cuda", ()):
            if len(node.args) > 1:
                continue
            found.append(_diag(
                "TMS341", facts.span(node),
                ".cuda(): MindSpore places every tensor and Cell on the one device set with mindspore.set_device; "
                "remove the move", torch_api="torch.Tensor.cuda", mindspore_api="mindspore.set_device"))
        for node in facts.methods.get("to", ()):
            device = [a for a in node.args[:1] if _device_like(facts, a)]
            device += [kw.value for kw in node.keywords if kw.arg == "device"]
            if not device:
                continue
            found.append(_diag(
                "TMS341", facts.span(node),
                ".to(device): MindSpore places every tensor and Cell on the one device set with "
                "mindspore.set_device; remove the move (keep a dtype conversion as .astype)",
                torch_api="torch.Tensor.to", mindspore_api="mindspore.set_device"))
    # One finding per construct: drop a device finding nested in another (torch.device(... torch.cuda...)).
    device_spans = sorted({d.span for d in found if d.code == "TMS341"})
    nested = _nested_in(device_spans)
    seen: set[tuple[str, Span]] = set()
    for diag in sorted(found, key=lambda d: (d.span.start_line, d.span.start_col, -d.span.end_line, -d.span.end_col)):
        key = (diag.code, diag.span)
        if key in seen:
            continue
        if diag.code == "TMS341" and nested(diag.span):
            continue
        seen.add(key)
        yield diag


def _amp_entry_point(api: str) -> bool:
    """torch.amp.autocast, torch.cuda.amp.GradScaler, ...: not their methods (scaler.step) or private names."""
    for prefix in _AMP_PREFIXES:
        if api.startswith(prefix):
            rest = api[len(prefix):]
            return "." not in rest and not rest.startswith("_")
    return False


def _nested_in(spans: list[Span]) -> Callable[[Span], bool]:
    """A test "is this span inside another of `spans`" in one sweep: in (start, -end) order every span
    that could contain a span comes before it, so it is nested exactly when an earlier one reaches as
    far (a pairwise test made a file with thousands of .to(device) calls take minutes)."""
    nested: set[Span] = set()
    far: tuple[int, int] | None = None
    for span in sorted(set(spans), key=lambda s: (s.start_line, s.start_col, -s.end_line, -s.end_col)):
        end = (span.end_line, span.end_col)
        if far is not None and far >= end:
            nested.add(span)
        else:
            far = end
    return nested.__contains__


# ------------------------------------------------------------------ 6. data pipeline
def check_data_pipeline(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS351: torch.utils.data and torchvision data processing; TMS352: torch ops inside it."""
    data_classes = [c for c in facts.class_list if c.is_dataset or c.is_sampler]
    for cls in data_classes:
        base = next((b for b in cls.bases if b.startswith("torch.utils.data.")), "torch.utils.data.Dataset")
        ms = _DATA_TARGETS.get(base, "mindspore.dataset.GeneratorDataset")
        what = "sampler" if cls.is_sampler and not cls.is_dataset else "dataset"
        yield _diag("TMS351", facts.def_span(cls.node),
                    f"class {cls.name} is a torch {what} ({base}): data processing stays outside the network; "
                    f"in MindSpore wrap it in {ms} (a source class with __getitem__/__len__ that returns NumPy "
                    f"arrays) or use a mindspore.dataset loader", torch_api=base, mindspore_api=ms)
    for call in facts.calls:
        if call.kind != "call" or not call.api.startswith("torch.utils.data."):
            continue
        last = call.api.rpartition(".")[2]
        if not last[:1].isupper() and last not in ("random_split", "default_collate", "get_worker_info"):
            continue
        target = _DATA_TARGETS.get(call.api)
        if call.api.endswith("DataLoader"):
            how = ("MindSpore builds the pipeline from the dataset: "
                   "mindspore.dataset.GeneratorDataset(source, column_names, shuffle=...).batch(batch_size); "
                   "num_workers becomes num_parallel_workers")
        elif last.endswith("Sampler"):
            how = f"use {target or 'a mindspore.dataset sampler'} (pass it as sampler= to the MindSpore dataset)"
        else:
            how = "data processing belongs to mindspore.dataset (or NumPy) in MindSpore"
        yield _diag("TMS351", call.span, f"{call.api}: {how}", torch_api=call.api, mindspore_api=target,
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
        yield _diag("TMS351", facts.span(node),
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
                      and c.kind in ("call", "method") and c.confidence is Confidence.HIGH
                      and not c.api.startswith("torch.utils.data.")})
        if not ops:
            continue
        role = "collate function" if context not in data_functions else context.rpartition(".")[2]
        yield _diag("TMS352", facts.def_span(func),
                    f"{context} ({role}) runs torch ops: {_listing(ops)}; a MindSpore data pipeline works on NumPy "
                    f"arrays, so build samples with NumPy/PIL/OpenCV or mindspore.dataset transforms here",
                    torch_api=ops[0])


# ------------------------------------------------------------------ 7. training loop
_SKIP_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_calls(body: list[ast.stmt]) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
    """Method calls in `body` with the chain of statements above them, not entering nested definitions."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, []) for stmt in reversed(body)]
    while stack:
        node, chain = stack.pop()
        if isinstance(node, _SKIP_NESTED):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node, chain
        below = chain + [node] if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)) else chain
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, below))


@dataclass
class _Step:
    backward: list[ast.Call] = field(default_factory=list)
    step: list[tuple[ast.Call, list[ast.AST]]] = field(default_factory=list)
    zero_grad: list[ast.Call] = field(default_factory=list)


def _optimizer_step(facts: _Facts, node: ast.Call) -> bool:
    apis = {c.api for c in facts.by_span.get(facts.span(node), ())}
    if "torch.optim.Optimizer.step" in apis or any(a.startswith("torch.amp.GradScaler.") for a in apis):
        return True
    if any(a.startswith("torch.optim.lr_scheduler.") for a in apis):
        return False
    name = facts.receiver_name(node)
    return bool(_OPTIMIZER_NAME.search(name)) or "scaler" in name.lower()


def _step_facts(facts: _Facts, body: list[ast.stmt]) -> _Step:
    out = _Step()
    for node, chain in _own_calls(body):
        attr = node.func.attr  # type: ignore[attr-defined]
        if attr == "backward":
            out.backward.append(node)
        elif attr == "step" and _optimizer_step(facts, node):
            out.step.append((node, chain))
        elif attr == "zero_grad":
            out.zero_grad.append(node)
    return out


def _loops(body: list[ast.stmt]) -> Iterator[ast.For | ast.AsyncFor | ast.While]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SKIP_NESTED):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def check_training_loop(facts: _Facts) -> Iterator[Diagnostic]:
    """TMS361 (one per training loop or step function), TMS363 accumulation, TMS362/364/365 per call."""
    if facts.imports_torch and facts.methods.get("backward"):
        scopes: list[tuple[str, list[ast.stmt], ast.AST]] = [("<module>", facts.tree.body, facts.tree)]
        scopes += [(context, func.body, func) for context, func in facts.functions]
        for _context, body, owner in scopes:
            yield from _training_in_scope(facts, body, owner)
    for call in facts.calls:
        if call.kind not in ("call",) or call.api not in _CLIP_APIS:
            continue
        how = ("mindspore.ops.clip_by_global_norm(grads, max_norm)" if "norm" in call.api
               else "mindspore.ops.clip_by_value on each gradient")
        yield _diag("TMS362", call.span,
                    f"{call.api} clips the .grad fields in place; in MindSpore clip the gradient tuple returned by "
                    f"the value-and-grad function with {how} before optimizer(grads)",
                    torch_api=call.api, mindspore_api=how.partition("(")[0].partition(" ")[0],
                    confidence=call.confidence)
    scheduler_steps: set[Span] = set()
    for call in facts.calls:
        if call.api == "torch.optim.lr_scheduler.LRScheduler.step" and call.kind == "method":
            scheduler_steps.add(call.span)
    if facts.imports_torch:
        for node in facts.methods.get("step", ()):
            if _SCHEDULER_NAME.search(facts.receiver_name(node)) and not _optimizer_step(facts, node):
                scheduler_steps.add(facts.span(node))
    for span in sorted(scheduler_steps):
        yield _diag("TMS364", span,
                    "learning-rate scheduler stepped by hand: in MindSpore give the optimizer the schedule (a list "
                    "of per-step rates from mindspore.nn.piecewise_constant_lr / cosine_decay_lr, or a schedule "
                    "Cell such as mindspore.nn.CosineDecayLR), or keep stepping it by hand with "
                    "mindspore.experimental.optim.lr_scheduler",
                    torch_api="torch.optim.lr_scheduler.LRScheduler.step",
                    mindspore_api="mindspore.experimental.optim.lr_scheduler.LRScheduler")
    for call in facts.calls:
        if call.kind == "call" and call.api in _SEED_APIS:
            yield _diag("TMS365", call.span,
                        f"{call.api}: set the seed with mindspore.set_seed(seed) (it also seeds mindspore.dataset); "
                        f"in distributed training it must be set, with the same value on every device, so all "
                        f"replicas start from the same weights", torch_api=call.api,
                        mindspore_api="mindspore.set_seed", confidence=call.confidence)


def _training_in_scope(facts: _Facts, body: list[ast.stmt], owner: ast.AST) -> Iterator[Diagnostic]:
    loops = list(_loops(body))
    qualifying: list[tuple[ast.For | ast.AsyncFor | ast.While, _Step]] = []
    for loop in loops:
        step = _step_facts(facts, loop.body + loop.orelse)
        if step.backward and (step.step or step.zero_grad):
            qualifying.append((loop, step))
    reported: list[ast.AST] = []
    inner_loops = {id(sub) for loop, _ in qualifying for sub in _loops(loop.body + loop.orelse)}
    for loop, step in qualifying:
        if any(id(other) in inner_loops and _contains(loop, other) for other, _ in qualifying if other is not loop):
            continue  # a loop inside this one is the training loop
        reported.append(loop)
        yield _training_diag(facts, facts.header_span(loop), step)
        yield from _accumulation(facts, step)
    if qualifying or isinstance(owner, ast.Module):
        return
    step = _step_facts(facts, body)
    if step.backward and (step.step or step.zero_grad) and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not any(_contains(loop, node) for loop in loops for node in step.backward):
            yield _training_diag(facts, facts.def_span(owner), step, function=owner.name)


def _contains(outer: ast.stmt | ast.expr, inner: ast.stmt | ast.expr) -> bool:
    if outer is inner:
        return False
    o_end = (outer.end_lineno or outer.lineno, outer.end_col_offset or 0)
    i_end = (inner.end_lineno or inner.lineno, inner.end_col_offset or 0)
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and i_end <= o_end


def _training_diag(facts: _Facts, span: Span, step: _Step, function: str | None = None) -> Diagnostic:
    parts = [".backward()"]
    if step.step:
        parts.append("optimizer.step()")
    if step.zero_grad:
        parts.insert(0, "zero_grad()")
    where = f"{function}() is a training step" if function else "training loop"
    return _diag("TMS361", span,
                 f"{where} written as {' / '.join(parts)}: MindSpore has no backward(); build "
                 f"grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters) once, then each step "
                 f"run loss, grads = grad_fn(inputs, labels) and optimizer(grads) (gradients do not accumulate, so "
                 f"zero_grad goes away)", torch_api="torch.Tensor.backward", mindspore_api="mindspore.value_and_grad")


def _accumulation(facts: _Facts, step: _Step) -> Iterator[Diagnostic]:
    """optimizer.step() under a condition inside the loop while backward runs every iteration."""
    for node, chain in step.step:
        guards = [c for c in chain if isinstance(c, ast.If)]
        if not guards:
            continue
        guard = guards[-1]
        if any(_contains(guard, b) for b in step.backward):
            continue
        yield _diag("TMS363", facts.span(node),
                    "gradient accumulation (backward every iteration, optimizer.step() only when the condition "
                    "holds): MindSpore gradients do not accumulate; add the gradient tuples yourself (for example "
                    "with mindspore.ops.HyperMap over accumulator Parameters) and call optimizer(accumulated) every "
                    "N steps", torch_api="torch.optim.Optimizer.step", mindspore_api="mindspore.value_and_grad")
        return


# ------------------------------------------------------------------ entry point
CHECKS = (check_second_order, check_sparse, check_containers, check_module_structure, check_devices,
          check_data_pipeline, check_training_loop)


def readiness_diagnostics(tree: ast.Module, calls: list[ApiCall], text: str, table: MappingTable,
                          version: tuple[int, ...], positions: SourceText | None = None,
                          device: str | None = DEFAULT_DEVICE) -> list[Diagnostic]:
    """Every readiness finding of one file (pure: the tree, the resolved calls and the text)."""
    facts = _Facts(tree, calls, text, table, version, positions or SourceText(text), device)
    out: list[Diagnostic] = []
    for check in CHECKS:
        out.extend(check(facts))
    return out
