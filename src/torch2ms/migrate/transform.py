"""The structural rewrites: libcst transformations over the whole module, guided by the ast analysis.

What is torch comes from the scanner (`ApiCall`s of the text, matched to libcst nodes by position);
libcst does the rewriting with the full tree in view, so comments and layout survive and the
result is valid Python by construction. Two passes:

- `CallSites` (before the fix engine, on the scanned text): rewrites at one call or attribute that
  need the receiver moved or the statement changed: nn.init functions as
  initializers on the parameter's data, nn.Module methods as Cell methods, ``register_buffer`` as a
  Parameter that is not trained, two-int ``transpose`` as ``swapaxes``,
  torch's dtype aliases, flags passed by position (``nn.ReLU(True)`` becomes ``inplace=True``, which
  the fix engine then drops), DataParallel wrappers and ``torch.no_grad`` removed, a layer
  class passed as a value whose form needs keywords as ``functools.partial``,
  containers filled after construction built from a Python list or dict (parameter names), the
  parameter names of the form inside ``isinstance`` branches, calls that must be positional in GRAPH
  mode. Every form is the tables' choice for the device (`MappingEntry.choose`).
- `Cells` (after the fix engine): ``forward`` becomes ``construct`` in every class that derives from
  a torch.nn class (through any number of bases, in any file of the migrated tree), with
  ``self.forward`` and ``super().forward`` references. A rename in place needs no tree rewritten: the
  names are found on Python's own syntax tree and written as text edits (a fifth of the time of a large
  file went to a libcst pass for it).

A Tensor method whose MindSpore form is a function (``x.detach()`` -> ``mindspore.ops.stop_gradient(x)``)
is the fix engine's, with the target's own rewrite (``x.new_full(s, v)`` -> ``mindspore.ops.full(s, v,
dtype=x.dtype)``): no pass here moves a receiver into the arguments by itself.

Each rewrite is counted; anything a rule does not cover is left as it is for the scan to report.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Collection, Sequence
from typing import assert_never

from dataclasses import replace

import libcst as cst
import libcst.matchers as m
from libcst.metadata import CodeRange

from .. import syntax
from ..mappings import MappingTable
from ..source import SourceText, split_lines
from ..model import ApiCall, CallKind, Confidence, FactKind, MappingEntry, Span, Structure, StructureRule, \
    arg_for
from ..transforms import default_keyword
from ..transforms.compose import in_place_flag
from ..transforms.result_form import ResultForm
from ..transforms.support import MODULE as SUPPORT_MODULE, support_name
from .imports import small_statements
from .positions import Positions

Key = tuple[int, int, int, int]
_NAMED = (CallKind.ATTRIBUTE, CallKind.TYPE)
IN_PLACE = "in_place"  # the support module's function for a function value whose in-place calls need a copy
PARTIAL = ("functools", "partial")  # a layer class passed as a value, with the keywords its target needs
PYTHON_NAME = "python_name"  # the transform (torch2ms.transforms.python_name) whose plain-Python names migrate writes  # a torch name read (a class as a value) or named as a type


def _key(span: Span) -> Key:
    return span.start_line, span.start_col, span.end_line, span.end_col


# the structural rules of Tensor methods: their calls need the receiver proven a tensor
_TENSOR_RULES = frozenset({StructureRule.SWAP_AXES, StructureRule.POSITIONAL_IN_GRAPH})


def still_tensor_calls(calls: Sequence[ApiCall], table: MappingTable, before: str, after: str,
                       present: Sequence[ApiCall]) -> list[ApiCall]:
    """The calls of `before`'s scan that a Tensor method's structural rule rewrites, on lines `after` (the same text
    with some names replaced: the support module's layers for torch classes passed as values) keeps as they were,
    where `after`'s scan has no call: its receiver came from a torch class the replaced name stood for
    (``self.norm(x).transpose(1, 2)``, ``self.norm = norm_layer(dim)``, ``norm_layer=nn.LayerNorm``), which the
    scan of `after` no longer sees."""
    old, new = split_lines(before), split_lines(after)
    if len(old) != len(new):
        return []
    taken = {_key(call.span) for call in present}
    out = []
    for call in calls:
        entry = table.lookup(call.api) if call.kind is CallKind.METHOD else None
        if entry is None or entry.structure is None or entry.structure.rule not in _TENSOR_RULES \
                or call.confidence is not Confidence.HIGH or _key(call.span) in taken:
            continue
        first, last = call.span.start_line - 1, call.span.end_line
        if old[first:last] == new[first:last]:
            out.append(call)
    return out


def _is_member(api: str) -> bool:
    parts = api.split(".")
    return any(p[:1].isupper() for p in parts[:-1])


def dotted(root: str, rest: str) -> cst.BaseExpression:
    """``root.rest`` as an expression (`rest` relative to the mindspore package)."""
    return cst.parse_expression(f"{root}.{rest}" if rest else root)


def _simple_reference(node: cst.BaseExpression) -> bool:
    """A name or attribute chain (``m.weight``): evaluating it twice is the same as once."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


SETITEM = ("operator", "setitem")  # item assignment as an expression


def _part_key(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The key of ``p[a:b, i]`` as an expression (``(slice(a, b), i)``) where ``p`` is a name or attribute chain
    and the indices call nothing (they are evaluated more than once); else None."""
    if not isinstance(node, cst.Subscript) or not _simple_reference(node.value) or not node.slice \
            or any(m.findall(e, m.Call() | m.Await() | m.Yield() | m.NamedExpr()) for e in node.slice):
        return None
    parts: list[cst.BaseExpression] = []
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index):
            if index.star is not None:
                return None
            parts.append(index.value)
        elif isinstance(index, cst.Slice):
            bounds: list[cst.BaseExpression] = [b if b is not None else cst.Name("None")
                                                 for b in (index.lower, index.upper, index.step)]
            parts.append(cst.Call(func=cst.Name("slice"), args=_clean_args([cst.Arg(b) for b in bounds])))
        else:
            return None
    if len(parts) == 1:
        return parts[0]
    return cst.Tuple([cst.Element(p) for p in parts])


def _literal(value: object) -> cst.BaseExpression:
    return cst.parse_expression(repr(value))


def _positional(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    return [a for a in args if a.keyword is None and not a.star]


def _clean_args(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Arguments with the separators libcst writes by default (the last one without a comma)."""
    out = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return out



def _renamed_weights(entry: MappingEntry, ms_class: str) -> dict[str, str]:
    """The layer's own tensors (torch name -> MindSpore name) that the MindSpore class `ms_class` names
    otherwise, from the tables' weight facts (`m.weight` is `m.gamma` in a mindspore.nn.BatchNorm2d); the
    names with a number in them (an RNN's layers) and those of sub-layers are left out."""
    form = entry.weight_form(ms_class)
    return {} if form is None else form.renamed()

class _Rewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (Positions,)

    def __init__(self, root: str) -> None:
        super().__init__()
        self.root = root
        self.count = 0
        self.done: list[str] = []  # one line per rewrite, for the report

    def _range(self, node: cst.CSTNode) -> CodeRange | None:
        try:
            return self.get_metadata(Positions, node)
        except KeyError:
            return None

    def _note(self, node: cst.CSTNode, what: str) -> None:
        where = self._range(node)
        self.count += 1
        self.done.append(f"{where.start.line}: {what}" if where is not None else what)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not updated_node.body:  # every statement of the block was removed
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


class CallSites(_Rewriter):
    """Rewrites at the calls and attributes the scanner resolved to torch APIs (see the module's docstring)."""

    def __init__(self, calls: Sequence[ApiCall], table: MappingTable, version: tuple[int, ...], root: str,
                 device: str, used: Collection[str] = (), support: str = SUPPORT_MODULE, text: str | None = None) -> None:
        super().__init__(root)
        self.table = table
        self.support_import = support  # the dotted name the file imports the tree's support module by
        self.version = version
        self.device = device  # the forms written are those for this device (`MappingEntry.choose`)
        self.used = set(used)  # every name the file binds or reads: new local names avoid them
        self.imports: set[str] = set()  # modules the rewritten text uses (`functools`)
        self.children: set[int] = set()  # ids of the rewritten calls that add a named child (`child` methods)
        # ids of the child calls MindSpore's container lacks a method for -> (the rule, the call's first line): where
        # no container built in the same block is filled by name with them, rebuilt with them (the rule's `rebuilt`)
        self.rebuilt: dict[int, tuple[Structure, int]] = {}
        self.layers: list[dict[str, dict[str, str]]] = []  # per class: self.NAME -> its layer's renamed tensors
        self.support = False  # whether the text uses the support module's classes (torch2ms.transforms.support)
        self.annotations = 0  # depth inside annotations and comparisons (a class there is a type, not a value)
        self.bases: set[int] = set()  # ids of class bases (a class there is subclassed, not called)
        self.type_args: set[int] = set()  # ids of the class arguments of isinstance / issubclass calls
        self.by_span: dict[Key, list[ApiCall]] = {}
        for call in calls:
            # a receiver not proven a tensor counts only for `p.data.normal_(...)` (see `_data_initializer`)
            if call.confidence is Confidence.HIGH or self._data_initializer_call(call):
                self.by_span.setdefault(_key(call.span), []).append(call)
        # the calls by where their function's name starts (`urlparse(u)`, `PATTERN.search(s)` of a torch value)
        self.by_func: dict[tuple[int, int], list[ApiCall]] = {}
        for call in calls:
            if call.kind is CallKind.CALL and call.func_span is not None and call.confidence is Confidence.HIGH:
                self.by_func.setdefault((call.func_span.start_line, call.func_span.start_col), []).append(call)
        self._lines = sorted({key[0] for key in self.by_span})  # the first lines of the calls rewrites look at
        self._text = split_lines(text) if text is not None else None  # the module's lines (libcst's line breaks)
        self._renamed: dict[int, re.Pattern[str]] = {}  # id of a class's layers -> a word of its renamed tensors

    def on_visit(self, node: cst.CSTNode) -> bool:
        """A statement that holds none of the calls (no line of it or of its decorators starts one) is left as it is,
        unwalked: every rewrite here starts at a call's position, but for the layers' renamed tensors
        (``self.bn.weight``), so in a class whose layers rename some, a statement whose text (the module's `text`,
        where given) writes one of those names is walked all the same. Its own visit and leave run (a class's layers
        are pushed and popped; the leave finds nothing to do without a call)."""
        walk = super().on_visit(node)
        if not walk or not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return walk
        where = self._range(node)
        decorators = getattr(node, "decorators", ())  # written before the def or class's own range
        first = self._range(decorators[0]) if decorators else where
        if where is None or first is None:
            return True
        start, end = min(first.start.line, where.start.line), where.end.line
        at = bisect.bisect_left(self._lines, start)
        if at < len(self._lines) and self._lines[at] <= end:
            return True
        layers = self.layers[-1] if self.layers else None
        if not layers:
            return False
        if self._text is None:
            return True
        words = self._renamed.get(id(layers))
        if words is None:
            names = sorted({name for tensors in layers.values() for name in tensors})
            words = self._renamed[id(layers)] = re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\b")
        return any(words.search(line) for line in self._text[start - 1:end])

    def _structure(self, call: ApiCall) -> Structure | None:
        """The structural rewrite the tables name for the call's entry (`structure:`), if any."""
        entry = self.table.lookup(call.api)
        return entry.structure if entry is not None else None

    def _data_initializer_call(self, call: ApiCall) -> bool:
        structure = self._structure(call)
        return call.kind == CallKind.METHOD and structure is not None and structure.rule is StructureRule.INITIALIZER

    def _calls(self, node: cst.CSTNode, low: bool = False) -> list[ApiCall]:
        where = self._range(node)
        if where is None:
            return []
        found = self.by_span.get((where.start.line, where.start.column, where.end.line, where.end.column), [])
        return found if low else [c for c in found if c.confidence is Confidence.HIGH]

    def _ruled(self, node: cst.CSTNode, rule: StructureRule, kind: CallKind) -> tuple[ApiCall, Structure] | None:
        """The call of `kind` at `node` whose entry names the structural `rule`, with the rule's arguments."""
        for call in self._calls(node):
            structure = self._structure(call) if call.kind == kind else None
            if structure is not None and structure.rule is rule:
                return call, structure
        return None

    # ------------------------------------------------------------------ calls
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        checked = self._type_check(original_node, updated_node)
        if checked is not None:
            return checked
        for call in self._calls(original_node, low=True):
            structure = self._structure(call)
            if structure is not None and self._data_initializer_call(call):
                new = self._data_initializer(structure, updated_node)
            elif call.confidence is Confidence.HIGH:
                new = self._rewrite_call(call, structure, updated_node)
            else:
                continue
            if new is not None:
                self._note(original_node, call.api)
                return new
        return updated_node

    def _type_check(self, original: cst.Call, node: cst.Call) -> cst.Call | None:
        """``isinstance(m, nn.Conv2d)``: the class as a type, whatever its parameters' facts (which
        matter where it is called, not where its instances are recognised). A class whose form has no parameter
        facts is left to the fix engine, which writes it as a type in the same round as the members the branch
        reads on it (``m.weight.size(0)`` where ``m`` is that layer: the scan reads the branch's ``m`` as one)."""
        if not (isinstance(original.func, cst.Name) and original.func.value in ("isinstance", "issubclass")) \
                or len(original.args) != 2:
            return None
        before, after = original.args[1].value, node.args[1].value
        pairs = list(zip(before.elements, after.elements)) if isinstance(before, cst.Tuple) \
            and isinstance(after, cst.Tuple) else [(before, after)]
        changed: dict[int, cst.BaseExpression] = {}
        for old, new in pairs:
            old_value = old.value if isinstance(old, cst.BaseElement) else old
            for call in self._calls(old_value):
                entry = self.table.lookup(call.api) if call.kind in _NAMED else None
                target = entry.target_for(self.version, self.device) if entry is not None else None
                if target is not None and target.api.startswith("mindspore.") and target.params \
                        and call.api.rpartition(".")[2][:1].isupper() and not _is_member(target.api):
                    changed[id(new)] = dotted(self.root, target.api.removeprefix("mindspore."))
                    self._note(old_value, f"{call.api} as a type")
        if not changed:
            return None
        if isinstance(after, cst.Tuple):
            elements = [e.with_changes(value=changed[id(e)]) if id(e) in changed else e for e in after.elements]
            value: cst.BaseExpression = after.with_changes(elements=elements)
        else:
            value = changed[id(after)]
        return node.with_changes(args=[node.args[0], node.args[1].with_changes(value=value)])

    def _rewrite_call(self, call: ApiCall, structure: Structure | None, node: cst.Call) -> cst.BaseExpression | None:
        rule = structure.rule if structure is not None else None
        if call.kind == CallKind.CALL:
            if structure is not None and rule is StructureRule.UNWRAP_MODEL:
                positional = _positional(node.args)
                return positional[0].value if positional else None
            if structure is not None and rule is StructureRule.INITIALIZER:
                if len(call.args) == len(node.args) - 1:  # partial(nn.init.f, a=..): the function as a value
                    return self._initializer_value(structure, node)
                return self._initializer(structure, node)
            return self._support(call, node) or self._flag_by_keyword(call, node)
        if call.kind != CallKind.METHOD or not isinstance(node.func, cst.Attribute):
            return None
        receiver = node.func.value
        if structure is None:
            return None  # a method call the tables rewrite as it is: the fix engine's (targets, rewrites, forms)
        if structure.arg("no_arguments", False) and node.args:
            return None
        match structure.rule:
            case StructureRule.ALL_CELLS:
                cells = cst.parse_expression(str(structure.arg("form")).format(receiver="_receiver_"))
                return cst.ensure_type(cells.visit(_Replace("_receiver_", receiver)), cst.ListComp)
            case StructureRule.CELL_METHOD:
                entry = self.table.lookup(call.api)
                target = entry.target_for(self.version, self.device) if entry is not None else None
                if target is None:
                    if structure.arg("child", False):
                        self.children.add(id(node))  # filled by name where its container is built (else left)
                        if structure.arg("rebuilt") is not None:
                            self.rebuilt[id(node)] = (structure, call.span.start_line)
                    return None
                renamed = node.with_changes(func=node.func.with_changes(attr=cst.Name(target.api.rpartition(".")[2])))
                if structure.arg("child", False):
                    self.children.add(id(renamed))
                    if structure.arg("rebuilt") is not None:  # (where no container's fill takes it)
                        self.rebuilt[id(renamed)] = (structure, call.span.start_line)
                rewrite = target.rewrite
                form = rewrite.arg("form") if rewrite is not None and rewrite.transform == ResultForm.name else None
                if not isinstance(form, str):
                    return renamed
                # the target's result in torch's form (transforms/result_form.py), as the fix engine writes it
                return cst.parse_expression(form.replace("{result}", cst.Module([]).code_for_node(renamed)))
            case StructureRule.SWAP_AXES:
                return self._swap(structure, node)
            case StructureRule.POSITIONAL_IN_GRAPH:
                return self._positional_in_graph(tuple(structure.arg("params")), node)
            case StructureRule.INITIALIZER | StructureRule.ALIAS | StructureRule.BUFFER | StructureRule.UNWRAP_MODEL \
                    | StructureRule.NO_TAPE | StructureRule.CELL_CONTAINER:
                return None  # rules done at their statement or name; the call itself is the fix engine's
            case _ as unreachable:
                assert_never(unreachable)

    def _support(self, call: ApiCall, node: cst.Call) -> cst.BaseExpression | None:
        """``torch.optim.Adam(ps, lr=0.1)`` -> ``t2ms_support.Adam(ps, lr=0.1)``: a class of the support module
        that the entry's rewrite names (torch2ms.transforms.support), called with torch's arguments; the file
        imports the module and the migration says it needs it (`support`)."""
        entry = self.table.lookup(call.api)
        name = support_name(call, entry, self.version, self.device)
        if name is None or call.func_span is None or not name.rpartition(".")[2][:1].isupper():
            return None  # (a function of the module is written after the fix engine: torch2ms.migrate.support)
        self.support = True  # (the module is imported by its name in this tree: `pkg.t2ms_support` in a package)
        return node.with_changes(func=cst.parse_expression(f"{self.support_import}.{name.partition('.')[2]}"))

    def _positional_in_graph(self, names: tuple[str, ...], node: cst.Call) -> cst.BaseExpression | None:
        """``x.chunk(2, dim=-1)`` -> ``x.chunk(2, -1)`` (the `positional_in_graph` rule)."""
        if any(a.star for a in node.args) or all(a.keyword is None for a in node.args):
            return None
        values: dict[str, cst.BaseExpression] = {}
        for name, arg in zip(names, _positional(node.args)):
            values[name] = arg.value
        for arg in node.args:
            if arg.keyword is not None:
                if arg.keyword.value not in names or arg.keyword.value in values:
                    return None
                values[arg.keyword.value] = arg.value
        ordered = list(names[:len(values)])
        if set(ordered) != set(values):
            return None  # a gap: a later parameter passed without an earlier one
        return node.with_changes(args=_clean_args([cst.Arg(values[n]) for n in ordered]))

    def _swap(self, structure: Structure, node: cst.Call) -> cst.BaseExpression | None:
        assert isinstance(node.func, cst.Attribute)
        names = tuple(structure.arg("params"))
        values: dict[str, cst.BaseExpression] = {}
        positional = [a for a in node.args if a.keyword is None]
        if any(a.star for a in node.args) or len(node.args) != len(names):
            return None
        for name, arg in zip(names, positional):
            values[name] = arg.value
        for arg in node.args:
            if arg.keyword is not None:
                if arg.keyword.value not in names or arg.keyword.value in values:
                    return None
                values[arg.keyword.value] = arg.value
        if set(values) != set(names):
            return None
        return node.with_changes(func=node.func.with_changes(attr=cst.Name(str(structure.arg("method")))),
                                 args=[cst.Arg(values[name]) for name in names])

    def _data_initializer(self, rule: Structure, node: cst.Call) -> cst.BaseExpression | None:
        """``m.weight.data.normal_(0, 0.01)`` -> the initializer on ``m.weight`` (as for nn.init.normal_)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Attribute) \
                or func.value.attr.value != "data" or not _simple_reference(func.value.value):
            return None
        return self._initializer(rule, node.with_changes(func=cst.Name("_"), args=[
            cst.Arg(func.value.value), *node.args]))

    def _initializer(self, rule: Structure, node: cst.Call) -> cst.BaseExpression | None:
        """``nn.init.kaiming_normal_(m.weight, mode="fan_out")`` ->
        ``m.weight.set_data(mindspore.common.initializer.initializer(
        mindspore.common.initializer.HeNormal(negative_slope=0, mode="fan_out", ...), m.weight.shape, m.weight.dtype))``."""
        spread = node.args[-1] if node.args and node.args[-1].star == "*" else None  # `*self.init_range`
        if any(a.star for a in node.args if a is not spread):
            return None
        positional = _positional([a for a in node.args if a is not spread])
        if not positional:
            return None
        tensor = positional[0].value
        key = _part_key(tensor)
        if not _simple_reference(tensor) and key is None:
            return None
        if any(a.keyword is not None and a.keyword.value == "tensor" for a in node.args):
            return None
        passed: dict[str, cst.BaseExpression] = {}
        params: tuple[tuple[str, str, object], ...] = tuple(rule.arg("params", ()))
        names = [p[0] for p in params]
        extra = positional[1:]
        if len(extra) > len(names):
            return None
        for name, arg in zip(names, extra):
            passed[name] = arg.value
        spread_params: list[cst.Param] = []
        if spread is not None:  # the parameters after those bound: a lambda's, which the sequence is spread into
            for torch_name, _, default in params[len(extra):]:
                local = torch_name
                while local in self.used:
                    local += "_"
                passed[torch_name] = cst.Name(local)
                spread_params.append(cst.Param(cst.Name(local), default=None if default is None else _literal(default),
                                               equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
                                               if default is not None else cst.MaybeSentinel.DEFAULT))
        for arg in node.args:
            if arg.keyword is not None and spread is not None:
                return None
            if arg.keyword is not None:
                if arg.keyword.value not in names or arg.keyword.value in passed:
                    return None  # generator= or a keyword MindSpore's initializer has no place for
                passed[arg.keyword.value] = arg.value
        keywords = []
        for torch_name, ms_name, default in params:
            given = passed.get(torch_name)
            if given is None:
                if default is None:
                    return None
                given = _literal(default)
            keywords.append(cst.Arg(given, keyword=cst.Name(ms_name),
                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        module = str(rule.arg("module"))
        form = rule.arg("value")
        value: cst.BaseExpression
        if isinstance(form, str):  # no initializer class draws these values: the value itself, as the form writes it
            code = cst.Module([]).code_for_node
            fields = {k.keyword.value: f"({code(k.value)})" for k in keywords if k.keyword is not None}
            value = cst.parse_expression(form.format(root=self.root, tensor=code(tensor),
                                                                         **fields))
        else:
            init = cst.Call(func=dotted(self.root, f"{module}.{rule.arg('cls')}"), args=_clean_args(keywords))
            value = cst.Call(func=dotted(self.root, f"{module}.initializer"), args=_clean_args([
                cst.Arg(init), cst.Arg(cst.Attribute(tensor, cst.Name("shape"))),
                cst.Arg(cst.Attribute(tensor, cst.Name("dtype")))]))
        if key is not None and isinstance(tensor, cst.Subscript):
            # a part of a parameter (``nn.init.ones_(b[n // 2:])``): MindSpore writes it by item assignment, an
            # expression as torch's call is: operator.setitem(b, slice(n // 2, None), the values)
            if not isinstance(form, str):
                value = cst.Call(func=cst.Attribute(value, cst.Name("init_data")), args=[])
            self.imports.add(SETITEM[0])
            written: cst.BaseExpression = cst.Call(func=cst.Attribute(cst.Name(SETITEM[0]), cst.Name(SETITEM[1])),
                                                   args=_clean_args([cst.Arg(tensor.value), cst.Arg(key), cst.Arg(value)]))
        elif isinstance(tensor, cst.Attribute):  # a layer's parameter (`m.weight`): MindSpore's Parameter.set_data
            written = cst.Call(func=cst.Attribute(tensor, cst.Name("set_data")), args=[cst.Arg(value)])
        else:  # a name may hold a plain tensor, which has no set_data: its values copied in, as torch writes them
            if not isinstance(form, str):
                value = cst.Call(func=cst.Attribute(value, cst.Name("init_data")), args=[])
            written = cst.Call(func=cst.Attribute(tensor, cst.Name("copy_")), args=[cst.Arg(value)])
        if spread is None:
            return written
        return cst.Call(func=cst.Lambda(params=cst.Parameters(params=spread_params), body=written,
                                        lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
                        args=[cst.Arg(spread.value, star="*")])

    def _initializer_value(self, rule: Structure, node: cst.Call) -> cst.BaseExpression | None:
        """``partial(nn.init.kaiming_uniform_, a=math.sqrt(5))``, called later with the tensor: a function of the
        tensor that writes the initializer on it (``lambda tensor: tensor.set_data(...)``). Arguments bound by
        position (they would bind the tensor) are left to the finding."""
        if len(_positional(node.args)) != 1 or any(a.star for a in node.args):
            return None
        name = "tensor"
        while name in self.used:  # the lambda's parameter must not hide a name its arguments read
            name += "_"
        tensor = cst.Name(name)
        applied = self._initializer(rule, cst.Call(func=node.args[0].value, args=[cst.Arg(tensor), *node.args[1:]]))
        if applied is None:
            return None
        return cst.Lambda(params=cst.Parameters(params=[cst.Param(tensor)]), body=applied)

    def _flag_by_keyword(self, call: ApiCall, node: cst.Call) -> cst.BaseExpression | None:
        """``nn.ReLU(True)``: the last positional argument is a parameter MindSpore drops; passed by keyword,
        the fix engine can drop it (``inplace`` changes no result of a forward pass)."""
        entry = self.table.lookup(call.api)
        target = entry.target_for(self.version, self.device) if entry is not None else None
        if target is None or any(a.star for a in node.args):
            return None
        positional = _positional(node.args)
        if len(positional) == len([a for a in call.args if a.keyword is None]) + 1:
            positional = positional[1:]  # `partial(nn.LayerNorm, 4, 1e-3)`: the class is partial's first argument
        for fact in target.params:
            if fact.kind is not FactKind.DROPPED or fact.torch is None or fact.position is None \
                    or fact.position != len(positional) - 1:
                continue
            if any(a.keyword is not None and a.keyword.value == fact.torch for a in node.args):
                return None
            last = positional[-1]
            index = list(node.args).index(last)
            args = list(node.args)
            args[index] = last.with_changes(keyword=cst.Name(fact.torch), equal=cst.AssignEqual(
                cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            return node.with_changes(args=args)
        return None

    # ------------------------------------------------------------------ attributes
    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.annotations += 1

    def leave_Annotation(self, original_node: cst.Annotation, updated_node: cst.Annotation) -> cst.Annotation:
        self.annotations -= 1
        return updated_node

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.annotations += 1

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.Comparison:
        self.annotations -= 1
        return updated_node

    def visit_Call(self, node: cst.Call) -> None:
        # the classes isinstance / issubclass test against are types (a type, not a value the code builds)
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass") and len(node.args) == 2:
            self.type_args.add(id(node.args[1]))

    def visit_Arg(self, node: cst.Arg) -> None:
        if id(node) in self.type_args:
            self.annotations += 1

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if id(original_node) in self.type_args:
            self.annotations -= 1
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bases.update(id(base.value) for base in node.bases)
        self.layers.append(self._layer_tensors(node))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.layers.pop()
        return updated_node

    def _layer_tensors(self, node: cst.ClassDef) -> dict[str, dict[str, str]]:
        """``self.NAME = nn.BatchNorm2d(...)`` in the class's methods: NAME -> the tensors the layer's form for
        the device names otherwise (`_renamed_weights`: weight -> gamma); NAME set to anything else is left out."""
        found: dict[str, dict[str, str] | None] = {}
        # the assignments of its body and methods, not those of a nested class (which has its own ``self``)
        values = [(name.removeprefix("self."), assign.value)
                  for assign in small_statements(node.body, (cst.Assign,), (cst.ClassDef,))
                  for target in assign.targets if (name := _self_attribute(target.target)) is not None]
        for name, value in values:
            calls = [c for c in self._calls(value) if c.kind is CallKind.CALL] if isinstance(value, cst.Call) else []
            entry = self.table.lookup(calls[0].api) if calls and calls[0].span == self._span_of(value) else None
            if entry is not None and support_name(calls[0], entry, self.version, self.device):
                entry = None  # written as the support module's class, which keeps torch's tensor names
            target = entry.target_for(self.version, self.device) if entry is not None else None
            names = _renamed_weights(entry, target.api) if entry is not None and target is not None else None
            found[name] = names if name not in found or found[name] == names else None
        return {name: names for name, names in found.items() if names}

    def _span_of(self, node: cst.CSTNode) -> Span | None:
        where = self._range(node)
        return None if where is None else Span(where.start.line, where.start.column, where.end.line, where.end.column)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._python_name(original_node) or updated_node

    def _python_name(self, node: cst.Name | cst.Attribute) -> cst.BaseExpression | None:
        """A torch name whose entry's rewrite is `python_name` (``torch.jit.Final``) -> the plain-Python name it
        gives (``typing.Final``), whose module the file then imports. A rewrite of calls may name the plain type
        that stands for the torch class where it names a type (`type_name`: ``torch.device`` -> ``str``)."""
        for call in self._calls(node) + self._called_names(node):
            entry = self.table.lookup(call.api) if call.kind in _NAMED else None
            rewrite = entry.rewrite if entry is not None else None
            name = str(rewrite.arg("name", "")) if rewrite is not None and rewrite.transform == PYTHON_NAME else ""
            if not name and rewrite is not None and call.kind is CallKind.TYPE:
                name = str(rewrite.arg("type_name", ""))
            types = tuple(rewrite.arg("types", ())) if rewrite is not None and rewrite.transform == PYTHON_NAME \
                and call.kind is CallKind.TYPE and id(node) not in self.bases else ()
            if types:  # a torch base class named as a type (not subclassed): its subclasses' MindSpore classes
                self.imports.update(t.partition(".")[0] for t in types)
                self._note(node, f"{call.api} -> the types of its subclasses")
                return cst.parse_expression(f"({', '.join(types)}{',' if len(types) == 1 else ''})")
            if name.startswith(f"{SUPPORT_MODULE}."):  # a value of the support module, by the tree's import name
                self.support = True
                self._note(node, f"{call.api} -> {name}")
                return cst.parse_expression(f"{self.support_import}.{name.partition('.')[2]}")
            if name:
                if "." in name and rewrite is not None:  # a builtin (`str`) needs no import
                    # its module (`urllib.parse`), or the one the tables name (a class's member: `mindspore`)
                    self.imports.add(str(rewrite.arg("module", "")) or name.rpartition(".")[0])
                self._note(node, f"{call.api} -> {name}")
                return cst.parse_expression(name)
        return None

    def _called_names(self, node: cst.Name | cst.Attribute) -> list[ApiCall]:
        """The torch name `node` spells where it is called (``urlparse(u)``) or a method of it is
        (``PATTERN.search(s)``): the call's API cut after the node's last name, as a name (ATTRIBUTE) read there."""
        where = self._range(node)
        if where is None:
            return []
        last = node.value if isinstance(node, cst.Name) else node.attr.value
        found = []
        for call in self.by_func.get((where.start.line, where.start.column), []):
            parts = call.api.split(".")
            cut = max((i for i in range(2, len(parts) + 1) if parts[i - 1] == last), default=0)
            if cut:
                found.append(replace(call, api=".".join(parts[:cut]), kind=CallKind.ATTRIBUTE))
        return found

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        renamed = self._python_name(original_node)
        if renamed is not None:
            return renamed
        layer = _self_attribute(original_node.value)
        tensors = self.layers[-1].get(layer.removeprefix("self."), {}) if layer and self.layers else {}
        if original_node.attr.value in tensors:  # self.bn.weight -> self.bn.gamma
            self._note(original_node, f"{layer}.{original_node.attr.value}: the layer's name for it")
            return updated_node.with_changes(attr=cst.Name(tensors[original_node.attr.value]))
        found = self._ruled(original_node, StructureRule.ALIAS, CallKind.ATTRIBUTE)
        if found is None:
            return self._class_value(original_node, updated_node)
        api = found[0].api
        entry = self.table.lookup(str(found[1].arg("of")))
        target = entry.target_for(self.version, self.device) if entry is not None else None
        if target is None or target.params or not target.api.startswith("mindspore."):
            return updated_node
        self._note(original_node, api)
        return dotted(self.root, target.api.removeprefix("mindspore."))

    def _class_value(self, original: cst.Attribute, node: cst.Attribute) -> cst.BaseExpression:
        """``act_layer=nn.GELU`` (a layer class as a value, called later with the caller's arguments) whose
        form for the device needs keywords for torch's defaults: ``functools.partial(mindspore.nn.GELU,
        approximate=False)``, written where the class is written. In an annotation or a comparison it is the class.
        A function as a value the same way (``fn=F.leaky_relu`` -> ``functools.partial(mindspore.ops.leaky_relu,
        alpha=0.01)``)."""
        if id(original) in self.bases:
            return node
        for call in self._calls(original):
            entry = self.table.lookup(call.api) if call.kind in _NAMED else None
            target = entry.target_for(self.version, self.device) if entry is not None else None
            if target is None or _is_member(target.api) or not target.api.startswith("mindspore.") \
                    or not call.api.rpartition(".")[2][:1].isupper() and (self.annotations or _is_member(call.api)):
                continue  # a class, or a function as a value (``leaky_relu=F.leaky_relu``), never a method
            module, function = PARTIAL
            flag = in_place_flag(entry.rewrite) if entry is not None and not self.annotations else None
            if flag is not None and not call.api.rpartition(".")[2][:1].isupper() and module not in self.used:
                # a function whose in-place form is composed (``F.silu``), called later with the flag: the
                # support module's `in_place` runs its form out of place and copies into the input
                self.support = True
                self.imports.add(module)
                self._note(original, f"{call.api} as a value, its in-place calls by a copy")
                return cst.Call(cst.parse_expression(f"{module}.{function}"), _clean_args([
                    cst.Arg(cst.parse_expression(f"{self.support_import}.{IN_PLACE}")),
                    cst.Arg(dotted(self.root, target.api.removeprefix("mindspore."))), cst.Arg(cst.Integer(str(flag)))]))
            keywords = [text for text in map(default_keyword, target.params) if text is not None]
            if not keywords or module in self.used and not self.annotations:
                continue
            cls = dotted(self.root, target.api.removeprefix("mindspore."))
            if self.annotations:
                self._note(original, f"{call.api} as a type")
                return cls
            self.imports.add(module)
            self._note(original, f"{call.api} as a value")
            return cst.Call(cst.parse_expression(f"{module}.{function}"), _clean_args(
                [cst.Arg(cls), *(cst.Arg(cst.parse_expression(k.partition("=")[2]), keyword=cst.Name(k.partition("=")[0]),
                                         equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                                 for k in keywords)]))
        return node

    # ------------------------------------------------------------------ statements
    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        """``if isinstance(m, nn.BatchNorm2d): m.weight...`` -> ``m.gamma`` in that branch, where the form
        for the device names its parameters otherwise (the tables' weight facts, `_renamed_weights`)."""
        test = original_node.test
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
            return updated_node
        kinds = test.args[1].value
        items = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        written = updated_node.test.args[1].value if isinstance(updated_node.test, cst.Call) else None
        classes = [e.value for e in written.elements] if isinstance(written, cst.Tuple) else [written]
        if len(classes) != len(items):
            return updated_node
        each: list[dict[str, str]] = []
        for item in items:
            calls = [c for c in self._calls(item) if c.kind in _NAMED]
            entry = self.table.lookup(calls[0].api) if calls else None
            target = entry.target_for(self.version, self.device) if entry is not None else None
            names = _renamed_weights(entry, target.api) if entry is not None and target is not None else None
            if names is None:
                return updated_node  # not a torch class: its instances keep their attributes
            each.append(names)
        name = test.args[0].value.value
        # per attribute: the name in each class (the torch name where a class keeps it)
        forms = {attr: [names.get(attr, attr) for names in each] for names in each for attr in names}
        if not forms or _binds(updated_node.body, name):
            return updated_node
        renames = {attr: ms[0] for attr, ms in forms.items() if len(set(ms)) == 1}
        mixed = {attr: [(cls, ms[i]) for i, cls in enumerate(classes) if cls is not None]
                 for attr, ms in forms.items() if len(set(ms)) > 1}
        self._note(original_node, f"{name}: parameter names of {cst.Module([]).code_for_node(kinds)}")
        return updated_node.with_changes(body=updated_node.body.visit(_Rename(name, renames, mixed)))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        """``self.layers = nn.ModuleList()`` then ``self.layers.append(...)``: filled as a list, then
        ``self.layers = nn.ModuleList(layers)`` after the last statement of the block that uses it (see
        the `cell_container` rule; the fix engine then writes the CellList)."""
        block = super().leave_IndentedBlock(original_node, updated_node)
        if len(original_node.body) != len(block.body):
            return block
        body = list(block.body)
        for index in reversed(range(len(original_node.body))):  # from the last: an insertion moves only later ones
            statement = original_node.body[index]
            found = self._empty_container(statement)
            if found is None:
                continue
            name, (empty, starred, named), items = found
            uses = [i for i in range(index + 1, len(body)) if _mentions(body[i], name)]
            if not uses or any(_mentions(body[i], name, nested=True) for i in uses) \
                    or any(_calls_self(body[i]) for i in range(index + 1, uses[-1]) if i not in uses):
                continue  # (a method of self called before the last use may read the container: it stays built)
            local = name
            while local in self.used:
                local += "_"
            by_name = _ByName(f"self.{name}", local, self.children)
            filled = [cst.ensure_type(body[i].visit(by_name), type(body[i])) for i in uses]
            value = cst.parse_expression(empty)
            if by_name.count and named is not None:  # children added by name: filled by name, built from it
                value = cst.parse_expression(named)
                if items:  # nn.Sequential(a, b) then .add_module(NAME, c): a and b are named '0' and '1'
                    if not isinstance(value, cst.Call) or value.args:
                        continue
                    value = value.with_changes(args=[cst.Arg(cst.List([cst.Element(cst.Tuple(
                        [cst.Element(cst.SimpleString(repr(str(i)))), cst.Element(item)])) for i, item in
                        enumerate(items)]))])
                for i, statement in zip(uses, filled):
                    body[i] = statement
                empty, starred = named, False
                if "." in named:
                    self.imports.add(named.partition(".")[0])
            elif items:
                continue  # items appended to a container built with some: MindSpore's method does the same
            self.used.add(local)
            line = cst.ensure_type(body[index], cst.SimpleStatementLine)
            assign = cst.ensure_type(line.body[0], cst.Assign)
            call = cst.ensure_type(assign.value, cst.Call)
            body[index] = line.with_changes(body=[assign.with_changes(
                targets=[cst.AssignTarget(cst.Name(local))], value=value)])
            for i in uses:
                body[i] = cst.ensure_type(body[i].visit(_Replace(f"self.{name}", cst.Name(local))), type(body[i]))
            built = assign.with_changes(value=call.with_changes(args=[cst.Arg(cst.Name(local),
                                                                              star="*" if starred else "")]))
            body.insert(uses[-1] + 1, cst.SimpleStatementLine([built]))
            self._note(statement, f"{name}: a container filled as a Python {empty}, then built")
        return block.with_changes(body=body)

    def _empty_container(self, statement: cst.BaseStatement
                         ) -> tuple[str, tuple[str, bool, str | None], list[cst.BaseExpression]] | None:
        """(NAME, (the empty Python value, whether the class takes the items unpacked, the value filled by name),
        the items it is built with) for ``self.NAME = nn.ModuleList()`` (or ``([])``; the `cell_container` rule),
        or ``self.NAME = nn.Sequential(a, b)`` (items passed one by one), else None."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        assign = statement.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
            return None
        target = assign.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return None
        args = assign.value.args
        items: list[cst.BaseExpression] = []
        if len(args) == 1 and args[0].keyword is None and not args[0].star and isinstance(
                args[0].value, (cst.List, cst.Dict)) and not args[0].value.elements:
            pass  # nn.ModuleList([])
        elif args and all(a.keyword is None and not a.star for a in args) \
                and not any(isinstance(a.value, (cst.List, cst.Dict, cst.Tuple)) for a in args):
            items = [a.value for a in args]
        elif args:
            return None
        found = self._ruled(assign.value, StructureRule.CELL_CONTAINER, CallKind.CALL)
        if found is None or items and not found[1].arg("starred", False):
            return None  # (items one by one: a class that takes them unpacked, nn.Sequential)
        named = found[1].arg("named")
        return target.attr.value, (str(found[1].arg("empty")), bool(found[1].arg("starred", False)),
                                   None if named is None else str(named)), items

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.BaseSmallStatement:
        """``self.register_buffer("name", t)`` -> ``self.name = mindspore.Parameter(t, requires_grad=False)``."""
        value = updated_node.value
        buffer = self._ruled(original_node.value, StructureRule.BUFFER, CallKind.METHOD)
        if buffer is None \
                or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) \
                or any(a.star for a in value.args):
            return updated_node
        args: dict[str, cst.BaseExpression] = {}
        for name, arg in zip(("name", "tensor", "persistent"), _positional(value.args)):
            args[name] = arg.value
        for arg in value.args:
            if arg.keyword is not None:
                args[arg.keyword.value] = arg.value
        key, tensor = args.get("name"), args.get("tensor")
        if not isinstance(key, cst.SimpleString) or tensor is None or set(args) - {"name", "tensor", "persistent"}:
            return updated_node
        attr = key.evaluated_value
        if not isinstance(attr, str) or not attr.isidentifier():
            return updated_node
        if isinstance(tensor, cst.Name) and tensor.value == "None":
            return updated_node
        parameter = cst.Call(func=dotted(self.root, "Parameter"), args=[
            cst.Arg(tensor, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.Name("False"), keyword=cst.Name("requires_grad"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
        self._note(original_node, buffer[0].api)
        target = cst.Attribute(value.func.value, cst.Name(attr))
        return cst.Assign(targets=[cst.AssignTarget(target)], value=parameter)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        """A statement left as ``model = model`` (its DataParallel wrapper gone) is removed."""
        body = updated_node.body
        if len(body) == 1 and isinstance(body[0], cst.Assign) and len(body[0].targets) == 1:
            assign = body[0]
            if _simple_reference(assign.value) and cst.Module([]).code_for_node(assign.targets[0].target) == \
                    cst.Module([]).code_for_node(assign.value) and \
                    any(self._ruled(a.value, StructureRule.UNWRAP_MODEL, CallKind.CALL) for a in _assigns(original_node)):
                return cst.RemoveFromParent()
        return updated_node

    def leave_With(self, original_node: cst.With, updated_node: cst.With
                   ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """``with torch.no_grad():`` -> its body (MindSpore records no tape to switch off); of several context
        managers (``with torch.inference_mode(False), torch.autocast("cpu", enabled=False), lock:``) those go and
        the others stay."""
        if original_node.asynchronous is not None:
            return updated_node
        kept, gone = [], []
        for before, after in zip(original_node.items, updated_node.items):
            no_tape = self._ruled(before.item, StructureRule.NO_TAPE, CallKind.CALL) \
                if before.asname is None else None
            if no_tape is not None and _passes(*no_tape):
                gone.append(no_tape[0].api)
            else:
                kept.append(after)
        if not gone:
            return updated_node
        if kept:
            for api in gone:
                self._note(original_node, api)
            return updated_node.with_changes(items=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        block = updated_node.body
        statements: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
        if isinstance(block, cst.IndentedBlock):
            statements = [s for s in block.body if isinstance(s, (cst.SimpleStatementLine, cst.BaseCompoundStatement))]
        else:
            statements = [cst.SimpleStatementLine([s for s in block.body if isinstance(s, cst.BaseSmallStatement)])]
        if not statements:
            return updated_node
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=[*updated_node.leading_lines, *first.leading_lines])
        for api in gone:
            self._note(original_node, api)
        return cst.FlattenSentinel(statements)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """The child calls no container's fill took (`rebuilt`): ``self.seq.add_module(name, layer)`` on a
        SequentialCell, which has no method that adds a child it calls, -> the container rebuilt from its named
        cells and the new one (the rule's `rebuilt` form: the names stay torch's, so do the parameters'); a Cell's
        own ``add_module`` -> ``setattr``, which names the child's parameters after it (`own`: a Sequential
        subclass's, whose construct then calls it)."""
        if not self.rebuilt:
            return updated_node
        rebuilt = _Rebuilt(self.rebuilt, self.root)
        module = cst.ensure_type(updated_node.visit(rebuilt), cst.Module)
        for structure, line in rebuilt.done:
            self.imports.update(structure.arg("imports", ()))
            self.count += 1
            self.done.append(f"{line}: a child added by name, written as MindSpore calls and names it")
        return module

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        """``@torch.no_grad()`` decorators go (see `leave_With`)."""
        kept = []
        for before, after in zip(original_node.decorators, updated_node.decorators):
            no_tape = self._ruled(before.decorator, StructureRule.NO_TAPE, CallKind.CALL) or \
                self._ruled(before.decorator, StructureRule.NO_TAPE, CallKind.ATTRIBUTE)
            if no_tape:
                self._note(before, no_tape[0].api)
                continue
            kept.append(after)
        if len(kept) == len(updated_node.decorators):
            return updated_node
        return updated_node.with_changes(decorators=kept)


def _passes(call: ApiCall, structure: Structure) -> bool:
    """Whether the call passes the literal values the rule's `when` names (torch's `params` give positions):
    ``autocast(..., enabled=False)`` switches nothing on that MindSpore would need."""
    params = list(structure.arg("params", ()))
    for name, wanted in structure.arg("when", ()):
        arg = arg_for(call.args, name, params.index(name) if name in params else None)
        if arg is None or not arg.is_const or type(arg.value) is not type(wanted) or arg.value != wanted:
            return False
    return True


def _assigns(line: cst.SimpleStatementLine) -> list[cst.Assign]:
    return [s for s in line.body if isinstance(s, cst.Assign)]


class _Replace(cst.CSTTransformer):
    """Put `node` where the placeholder is: a name, or ``self.NAME``."""

    def __init__(self, placeholder: str, node: cst.BaseExpression) -> None:
        super().__init__()
        self.placeholder = placeholder
        self.node = node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.node if updated_node.value == self.placeholder else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self.node if _self_attribute(updated_node) == self.placeholder else updated_node


class _ByName(cst.CSTTransformer):
    """``self.NAME.insert_child_to_cell(key, layer)`` (a call of `children`, the rewritten `child` methods) as a
    statement -> ``LOCAL[key] = layer``; `count` says how many."""

    def __init__(self, receiver: str, local: str, children: set[int]) -> None:
        super().__init__()
        self.receiver, self.local, self.children = receiver, local, children
        self.count = 0

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.BaseSmallStatement:
        call = updated_node.value
        if not (id(original_node.value) in self.children and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and _self_attribute(call.func.value) == self.receiver and len(call.args) == 2
                and not any(a.star or a.keyword for a in call.args)):
            return updated_node
        self.count += 1
        key, layer = call.args
        target = cst.Subscript(cst.Name(self.local), [cst.SubscriptElement(cst.Index(key.value))])
        return cst.Assign([cst.AssignTarget(target)], layer.value)


def _held_by_self(node: cst.BaseExpression) -> bool:
    """``self.NAME`` or ``self.a.b``: an attribute chain from ``self`` (set again, every reader sees the new value)."""
    if not isinstance(node, cst.Attribute):
        return False
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value == "self"


class _Rebuilt(cst.CSTTransformer):
    """``self.NAME.add_module(key, layer)`` (a call of `calls`, as a statement, alone or as a one-item tuple:
    ``self.add_module(key, layer),``) -> the rule's `rebuilt` form (`own` where the receiver is ``self``),
    ``{receiver}``, ``{name}``, ``{cell}`` and ``{root}`` (the file's MindSpore alias) filled in; a pair passed
    unpacked (``self.add_module(*pair)``, a name) gives ``pair[0]`` and ``pair[1]``. A form that assigns its
    ``{receiver}`` is written only where the receiver is an attribute chain from ``self``. `done` lists (rule,
    line) of each."""

    def __init__(self, calls: dict[int, tuple[Structure, int]], root: str) -> None:
        super().__init__()
        self.calls, self.root = calls, root
        self.done: list[tuple[Structure, int]] = []

    def leave_Expr(self, original_node: cst.Expr,
                   updated_node: cst.Expr) -> cst.BaseSmallStatement | cst.FlattenSentinel[cst.BaseSmallStatement]:
        call, before = updated_node.value, original_node.value
        if isinstance(call, cst.Tuple) and isinstance(before, cst.Tuple) and len(call.elements) == 1 \
                and isinstance(call.elements[0], cst.Element) and isinstance(before.elements[0], cst.Element):
            call, before = call.elements[0].value, before.elements[0].value
        found = self.calls.get(id(before))
        if found is None or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return updated_node
        pair = _name_and_cell(call)
        if pair is None:
            return updated_node
        receiver = call.func.value
        own = found[0].arg("own") if isinstance(receiver, cst.Name) and receiver.value == "self" else None
        form = str(own if own is not None else found[0].arg("rebuilt"))
        if own is None and _rebinds_receiver(form) and not _held_by_self(receiver):
            return updated_node  # (a name, a parameter: rebinding it would leave the caller's container as it was)
        text = form.format(receiver=cst.Module([]).code_for_node(receiver), name=pair[0], cell=pair[1],
                           root=self.root)
        self.done.append(found)
        body = cst.ensure_type(cst.parse_statement(text), cst.SimpleStatementLine).body
        return body[0] if len(body) == 1 else cst.FlattenSentinel(body)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        """A call written as several statements (`own`) on a line of its own: one line each."""
        if len(original_node.body) != 1 or len(updated_node.body) == 1:
            return updated_node
        first, *rest = (cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                        for s in updated_node.body)
        return cst.FlattenSentinel([first.with_changes(leading_lines=updated_node.leading_lines,
                                                       trailing_whitespace=updated_node.trailing_whitespace), *rest])


def _name_and_cell(call: cst.Call) -> tuple[str, str] | None:
    """The code of a child call's name and cell: two arguments by position, or one pair unpacked from a name."""
    code = cst.Module([]).code_for_node
    args = call.args
    if len(args) == 2 and not any(a.star or a.keyword for a in args):
        return code(args[0].value), code(args[1].value)
    if len(args) == 1 and args[0].star == "*" and isinstance(args[0].value, cst.Name):
        return f"{args[0].value.value}[0]", f"{args[0].value.value}[1]"
    return None


def _rebinds_receiver(form: str) -> bool:
    """Whether a `rebuilt` form assigns to its ``{receiver}`` (``{receiver} = ...``), not only calls on it."""
    statement = cst.ensure_type(cst.parse_statement(form.format(receiver="_receiver_", name="_name_", cell="_cell_",
                                                                root="_root_")), cst.SimpleStatementLine)
    return any(isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "_receiver_"
                                                 for t in s.targets) for s in statement.body)


class _Rename(cst.CSTTransformer):
    """``name.old`` -> ``name.new`` for the attribute names of `renames`; an attribute of `mixed` (its name in
    each class of an ``isinstance`` tuple, where they differ) is read as ``(name.gamma if isinstance(name, A)
    else name.weight)`` (an assignment to it is left: the scan reports what MindSpore lacks)."""

    def __init__(self, name: str, renames: dict[str, str],
                 mixed: dict[str, list[tuple[cst.BaseExpression, str]]] | None = None) -> None:
        super().__init__()
        self.name = name
        self.renames = renames
        self.mixed = mixed or {}
        self.targets = 0  # depth inside assignment targets

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets += 1

    def leave_AssignTarget(self, original_node: cst.AssignTarget, updated_node: cst.AssignTarget) -> cst.AssignTarget:
        self.targets -= 1
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        value = updated_node.value
        if not (isinstance(value, cst.Name) and value.value == self.name):
            return updated_node
        attr = updated_node.attr.value
        if attr in self.renames:
            return updated_node.with_changes(attr=cst.Name(self.renames[attr]))
        if attr not in self.mixed or self.targets:
            return updated_node
        forms = self.mixed[attr]
        read: cst.BaseExpression = updated_node.with_changes(attr=cst.Name(forms[-1][1]))
        for cls, ms in reversed(forms[:-1]):
            test = cst.Call(cst.Name("isinstance"), [cst.Arg(value, comma=cst.Comma(
                whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(cls)])
            read = cst.IfExp(test=test, body=updated_node.with_changes(attr=cst.Name(ms)), orelse=read)
        return read.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _binds(node: cst.CSTNode, name: str) -> bool:
    """Whether `node` assigns `name` (then its uses below may be another object)."""
    found = False

    class _Find(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            found = found or name in _target_names(node.target)

        def visit_For(self, node: cst.For) -> None:
            nonlocal found
            found = found or name in _target_names(node.target)

    node.visit(_Find())
    return found


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    return set()


def _self_attribute(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def _calls_self(statement: cst.CSTNode) -> bool:
    """Whether `statement` calls a method of ``self`` or passes ``self`` to a call (either may read any attribute)."""
    calls = m.findall(statement, m.Call(func=m.Attribute(value=m.Name("self")))
                      | m.Call(args=[m.ZeroOrMore(), m.Arg(value=m.Name("self")), m.ZeroOrMore()]))
    return bool(calls)


def _mentions(statement: cst.CSTNode, name: str, nested: bool = False) -> bool:
    """Whether `statement` uses ``self.NAME`` (`nested`: inside a function, lambda or class it defines, or
    as an assignment target: uses a list cannot stand in for)."""
    found = False
    wanted = f"self.{name}"

    class _Find(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.depth = 0

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.depth += 1

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.depth -= 1

        def visit_Lambda(self, node: cst.Lambda) -> None:
            self.depth += 1

        def leave_Lambda(self, original_node: cst.Lambda) -> None:
            self.depth -= 1

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.depth += 1

        def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
            self.depth -= 1

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            if nested and _self_attribute(node.target) == wanted:
                found = True

        def visit_Attribute(self, node: cst.Attribute) -> None:
            nonlocal found
            if _self_attribute(node) == wanted and (not nested or self.depth):
                found = True

    statement.visit(_Find())
    return found


class Cells:
    """``forward`` -> ``construct`` in the classes that become Cells, with their references (``self.forward``,
    ``super().forward``). Located on Python's own syntax tree and written as text edits: a name changes in
    place, so the rest of the text (comments, layout) stays as it is and no libcst tree is built for it."""

    _DEF = re.compile(r"def\s+forward\b")

    def __init__(self, cells: set[str], root: str) -> None:
        self.cells = cells
        self.root = root
        self.count = 0
        self.done: list[str] = []  # one line per rewrite, for the report
        self._at: list[tuple[int, int]] = []  # (offset, length) of each name to write as construct

    def rewrite(self, text: str) -> str:
        """`text` with every rename; the renames are counted and noted (in the order of a post-order walk)."""
        self._source = SourceText(text)
        self._walk(syntax.parse(text), [])
        out = text
        for offset, length in sorted(self._at, reverse=True):
            out = out[:offset] + "construct" + out[offset + length:]
        return out

    def _walk(self, node: ast.AST, scopes: list[tuple[str, bool]]) -> None:
        if isinstance(node, ast.ClassDef):
            names = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            # a class defining both keeps them (its forward is not the Cell's entry point)
            inner = [*scopes, ("class", node.name in self.cells and not {"construct", "forward"} <= names)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = [*scopes, ("function", False)]
        else:
            inner = scopes
        for child in ast.iter_child_nodes(node):
            self._walk(child, inner)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "forward" \
                and scopes and scopes[-1] == ("class", True):
            start = self._source.offset(node.lineno, self._source.char_col(node.lineno, node.col_offset))
            found = self._DEF.search(self._source.text, start)
            if found is not None:
                self._rename(found.end() - len("forward"), node.lineno, "forward -> construct")
        elif isinstance(node, ast.Attribute) and node.attr == "forward" and self._in_cell(scopes) \
                and node.end_lineno is not None and node.end_col_offset is not None:
            value = node.value
            own = isinstance(value, ast.Name) and value.id == "self"
            parent = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"
            if own or parent:
                end = self._source.offset(node.end_lineno, self._source.char_col(node.end_lineno, node.end_col_offset))
                self._rename(end - len("forward"), node.lineno, "forward reference -> construct")

    def _rename(self, offset: int, line: int, what: str) -> None:
        self._at.append((offset, len("forward")))
        self.count += 1
        self.done.append(f"{line}: {what}")

    @staticmethod
    def _in_cell(scopes: list[tuple[str, bool]]) -> bool:
        for kind, renamed in reversed(scopes):
            if kind == "class":
                return renamed
        return False
