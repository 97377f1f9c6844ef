"""Data loaders: a torch ``DataLoader`` over a map-style dataset as a ``mindspore.dataset`` pipeline.

A libcst transformation run on the torch text before the training-step rewrite; the calls are located
by the scan's resolved names and the forms come from ``data/training.yaml`` (`loaders`,
`array_datasets`, `dataset_bases`):

- ``DataLoader(ds, batch_size=B, shuffle=S, drop_last=D)`` becomes
  ``GeneratorDataset(ds, column_names=[...], shuffle=S).batch(B, drop_remainder=D)`` with torch's
  defaults written out; the user's dataset class (its NumPy code) stays, without the torch base that
  only declared the protocol. The number of columns is the length of the tuples its ``__getitem__``
  returns (a class of the same file), or the number of tensors of a ``TensorDataset``, whose tensors
  become a list of NumPy sample tuples;
- ``torch.save(m.state_dict(), path)`` becomes a checkpoint of the Cell, and
  ``m.load_state_dict(torch.load(path))`` reads it back, from the name MindSpore's save wrote; a dict of
  states saved to one file is one checkpoint of every state's tensors under KEY.NAME, and
  ``m.load_state_dict(torch.load(path)["KEY"])`` reads that state's tensors back under their names;
- a loader with a sampler, a collate function or a dataset whose samples cannot be counted is left as
  it is (the scan's TMS351 / TMS102 findings), with a note saying why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

import libcst as cst

from ..model import ApiCall
from ..training_rules import TrainingRules, load_rules
from ..transforms.fixer import ONCE
from .positions import Positions
from .training import Unsupported, _code, _walk, spell


class DataLoaders(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (Positions,)

    def __init__(self, calls: Sequence[ApiCall], root: str, rules: TrainingRules | None = None) -> None:
        super().__init__()
        self.rules = rules or load_rules()
        self.root = root
        self.apis: dict[tuple[int, int, int, int], str] = {}
        for call in calls:
            if call.api in self.rules.loaders or call.api in self.rules.array_datasets \
                    or call.api in self.rules.dataset_bases or call.api in self.rules.save_state[:2] \
                    or call.api in self.rules.load_state[:2] or call.api in self.rules.label_casts \
                    or call.api in self.rules.save_states[0]:
                s = call.span
                self.apis[(s.start_line, s.start_col, s.end_line, s.end_col)] = call.api
        self.classes: dict[str, cst.ClassDef] = {}
        self.assigned: dict[str, list[cst.BaseExpression]] = {}  # name -> values assigned to it (anywhere)
        self.losses: dict[str, str] = {}  # `name` or `self.name` -> the loss class of label_casts it holds
        self.functions: dict[str, list[cst.FunctionDef]] = {}  # the file's functions (and methods) by name
        self.count = 0
        # whether a save is written as a MindSpore checkpoint (its name suffixed, its states' tensors under
        # KEY.NAME): another load of the file is left with its finding, not read as the save wrote it
        self.checkpoints = False
        self.done: list[str] = []
        self.left: list[str] = []

    def _api(self, node: cst.CSTNode) -> str | None:
        where = self.get_metadata(Positions, node)
        return self.apis.get((where.start.line, where.start.column, where.end.line, where.end.column))

    def _line(self, node: cst.CSTNode) -> int:
        return int(self.get_metadata(Positions, node).start.line)

    def visit_Module(self, node: cst.Module) -> None:
        for child in _walk(node):
            if isinstance(child, cst.ClassDef):
                self.classes[child.name.value] = child
            elif isinstance(child, cst.FunctionDef):
                self.functions.setdefault(child.name.value, []).append(child)
            elif isinstance(child, cst.Assign) and len(child.targets) == 1 \
                    and isinstance(child.targets[0].target, cst.Name):
                self.assigned.setdefault(child.targets[0].target.value, []).append(child.value)
        # the variables (and attributes) that hold an instance of a loss of label_casts, and nothing else
        held: dict[str, set[str | None]] = {}
        for child in _walk(node):
            if isinstance(child, cst.Param):  # a parameter of that name may hold anything
                held.setdefault(child.name.value, set()).add(None)
            elif isinstance(child, cst.Assign):
                for target in child.targets:
                    if isinstance(target.target, (cst.Name, cst.Attribute)):
                        api = self._api(child.value) if isinstance(child.value, cst.Call) else None
                        held.setdefault(_code(target.target), set()).add(
                            api if api in self.rules.label_casts else None)
        self.losses = {name: api for name, apis in held.items() if len(apis) == 1 for api in apis if api is not None}

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        # a generic base is the class it subscripts (``Sampler[List[int]]``)
        kept = [b for orig, b in zip(original_node.bases, updated_node.bases)
                if self._api(orig.value.value if isinstance(orig.value, cst.Subscript) else orig.value)
                not in self.rules.dataset_bases]
        if len(kept) == len(updated_node.bases):
            return updated_node
        self.count += 1
        self.done.append(f"{self._line(original_node)}: dataset class {original_node.name.value} without its "
                         f"torch base")
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(bases=kept)
        return updated_node.with_changes(bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = original_node.func
        loss = self._api(func) if isinstance(func, cst.Call) else self.losses.get(_code(func))
        if loss in self.rules.label_casts:
            return self._cast_labels(loss, original_node, updated_node)
        api = self._api(original_node)
        if api is not None and api == self.rules.save_state[0]:
            return self._save(original_node, updated_node)
        if api is not None and api == self.rules.load_state[1]:
            return self._load(original_node, updated_node)
        if api is None or api not in self.rules.loaders:
            return updated_node
        try:
            new = self._loader(api, original_node)
        except Unsupported as exc:
            self.left.append(f"{self._line(original_node)}: {api} left as it is: {exc}")
            return updated_node
        self.count += 1
        self.done.append(f"{self._line(original_node)}: {api} as a mindspore.dataset pipeline")
        return new

    def _cast_labels(self, api: str, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """loss(logits, labels) -> the labels through the table's cast (`label_casts`), by keyword or position."""
        rule = self.rules.label_casts[api]
        index = next((i for i, a in enumerate(updated.args) if a.keyword is not None
                      and a.keyword.value == rule.keyword), None)
        if index is None:
            before = updated.args[:rule.position + 1]
            if len(before) <= rule.position or any(a.star or a.keyword is not None for a in before):
                return updated
            index = rule.position
        arg = updated.args[index]
        text = _code(arg.value)
        form = spell(rule.form, self.root)
        if any(isinstance(node, ast.Call) for node in ast.walk(ast.parse(f"({text})", mode="eval"))):
            # a computed value (`labels.flip(0)`): evaluated once, as the fix engine writes it (Fixer.written)
            value = cst.parse_expression(f"(lambda {ONCE}: {form.format(arg=ONCE)})({text})")
        else:
            if not isinstance(arg.value, (cst.Name, cst.Attribute, cst.Subscript)):
                text = f"({text})"
            value = cst.parse_expression(form.format(arg=text))
        args = [arg.with_changes(value=value) if i == index else arg for i, arg in enumerate(updated.args)]
        args = [a.with_changes(keyword=cst.Name(rule.renames[a.keyword.value]))
                if a.keyword is not None and a.keyword.value in rule.renames else a for a in args]
        self.count += 1
        self.done.append(f"{self._line(original)}: the labels of a {api} cast as MindSpore's takes them")
        return updated.with_changes(args=args)

    def _save(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """torch.save(m.state_dict(), path) -> the table's form; any other torch.save is left for its finding."""
        args = original.args
        if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
            return updated
        state = args[0].value
        if isinstance(state, cst.Dict):
            return self._save_states(original, updated, state)
        if not (isinstance(state, cst.Call) and not state.args and isinstance(state.func, cst.Attribute)
                and self._api(state) == self.rules.save_state[1]):
            return updated
        self.count += 1
        self.checkpoints = True
        self.done.append(f"{self._line(original)}: a module's state saved as a MindSpore checkpoint")
        form = spell(self.rules.save_state[2], self.root)
        return cst.parse_expression(form.format(module=_code(state.func.value), path=_code(args[1].value)))

    def _save_states(self, original: cst.Call, updated: cst.Call, states: cst.Dict) -> cst.BaseExpression:
        """torch.save({"model": m.state_dict(), ..., "epoch": e}, path) -> one checkpoint of every state's
        tensors under KEY.NAME, the other values appended; left for its finding without a state in it."""
        kinds, form, extras_form = self.rules.save_states
        saved: list[cst.DictElement] = []
        extras: list[cst.DictElement] = []
        for element in states.elements:
            value = element.value
            is_state = isinstance(value, cst.Call) and not value.args and self._api(value) in kinds
            if isinstance(element, cst.DictElement):
                (saved if is_state else extras).append(element)
        if not saved:
            return updated
        if len(saved) + len(extras) != len(states.elements) \
                or not all(isinstance(e.key, cst.SimpleString) for e in saved + extras):
            self.left.append(f"{self._line(original)}: a dict of states left as it is: a key that is not a "
                             f"string literal or an unpacked dict")
            return updated
        updated_states = cst.ensure_type(updated.args[0].value, cst.Dict)
        by_key = {_code(e.key): e for e in updated_states.elements if isinstance(e, cst.DictElement)}

        def literal(elements: list[cst.DictElement]) -> str:
            return "{" + ", ".join(f"{_code(e.key)}: {_code(by_key[_code(e.key)].value)}" for e in elements) + "}"

        text = form.format(states=literal(saved), path=_code(updated.args[1].value),
                           extras=extras_form.format(values=literal(extras)) if extras else "")
        self.count += 1
        self.checkpoints = True
        self.done.append(f"{self._line(original)}: a dict of states saved as one MindSpore checkpoint")
        return cst.parse_expression(spell(text, self.root))

    def _load(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """m.load_state_dict(torch.load(path, ...)) -> the table's form on the name the save form wrote;
        m.load_state_dict(torch.load(path, ...)["key"]) -> the state the dict-of-states form saved under key."""
        load, _apply, suffix, form, prefix, state_form = self.rules.load_state
        if len(original.args) != 1 or original.args[0].keyword is not None or original.args[0].star:
            return updated
        inner = original.args[0].value
        func = original.func
        key: str | None = None
        if isinstance(inner, cst.Subscript):
            index = inner.slice[0].slice if len(inner.slice) == 1 else None
            if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)
                    and isinstance(index.value.evaluated_value, str)):
                return updated
            key = index.value.evaluated_value
            inner = inner.value
        if not (isinstance(inner, cst.Call) and self._api(inner) == load and inner.args
                and inner.args[0].keyword is None and not inner.args[0].star and isinstance(func, cst.Attribute)):
            return updated
        path = inner.args[0].value
        literal = path.evaluated_value if isinstance(path, cst.SimpleString) else None
        if isinstance(literal, str):
            named = _code(path) if literal.endswith(suffix) else repr(literal + suffix)
        elif isinstance(path, (cst.Name, cst.Attribute)):
            text = _code(path)
            named = f"(str({text}) if str({text}).endswith({suffix!r}) else str({text}) + {suffix!r})"
        else:
            return updated
        self.count += 1
        if key is None:
            self.done.append(f"{self._line(original)}: a module's state read from a MindSpore checkpoint")
            return cst.parse_expression(spell(form, self.root).format(module=_code(func.value), path=named))
        self.done.append(f"{self._line(original)}: a module's state read from the states of a MindSpore checkpoint")
        return cst.parse_expression(spell(state_form, self.root).format(
            module=_code(func.value), path=named, prefix=repr(prefix.format(key=key))))

    def _loader(self, api: str, call: cst.Call) -> cst.BaseExpression:
        rule = self.rules.loaders[api]
        given: dict[str, str] = {}
        values: dict[str, cst.BaseExpression] = {}
        for position, arg in enumerate(call.args):
            if arg.star:
                raise Unsupported("unpacked arguments")
            name = arg.keyword.value if arg.keyword is not None else (
                rule.params[position] if position < len(rule.params) else "")
            if name not in rule.params:
                raise Unsupported(f"an argument it does not take ({name or position})")
            given[name] = _code(arg.value)
            values[name] = arg.value
        collate_param, collate_form = rule.collate
        other = [n for n in given if n not in rule.defaults and n not in rule.ignored
                 and n not in ("dataset", collate_param)]
        if other:
            raise Unsupported(f"{', '.join(other)} has no rewrite")
        if "dataset" not in values:
            raise Unsupported("no dataset")
        collate = ""
        if collate_param in values:
            function, outputs = self._collate(values[collate_param])
            collate = collate_form.format(function=function, outputs=_column_names(outputs))
        source, columns = self._source(values["dataset"])
        fields = {**rule.defaults, **{k: v for k, v in given.items() if k in rule.defaults}}
        return cst.parse_expression(spell(rule.form, self.root).format(
            source=source, columns=_column_names(columns), collate=collate, **fields))

    def _collate(self, value: cst.BaseExpression) -> tuple[str, int]:
        """A collate function's name and the number of items of the tuple it returns (a def of the file)."""
        defs = self.functions.get(value.value, []) if isinstance(value, cst.Name) else []
        if len(defs) != 1:
            raise Unsupported("the collate function is not one function defined in the file")
        lengths = {len(r.value.elements) if isinstance(r.value, cst.Tuple) else 0
                   for r in _returns(defs[0].body.body) if r.value is not None}
        if len(lengths) != 1 or 0 in lengths:
            raise Unsupported(f"{defs[0].name.value} does not return tuples of one length")
        return defs[0].name.value, lengths.pop()

    def _source(self, dataset: cst.BaseExpression, depth: int = 0) -> tuple[str, int]:
        """What the pipeline reads (source text) and the number of columns of each sample."""
        if isinstance(dataset, cst.Name) and depth == 0:
            values = self.assigned.get(dataset.value, [])
            if len(values) != 1:
                raise Unsupported(f"{dataset.value} is not assigned once in the file")
            value = values[0]
            if isinstance(value, cst.Call) and self._api(value) in self.rules.array_datasets:
                raise Unsupported(f"{dataset.value} is a dataset of tensors built outside the call")
            return dataset.value, self._source(value, depth + 1)[1]
        if not isinstance(dataset, cst.Call):
            raise Unsupported("the dataset is not built by a call in the file")
        api = self._api(dataset)
        if api in self.rules.array_datasets:
            array_rule = self.rules.array_datasets[api]
            if any(a.star or a.keyword is not None for a in dataset.args):
                raise Unsupported(f"{api} with keyword or unpacked arguments")
            arrays = ", ".join(array_rule.each.format(arg=_code(a.value)) for a in dataset.args)
            return array_rule.source.format(arrays=arrays), len(dataset.args)
        if not isinstance(dataset.func, cst.Name) or dataset.func.value not in self.classes:
            raise Unsupported("the dataset's class is not defined in the file")
        return _code(dataset), _columns(self.classes[dataset.func.value])


def _column_names(count: int) -> str:
    return "[" + ", ".join(f'"column_{i}"' for i in range(count)) + "]"


def _columns(cls: cst.ClassDef) -> int:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__getitem__":
            lengths = {_sample_length(cls, r.value) for r in _returns(stmt.body.body) if r.value is not None}
            if len(lengths) == 1:
                return lengths.pop()
            raise Unsupported(f"{cls.name.value}.__getitem__ returns samples of different lengths")
    raise Unsupported(f"{cls.name.value} has no __getitem__ (an iterable dataset)")


def _returns(body: Iterable[cst.CSTNode]) -> list[cst.Return]:
    out: list[cst.Return] = []
    for stmt in body:
        for node in _walk(stmt):
            if isinstance(node, cst.Return):
                out.append(node)
    return out


def _sample_length(cls: cst.ClassDef, value: cst.BaseExpression) -> int:
    """The number of columns of a sample `__getitem__` returns: a tuple's length; for ``self.items[i]``, the
    length of the tuples the class stores in ``self.items`` (``self.items.append((a, b))``, a list of tuples);
    otherwise one."""
    if isinstance(value, cst.Tuple):
        return len(value.elements)
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Attribute)
            and isinstance(value.value.value, cst.Name) and value.value.value.value == "self"):
        return 1
    store = value.value.attr.value
    lengths: set[int] = set()
    for node in _walk(cls):
        stored: list[cst.BaseExpression] = []
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "append" \
                and _is_self_attr(node.func.value, store) and len(node.args) == 1:
            stored = [node.args[0].value]
        elif isinstance(node, cst.Assign) and any(_is_self_attr(t.target, store) for t in node.targets):
            if isinstance(node.value, cst.List):
                stored = [e.value for e in node.value.elements]
            elif isinstance(node.value, cst.ListComp):
                stored = [node.value.elt]
            else:
                return 1
        lengths.update(len(v.elements) if isinstance(v, cst.Tuple) else 1 for v in stored)
    return lengths.pop() if len(lengths) == 1 else 1


def _is_self_attr(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
        and node.attr.value == name
