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
  ``m.load_state_dict(torch.load(path))`` reads it back, from the name MindSpore's save wrote;
- a loader with a sampler, a collate function or a dataset whose samples cannot be counted is left as
  it is (the scan's TMS351 / TMS102 findings), with a note saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst
from libcst.metadata import PositionProvider

from ..model import ApiCall
from .training import TrainingRules, Unsupported, _code, _walk, load_rules, spell


class DataLoaders(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, calls: Sequence[ApiCall], root: str, rules: TrainingRules | None = None) -> None:
        super().__init__()
        self.rules = rules or load_rules()
        self.root = root
        self.apis: dict[tuple[int, int, int, int], str] = {}
        for call in calls:
            if call.api in self.rules.loaders or call.api in self.rules.array_datasets \
                    or call.api in self.rules.dataset_bases or call.api in self.rules.save_state[:2] \
                    or call.api in self.rules.load_state[:2]:
                s = call.span
                self.apis[(s.start_line, s.start_col, s.end_line, s.end_col)] = call.api
        self.classes: dict[str, cst.ClassDef] = {}
        self.assigned: dict[str, list[cst.BaseExpression]] = {}  # name -> values assigned to it (anywhere)
        self.count = 0
        self.done: list[str] = []
        self.left: list[str] = []

    def _api(self, node: cst.CSTNode) -> str | None:
        where = self.get_metadata(PositionProvider, node)
        return self.apis.get((where.start.line, where.start.column, where.end.line, where.end.column))

    def _line(self, node: cst.CSTNode) -> int:
        return int(self.get_metadata(PositionProvider, node).start.line)

    def visit_Module(self, node: cst.Module) -> None:
        for child in _walk(node):
            if isinstance(child, cst.ClassDef):
                self.classes[child.name.value] = child
            elif isinstance(child, cst.Assign) and len(child.targets) == 1 \
                    and isinstance(child.targets[0].target, cst.Name):
                self.assigned.setdefault(child.targets[0].target.value, []).append(child.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        kept = [b for orig, b in zip(original_node.bases, updated_node.bases)
                if self._api(orig.value) not in self.rules.dataset_bases]
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

    def _save(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """torch.save(m.state_dict(), path) -> the table's form; any other torch.save is left for its finding."""
        args = original.args
        if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
            return updated
        state = args[0].value
        if not (isinstance(state, cst.Call) and not state.args and isinstance(state.func, cst.Attribute)
                and self._api(state) == self.rules.save_state[1]):
            return updated
        self.count += 1
        self.done.append(f"{self._line(original)}: a module's state saved as a MindSpore checkpoint")
        form = spell(self.rules.save_state[2], self.root)
        return cst.parse_expression(form.format(module=_code(state.func.value), path=_code(args[1].value)))

    def _load(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """m.load_state_dict(torch.load(path, ...)) -> the table's form on the name the save form wrote."""
        load, _apply, suffix, form = self.rules.load_state
        if len(original.args) != 1 or original.args[0].keyword is not None or original.args[0].star:
            return updated
        inner = original.args[0].value
        func = original.func
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
        self.done.append(f"{self._line(original)}: a module's state read from a MindSpore checkpoint")
        return cst.parse_expression(spell(form, self.root).format(module=_code(func.value), path=named))

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
        other = [n for n in given if n not in rule.defaults and n not in rule.ignored and n != "dataset"]
        if other:
            raise Unsupported(f"{', '.join(other)} has no rewrite")
        if "dataset" not in values:
            raise Unsupported("no dataset")
        source, columns = self._source(values["dataset"])
        fields = {**rule.defaults, **{k: v for k, v in given.items() if k in rule.defaults}}
        names = "[" + ", ".join(f'"column_{i}"' for i in range(columns)) + "]"
        return cst.parse_expression(spell(rule.form, self.root).format(source=source, columns=names, **fields))

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


def _columns(cls: cst.ClassDef) -> int:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__getitem__":
            lengths = {len(r.value.elements) if isinstance(r.value, cst.Tuple) else 1
                       for r in _returns(stmt.body.body) if r.value is not None}
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
