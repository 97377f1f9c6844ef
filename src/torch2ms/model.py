"""Frozen data types shared by every part of torch2ms.

`Diagnostic` is the one currency: the text, JSON, SARIF and HTML reports, the
language server and ``--fix`` all consume it, so a finding looks the same
everywhere. Nothing in this module does I/O or analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, assert_never

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T", bound="DataclassInstance")


def _pickled_by_fields(cls: type[_T]) -> type[_T]:
    """Pickle as (class, field values): loading is about three times faster than with
    dataclasses' generic state for slotted classes: the results cache holds ~10^5 of them, and the
    compiled mapping table (`mappings.load_table`) ~8,000, in the entries a scan looks up (`mappings.Entries`)."""
    names = tuple(f.name for f in fields(cls))

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return (cls, tuple(getattr(self, name) for name in names))

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


class Category(str, Enum):
    """What a torch API use means for a MindSpore port."""

    EQUIVALENT = "equivalent"
    DIFF_PARAMS = "diff_params"
    MISSING = "missing"
    DYNAMIC_SHAPE = "dynamic_shape"
    UNMAPPED = "unmapped"
    UNCERTAIN = "uncertain"  # a method call that may not be torch at all (TMS105)
    TYPE_REFERENCE = "type_reference"  # a torch type named in an annotation, isinstance or base class (TMS106)
    READINESS = "readiness"
    PORT_CHECK = "port_check"  # the output read as MindSpore code (TMS4xx)
    FILE_ERROR = "file_error"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


class Confidence(str, Enum):
    HIGH = "high"
    LOW = "low"


class ValueEnum(str, Enum):
    """A str-valued enum whose str() and format() are its value (as Python 3.11's StrEnum), so
    messages, descriptors and serialized forms read the same as the plain strings they replace."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class FactKind(ValueEnum):
    """How one parameter differs between a torch API and its MindSpore target (schema: param.kind).

    renamed, dropped, default_differs, unsupported_values, added_required, semantics_differ,
    unsupported_inputs (inputs torch takes and MindSpore raises for: the program stops, nothing silent;
    with a torch name: values of that parameter, reported where a call passes it), translated (another
    MindSpore parameter with other values: `values` holds [torch value, MindSpore value] pairs, e.g.
    unbiased=False -> ddof=0), retyped (MindSpore takes only another type where torch also takes an int:
    `values` is ["tuple"], an int d written (d,), ["float"], d written d.0, or ["list"], a generator or tuple
    v written list(v))."""

    RENAMED = "renamed"
    DROPPED = "dropped"
    DEFAULT_DIFFERS = "default_differs"
    UNSUPPORTED_VALUES = "unsupported_values"
    ADDED_REQUIRED = "added_required"
    SEMANTICS_DIFFER = "semantics_differ"
    UNSUPPORTED_INPUTS = "unsupported_inputs"
    TRANSLATED = "translated"
    RETYPED = "retyped"


class Device(ValueEnum):
    """A device MindSpore runs on (schema: device)."""

    CPU = "cpu"
    GPU = "gpu"
    ASCEND = "ascend"


class WrittenAs(ValueEnum):
    """How a target's form is written for a torch method (schema: target.written_as). COPY: an in-place
    torch method as a copy of this out-of-place form's result into the receiver (`x.abs_()` ->
    `x.copy_(x.abs())`); LIKE: a method building a new tensor as this function with the receiver's dtype
    (`x.new_full(s, v)` -> `mindspore.ops.full(s, v, dtype=x.dtype)`)."""

    COPY = "copy"
    LIKE = "like"


class ExampleKind(ValueEnum):
    """How an example's torch code uses the API (schema: example.kind)."""

    FUNCTION = "function"
    METHOD = "method"
    LAYER = "layer"
    LOSS = "loss"
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    INPLACE = "inplace"


class Returns(ValueEnum):
    """What an API returns, for data flow (schema: entry.returns)."""

    TENSOR = "tensor"
    INSTANCE = "instance"
    OTHER = "other"


class ShapeResult(ValueEnum):
    """What an API's result is to the data flow of shapes (schema: entry.shape_result; torch2ms.dynamic_shape):
    sizes, values copied to the host, an elementwise or reduced boolean, the input's shape and dtype, or only its
    shape; a tensor built from the data or from the sizes its arguments give (an empty literal: a 1-D tensor with no
    elements)."""

    SHAPE = "shape"
    SYNC = "sync"
    BOOL = "bool"
    BOOL_REDUCTION = "bool_reduction"
    KEEPS = "keeps"
    KEEPS_SHAPE = "keeps_shape"
    FROM_DATA = "from_data"
    FROM_SIZES = "from_sizes"


class StructureRule(ValueEnum):
    """A structural rewrite `torch2ms migrate` does at a call or a name (schema: structure.rule; the rules are
    described in scripts/mapping_structure.yaml and done by `torch2ms.migrate.transform.CallSites`)."""

    INITIALIZER = "initializer"
    ALIAS = "alias"
    CELL_METHOD = "cell_method"
    ALL_CELLS = "all_cells"
    BUFFER = "buffer"
    SWAP_AXES = "swap_axes"
    POSITIONAL_IN_GRAPH = "positional_in_graph"
    UNWRAP_MODEL = "unwrap_model"
    NO_TAPE = "no_tape"
    CELL_CONTAINER = "cell_container"


class Effort(ValueEnum):
    """How much work a finding is as the table states it (schema: entry.effort; torch2ms.effort)."""

    REMOVE = "remove"
    AUTOMATIC = "automatic"
    MANUAL = "manual"
    BLOCKER = "blocker"


class CallKind(ValueEnum):
    """How a torch API is used: called, a method called on a receiver (Tensor or instance method), or
    read as an attribute, or named as a type (nothing runs: `x: torch.Tensor`, `isinstance(m, nn.Conv2d)`,
    `class Net(nn.Module)`). The value is the serialized form (cache, JSON)."""

    CALL = "call"
    METHOD = "method"
    ATTRIBUTE = "attribute"
    TYPE = "type"  # a type reference: an annotation, an isinstance/issubclass target, a base class


@_pickled_by_fields
@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A source range: 1-based lines, 0-based columns counted in code points."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def to_dict(self) -> dict[str, int]:
        return {
            "start_line": self.start_line,
            "start_col": self.start_col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a call as the resolver saw it."""

    keyword: str | None  # None for a positional argument
    span: Span  # the value
    keyword_span: Span | None = None  # the keyword name, for renames
    is_const: bool = False  # a compile-time constant (after constant propagation)
    value: Any = None  # the constant's value when is_const
    is_tensor: bool = False
    starred: bool = False  # *args or **kwargs
    tag: str = ""  # where the value comes from, for dynamic-shape rules (dynamic_shape.STATIC/DATA/BOOL/DYN)
    # `**mapping` whose keys a dict display or dict(...) call in sight spells: (key, whether its value is None)
    keys: tuple[tuple[str, bool], ...] = ()


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class ApiCall:
    """One resolved use of a torch API in a source file."""

    api: str  # fully qualified torch name, Tensor methods as torch.Tensor.name
    span: Span  # the whole expression (call or attribute)
    kind: CallKind
    confidence: Confidence = Confidence.HIGH
    func_span: Span | None = None  # the callee expression, for rewrites
    name_span: Span | None = None  # the last name of the callee (e.g. "view")
    args: tuple[Arg, ...] = ()
    in_network: bool = False  # inside the network execution graph (forward & callees)
    context: str = ""  # enclosing function, e.g. "Net.forward"


def arg_for(args: Sequence[Arg], name: str | None, position: int | None) -> Arg | None:
    """The argument passed for parameter `name`: by keyword, or at positional index `position`
    (a method's receiver not counted); None when not passed or hidden behind a `*args`."""
    for arg in args:
        if arg.keyword is not None and arg.keyword == name:
            return arg
    if position is not None:
        positional = [a for a in args if a.keyword is None]
        if any(a.starred for a in positional[: position + 1]):
            return None
        if position < len(positional):
            return positional[position]
    return None


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class ParamFact:
    """How one parameter differs between the torch API and its MindSpore target."""

    kind: FactKind
    torch: str | None = None
    ms: str | None = None
    torch_default: Any = None
    ms_default: Any = None
    values: tuple[Any, ...] = ()
    note: str = ""
    position: int | None = None  # torch's positional index of the parameter (receiver not counted)
    default_from: str | None = None  # torch's default is the value of this other torch parameter
    from_position: int | None = None  # default_from's positional index
    # The generated verify cases this fact explains (their tags, e.g. "dtype=bool", "dim<0"):
    # a case with one of these tags may disagree without failing the entry (docs/verify.md).
    covers: tuple[str, ...] = ()
    # (torch's result dtype, MindSpore's) where the result's dtype differs (a semantics_differ fact
    # without a parameter): the fix casts the result back to torch's
    result_dtype: tuple[str, str] | None = None
    # a translated value as an expression of torch's, "{}" standing for it ("1 - {}")
    form: str | None = None
    # renamed: MindSpore's parameter is not at torch's position, so a value passed by position goes by keyword
    by_keyword: bool = False
    # unsupported_values, semantics_differ: the Python types of the literals the fact is about besides `values`
    # ("float": any float literal, "tuple": any tuple display), by their type's name
    types: tuple[str, ...] = ()
    # unsupported_values: MindSpore raises for the values (never another result), so a value known only at run
    # time may be written
    raises: bool = False

    def passed(self, args: Sequence[Arg]) -> Arg | None:
        """The argument a call passes for the fact's torch parameter, by keyword or by position; a fact of
        `kind` translated with `types` takes a positional argument only when it is a literal of those types
        (the overload torch picks by the value: `var_mean(x, True)` passes unbiased, `var_mean(x, 1)` dim)."""
        if self.torch is None:
            return None
        arg = arg_for(args, self.torch, self.position)
        if arg is not None and self.kind is FactKind.TRANSLATED and self.types and arg.keyword is None \
                and not (arg.is_const and type(arg.value).__name__ in self.types):
            return None
        return arg

    def matches(self, value: Any) -> bool:
        """Whether a literal the call passes is one the fact names: one of its `values` (a bool only where the
        value is a bool: True is not the dimension 1) or of one of its `types`."""
        if type(value).__name__ in self.types:
            return True
        return any(v == value and isinstance(v, bool) == isinstance(value, bool) for v in self.values)

    @property
    def only_degenerate_inputs(self) -> bool:
        """True when the fact covers only empty and 0-d inputs: a program that passes ordinary tensors
        computes the same. (A difference on other inputs, e.g. non-contiguous tensors or another
        dtype, can change a real program's result silently.)"""
        return bool(self.covers) and all(tag in DEGENERATE_INPUT_TAGS for tag in self.covers)

    def describe(self) -> str:
        match self.kind:
            case FactKind.RENAMED if self.torch == self.ms:
                return f"'{self.torch}' goes by keyword in MindSpore (another parameter has its position)"
            case FactKind.RENAMED:
                return f"'{self.torch}' is '{self.ms}' in MindSpore"
            case FactKind.DROPPED:
                return f"'{self.torch}' has no MindSpore counterpart"
            case FactKind.DEFAULT_DIFFERS:
                torch_default = f"'{self.default_from}'" if self.default_from else repr(self.torch_default)
                return (
                    f"default of '{self.torch or self.ms}' differs "
                    f"(torch {torch_default}, MindSpore {self.ms_default!r})"
                )
            case FactKind.UNSUPPORTED_VALUES:
                vals = ", ".join([repr(v) for v in self.values] + [f"any {t}" for t in self.types])
                text = f"'{self.torch}' values not supported in MindSpore: {vals}"
                return text + (f" ({self.note})" if self.note and self.types else "")
            case FactKind.TRANSLATED if self.form is not None and self.ms == self.torch:
                return f"'{self.torch}' means another value in MindSpore: {self.form.format(self.torch)}"
            case FactKind.TRANSLATED if self.form is not None:
                return f"'{self.torch}' is '{self.ms}' in MindSpore, written as {self.form.format(self.torch)}"
            case FactKind.TRANSLATED:
                pairs = ", ".join(f"{t!r} -> {m!r}" for t, m in self.values)
                return f"'{self.torch}' is '{self.ms}' in MindSpore, with other values ({pairs})"
            case FactKind.RETYPED if "list" in self.values:
                return f"'{self.torch}' must be a list in MindSpore (the fix writes a generator or tuple v as list(v))"
            case FactKind.RETYPED if "tuple" in self.values:
                return f"'{self.torch}' must be a tuple in MindSpore (the fix writes an int d as (d,))"
            case FactKind.RETYPED:
                return f"'{self.torch}' must be a float in MindSpore (the fix writes an int n as n.0)"
            case FactKind.ADDED_REQUIRED:
                return f"MindSpore requires '{self.ms}'"
            case FactKind.UNSUPPORTED_INPUTS:
                return self.note or "MindSpore raises for some inputs torch takes"
            case FactKind.SEMANTICS_DIFFER:
                name = self.torch or self.ms
                if name is None:
                    return self.note or "behaves differently"
                return f"'{name}' behaves differently" + (f": {self.note}" if self.note else "")
            case _:
                assert_never(self.kind)


# Tags of the generated verify cases (torch2ms/verify/generate.py) that vary the inputs, not the call;
# with "dtype=..." and "ints=...".
DEGENERATE_INPUT_TAGS = frozenset({"0-d", "empty"})

DEVICES = tuple(device.value for device in Device)  # plain strings, for option choices
DEFAULT_DEVICE = Device.CPU


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Rewrite:
    """A rewrite that code does (a transform of `torch2ms.transforms`), named by the tables: the schema's
    ``rewrite: {transform: NAME, ...arguments}`` of an entry or of one of its targets. `args` are the
    arguments as sorted (name, value) pairs, lists as tuples and mappings as pairs, so the value is hashable."""

    transform: str
    args: tuple[tuple[str, Any], ...] = ()

    def arg(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.args if key == name), default)


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Structure:
    """A structural rewrite of `torch2ms migrate` named by the tables (the schema's ``structure: {rule: NAME,
    ...arguments}`` of an entry), with its arguments as `Rewrite` keeps them."""

    rule: StructureRule
    args: tuple[tuple[str, Any], ...] = ()

    def arg(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.args if key == name), default)


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class AdapterParam:
    """One of torch's constructor parameters of a layer class (schema: adapter.params)."""

    name: str
    required: bool = True
    default: Any = None
    kw_only: bool = False


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Adapter:
    """The torch-signature layer `torch2ms migrate` writes for a layer class into its support module
    (schema: `adapter`; torch2ms.migrate.support): torch's constructor parameters and the facts about torch's
    layer that the parameter facts do not hold."""

    params: tuple[AdapterParam, ...]
    tuples: tuple[str, ...] = ()  # parameters torch stores as a tuple (of `rank` items where rank is given)
    rank: int | None = None
    values: tuple[tuple[str, tuple[tuple[Any, Any], ...]], ...] = ()  # parameter -> ((torch value, MindSpore's), ...)


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Target:
    """The MindSpore API a torch API maps to, for a range of MindSpore versions and for devices.

    `devices`: where MindSpore runs this form (its documented platforms, corrected by measurement);
    `no_kernel`: where `torch2ms verify` found no kernel for it; `verified`: where `torch2ms verify`
    ran it as the fix writes it and every case agreed (the last two from src/torch2ms/data/verification.json).
    """

    api: str
    since: tuple[int, ...] | None = None  # inclusive
    until: tuple[int, ...] | None = None  # exclusive: the last version it is the preferred form
    category: Category | None = None  # overrides the entry's category for this target
    params: tuple[ParamFact, ...] = ()
    devices: tuple[Device, ...] = ()
    no_kernel: tuple[Device, ...] = ()
    verified: tuple[Device, ...] = ()
    written_as: WrittenAs | None = None
    rewrite: Rewrite | None = None  # a transform the fix applies for this form
    # a layer's call: torch's forward keyword -> MindSpore's construct parameter at its position
    forward: tuple[tuple[str, str], ...] = ()
    # a layer's forward parameters a torch call may leave out: (torch's name, its position, the default's form)
    forward_defaults: tuple[tuple[str, int, str], ...] = ()
    # a layer's attributes: torch's name -> this class's name for it, or None where the class has none
    attributes: tuple[tuple[str, str | None], ...] = ()
    # torch's attributes its forward reads that this class holds by the same name and reads only when it is built
    built_attributes: tuple[str, ...] = ()
    # torch's attributes this class holds by the same name with another value: (name, what each side gave)
    differing_attributes: tuple[tuple[str, str], ...] = ()

    def differing(self, name: str) -> str | None:
        """What torch's and this class's values of the attribute `name` were (measured), where they differ."""
        return next((note for attr, note in self.differing_attributes if attr == name), None)

    def attribute(self, name: str) -> tuple[bool, str | None]:
        """(whether the facts name torch's attribute `name`, the class's name for it or None where it has none)."""
        for torch_name, ms_name in self.attributes:
            if torch_name == name:
                return True, ms_name
        return False, None

    def applies_to(self, version: tuple[int, ...]) -> bool:
        if self.since is not None and version < self.since:
            return False
        if self.until is not None and version >= self.until:
            return False
        return True

    def exists_in(self, version: tuple[int, ...]) -> bool:
        """Whether the form can be written for `version` at all: an older spelling (with `until`)
        stays in later releases (the tables check every target against the installed MindSpore)."""
        return self.since is None or version >= self.since

    def runs_on(self, device: str) -> bool | None:
        """True: documented or measured to run on `device`; False: no kernel there, or documented for
        other devices only; None: nothing is stated."""
        if device in self.verified:
            return True
        if device in self.no_kernel:
            return False
        if not self.devices:
            return None
        return device in self.devices


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class TargetChoice:
    """The form the scanner and the fix use for one entry, MindSpore version and device."""

    target: Target | None  # what to write (None: no target for the version)
    preferred: Target | None  # the version's first target, whatever the device
    device: str | None
    verified: bool = False  # `torch2ms verify` ran this form on the device and every case agreed

    @property
    def fallback(self) -> bool:
        """True when the preferred form does not run on the device and another form is used."""
        return self.target is not None and self.preferred is not None and self.target is not self.preferred

    def device_note(self) -> str:
        """What the device changes, for messages ("" when there is nothing to say)."""
        if self.device is None or self.target is None:
            return ""
        where = "Ascend" if self.device == "ascend" else self.device.upper()
        if self.fallback and self.preferred is not None:
            if self.device in self.preferred.no_kernel:
                why = f"{self.preferred.api} has no {where} kernel"
            elif self.preferred.runs_on(self.device) is False:
                why = f"{self.preferred.api} is not documented for {where}"
            else:
                why = f"{self.preferred.api} is not verified on {where}"
            how = "verified on" if self.verified else "documented for"
            return f"{why}; {self.target.api} is {how} {where}"
        if self.device in self.target.no_kernel:
            return f"no form of it has a {where} kernel in MindSpore"
        if self.target.runs_on(self.device) is False:
            return f"no form of it is documented for {where}"
        return ""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Example:
    """Runnable torch code and its MindSpore counterpart."""

    torch: str
    mindspore: str
    inputs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # tolerances, seeds, notes

    @property
    def kind(self) -> ExampleKind:
        """How the torch code uses the API (the schema's `kind`; a function call where none is stated)."""
        return ExampleKind(self.extra.get("kind") or ExampleKind.FUNCTION)


class DynRule(ValueEnum):
    """How an argument makes a call's result shape depend on data (`dynamic_shape.args[].rule`)."""

    COUNT = "count"  # a size or count (topk's k): dynamic when read from tensor values
    INDEX = "index"  # an index tensor (gather's index): dynamic when the index's own shape is
    DIM = "dim"  # an axis: dynamic when read from tensor values
    BOUND = "bound"  # a slice bound (narrow's start and length): dynamic when not a constant


class DynCondition(ValueEnum):
    """When an `always` dynamic-shape fact holds (`dynamic_shape.when`); none given: on every call."""

    ONE_ARGUMENT = "one_argument"  # the call has exactly one argument: torch.where(condition)
    TENSOR_ARGUMENT = "tensor_argument"  # the first of `args` is passed a tensor: repeat_interleave's repeats


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class DynamicArg:
    """An argument whose value decides the result's shape."""

    name: str
    position: int | None  # its positional index (receiver not counted); None: keyword only
    rule: DynRule
    varargs: bool = False  # every positional argument from `position` on (x.permute(2, 0, 1))


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class DynamicShape:
    """When an API makes a shape depend on data (`dynamic_shape:` of an entry)."""

    always: bool = False  # the result's shape always depends on the input's values (nonzero)
    when: tuple[DynCondition, ...] = ()  # `always` only when one of these holds
    static_with: tuple[str, ...] = ()  # keywords that fix the result's shape (output_size=)
    args: tuple[DynamicArg, ...] = ()  # arguments judged when the call is not always dynamic
    what: str = ""  # how the message names the dynamic form ("with one argument")
    remedy: str = ""  # what to write instead, for an always-dynamic call
    note: str = ""

    @property
    def unconditional(self) -> bool:
        """Always dynamic, whatever the arguments."""
        return self.always and not self.when and not self.static_with


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class WeightParam:
    """How one tensor of a torch layer's state_dict is stored by a MindSpore class (a weight fact).

    `torch` and `ms` are names relative to the layer; `{l}`-style placeholders stand for a
    number (an RNN's layer index). `ms` None: MindSpore has no such tensor (`note` says why).
    `torch` None: a MindSpore-only parameter that keeps its initial value. `layer`/`ms_layer`:
    the names are a sub-layer's prefix, whose own facts apply below it. `transform`: how the
    tensor changes on the way (``{"unsqueeze": 2}``, ``{"transpose": [1, 0]}``).
    """

    torch: str | None
    ms: str | None
    transform: tuple[tuple[str, Any], ...] = ()
    layer: str | None = None
    ms_layer: str | None = None
    note: str = ""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class WeightForm:
    """The weight facts of a torch layer for one MindSpore class that stands for it."""

    ms: str
    params: tuple[WeightParam, ...] = ()
    example: Example | None = None  # a layer example that builds this form (else an entry example does)
    note: str = ""

    def renamed(self) -> dict[str, str]:
        """The layer's own tensors (torch name -> MindSpore name) that the MindSpore class names otherwise
        (`m.weight` is `m.gamma` in a mindspore.nn.BatchNorm2d); the names with a number in them (an RNN's
        layers) and those of sub-layers are left out."""
        return {p.torch: p.ms for p in self.params
                if p.torch and p.ms and p.torch != p.ms and p.layer is None and "{" not in p.torch}

    def tensors(self) -> frozenset[str]:
        """The names of the MindSpore class's own tensors (`gamma`, `moving_mean` of a BatchNorm2d); those of
        sub-layers and the numbered ones (an RNN's layers) are left out."""
        return frozenset(p.ms for p in self.params if p.ms and p.layer is None and "{" not in p.ms)


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class MappingEntry:
    api: str
    category: Category
    targets: tuple[Target, ...] = ()
    note: str = ""
    doc: str | None = None
    examples: tuple[Example, ...] = ()
    dynamic_shape: DynamicShape | None = None
    shape_result: ShapeResult | None = None  # what the result is to the shape data flow
    inplace_of: str | None = None
    returns: Returns | None = None
    not_runnable: str = ""  # why no example can run where verify runs (schema: not_runnable)
    source: str = ""  # "file.yaml:line" where the entry is defined
    weights: tuple[WeightForm, ...] = ()  # parameter-name facts per MindSpore class (layers only)
    rewrite: Rewrite | None = None  # a transform the fix applies to every use of the entry
    structure: Structure | None = None  # a structural rewrite of migrate (torch2ms.migrate.transform)
    effort: Effort | None = None  # remove, automatic, manual or blocker when the table states it (torch2ms.effort)
    adapter: Adapter | None = None  # the torch-signature layer of migrate's support module (torch2ms.migrate.support)

    def weight_form(self, ms_class: str) -> WeightForm | None:
        return next((form for form in self.weights if form.ms == ms_class), None)

    def choose(self, version: tuple[int, ...], device: str | None) -> TargetChoice:
        """The target for this MindSpore version and device: THE choice the scanner, the fix,
        the reports and `torch2ms verify` share (documented in docs/verify.md).

        The preferred form is the version's first target. On a device, the first form that
        exists in the version and was verified there wins (preferred order: the version's
        targets first, then older spellings); else the first not known to fail there (its
        documented or measured devices include it, or state nothing); else the preferred form. `device=None`: the preferred form, whatever runs.
        """
        preferred = next((t for t in self.targets if t.applies_to(version)), None)
        if device is None or preferred is None:
            return TargetChoice(preferred, preferred, device)
        order = [t for t in self.targets if t.applies_to(version)] + \
            [t for t in self.targets if not t.applies_to(version) and t.exists_in(version)]
        for target in order:
            if device in target.verified:
                return TargetChoice(target, preferred, device, verified=True)
        for target in order:
            if target.runs_on(device) is not False:  # runs there, or nothing is stated against it
                return TargetChoice(target, preferred, device)
        return TargetChoice(preferred, preferred, device)

    def renamed_tensor(self, target: Target, name: str) -> str | None:
        """The name `target`'s class gives the layer's own tensor torch calls `name` (the weight facts: `weight` is
        `gamma` in a mindspore.nn.BatchNorm2d), where it names it otherwise; else None."""
        return next((renamed[name] for form in self.weights if form.ms == target.api
                     and name in (renamed := form.renamed())), None)

    def target_for(self, version: tuple[int, ...], device: str | None) -> Target | None:
        return self.choose(version, device).target

    def category_for(self, version: tuple[int, ...], device: str | None) -> Category:
        """The entry's category for the version and device: missing where no target exists, or where
        the form for the device was measured to have no kernel there (nothing runnable to write)."""
        return self.category_of(self.choose(version, device))

    def category_of(self, choice: TargetChoice) -> Category:
        """The entry's category where `choice` (this entry's) is the form written."""
        if self.category is Category.MISSING:
            return Category.MISSING
        target = choice.target
        if target is None or (choice.device is not None and choice.device in target.no_kernel):
            return Category.MISSING
        return target.category or self.category


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text of `span` with `text` (an insertion when the span is empty)."""

    span: Span
    text: str


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    category: Category
    span: Span
    message: str
    torch_api: str | None = None
    mindspore_api: str | None = None
    fix: Fix | None = None
    doc_url: str | None = None
    confidence: Confidence = Confidence.HIGH
    # what a trace of a run says (scan --trace, torch2ms/trace.py): "" (no trace), "confirmed" (the call ran),
    # "runtime_only" (only the trace saw the call), "shape_varied" (the output shape varied at runtime)
    runtime: str = ""

    def sort_key(self) -> tuple[int, int, str]:
        return (self.span.start_line, self.span.start_col, self.code)

    def with_fix(self, fix: Fix | None) -> Diagnostic:
        """This finding with `fix`: `dataclasses.replace(self, fix=fix)`, which costs several times as much
        (a scan does this for every finding it fixes)."""
        return Diagnostic(self.code, self.severity, self.category, self.span, self.message, self.torch_api,
                          self.mindspore_api, fix, self.doc_url, self.confidence, self.runtime)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "category": self.category.value,
            "confidence": self.confidence.value,
            "message": self.message,
            "span": self.span.to_dict(),
            "torch_api": self.torch_api,
            "mindspore_api": self.mindspore_api,
            "doc_url": self.doc_url,
            "fix": None,
        }
        if self.runtime:
            out["runtime"] = self.runtime
        if self.fix is not None:
            out["fix"] = {
                "title": self.fix.title,
                "safe": self.fix.safe,
                "edits": [{"span": e.span.to_dict(), "text": e.text} for e in self.fix.edits],
            }
        return out


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class ScopeFacts:
    """What the project-wide network-scope pass (project_graph.py) needs from one file.

    Contexts are function names as the resolver writes them ("helper", "Net.forward");
    a callee is a context of the same file, "Cls.method" (looked up through the class's
    bases), or "@" + an import reference ("@.ops.helper", "@pkg.utils.f": leading dots
    are a relative import's level). Nothing here depends on where the file lies.
    """

    roots: tuple[tuple[str, tuple[str, ...]], ...] = ()  # network contexts -> callees outside the file
    edges: tuple[tuple[str, tuple[str, ...]], ...] = ()  # other contexts -> callees (pruned to what matters)
    classes: tuple[tuple[str, tuple[str, ...], tuple[str, ...], bool], ...] = ()  # name, bases, own methods, nn.Module
    imports: tuple[tuple[str, str], ...] = ()  # module-level project imports: local name -> "@" reference
    # context -> its findings were it network code, and the (span, TMS25x code) of the findings they replace
    latent: tuple[tuple[str, tuple[Diagnostic, ...], tuple[tuple[Span, str], ...]], ...] = ()
    # data flow across files (dataflow.py): descriptors of what functions return, of class attributes and
    # of module-level names, and the calls whose API only other files decide: (receiver symbol, member,
    # low confidence without an answer, the noqa codes of its line or None, the call without its API)
    returns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    attrs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    pending: tuple[tuple[str, str, bool, tuple[str, ...] | None, ApiCall], ...] = ()
    # calls of functions of other files: (callee descriptor, positional and keyword argument descriptors,
    # whether a *args or **kwargs may pass more)
    arguments: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], bool], ...] = ()


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    diagnostics: tuple[Diagnostic, ...] = ()
    lines: int = 0
    scope: ScopeFacts | None = field(default=None, compare=False, repr=False)  # for project_graph.py

    @property
    def error(self) -> Diagnostic | None:
        """The file-level error (syntax, encoding, I/O) when the file could not be analysed."""
        for diag in self.diagnostics:
            if diag.category is Category.FILE_ERROR:
                return diag
        return None


# What a "use" is, in every output (--statistics, the JSON and HTML reports, readiness): a finding about
# torch code that runs, one per call site or read (`engine.one_per_use`): an equivalent, different-
# parameters, missing, unmapped API or a dynamic-shape risk. Not uses: a torch type named where nothing
# runs (TMS106, type_reference), a method call whose receiver is not proven a tensor (TMS105,
# uncertain), the readiness checks (TMS3xx) and file errors.
USE_CATEGORIES: tuple[str, ...] = ("missing", "dynamic_shape", "unmapped", "diff_params", "equivalent")


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class ScanSummary:
    """Counts over a scan. `by_api` counts uses (`USE_CATEGORIES`: distinct call sites per torch API), not
    findings; `uses` all of them (with dynamic-shape findings that name no API: a boolean-mask index, a
    branch on tensor values); `fixable` the findings with a safe fix, `unsafe_fixable` those with only an
    unsafe one."""

    files: int
    files_failed: int
    lines: int
    diagnostics: int
    by_code: dict[str, int]
    by_category: dict[str, int]
    by_api: dict[str, int]
    by_severity: dict[str, int] = field(default_factory=dict)
    fixable: int = 0
    unsafe_fixable: int = 0

    @property
    def uses(self) -> int:
        return sum(self.by_category.get(c, 0) for c in USE_CATEGORIES)

    @classmethod
    def of(cls, results: Iterable[FileResult]) -> ScanSummary:
        return cls.combine(cls.of_file(result) for result in results)

    @classmethod
    def of_file(cls, result: FileResult) -> ScanSummary:
        by_code: dict[str, int] = {}
        by_category: dict[str, int] = {}
        by_severity: dict[str, int] = {}
        uses: set[tuple[str, int, int]] = set()
        fixable = unsafe = 0
        for diag in result.diagnostics:
            by_code[diag.code] = by_code.get(diag.code, 0) + 1
            by_category[diag.category.value] = by_category.get(diag.category.value, 0) + 1
            by_severity[diag.severity.value] = by_severity.get(diag.severity.value, 0) + 1
            if diag.torch_api and diag.category.value in USE_CATEGORIES:
                uses.add((diag.torch_api, diag.span.start_line, diag.span.start_col))
            if diag.fix is not None and diag.fix.edits:
                if diag.fix.safe:
                    fixable += 1
                else:
                    unsafe += 1
        by_api: dict[str, int] = {}
        for api, _, _ in uses:
            by_api[api] = by_api.get(api, 0) + 1
        return cls(1, int(result.error is not None), result.lines, len(result.diagnostics),
                   by_code, by_category, by_api, by_severity, fixable, unsafe)

    @classmethod
    def combine(cls, parts: Iterable[ScanSummary]) -> ScanSummary:
        """The summary of a scan from the summaries of its parts (e.g. one per file)."""
        files = failed = lines = total = fixable = unsafe = 0
        by_code: dict[str, int] = {}
        by_category: dict[str, int] = {}
        by_api: dict[str, int] = {}
        by_severity: dict[str, int] = {}
        for part in parts:
            files += part.files
            failed += part.files_failed
            lines += part.lines
            total += part.diagnostics
            fixable += part.fixable
            unsafe += part.unsafe_fixable
            for into, counts in ((by_code, part.by_code), (by_category, part.by_category), (by_api, part.by_api),
                                 (by_severity, part.by_severity)):
                for key, count in counts.items():
                    into[key] = into.get(key, 0) + count
        return cls(
            files=files,
            files_failed=failed,
            lines=lines,
            diagnostics=total,
            by_code=dict(sorted(by_code.items())),
            by_category=dict(sorted(by_category.items())),
            by_api=dict(sorted(by_api.items(), key=lambda kv: (-kv[1], kv[0]))),
            by_severity={s: by_severity[s] for s in ("error", "warning", "info") if s in by_severity},
            fixable=fixable,
            unsafe_fixable=unsafe,
        )
