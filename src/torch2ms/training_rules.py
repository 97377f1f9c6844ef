"""The facts of ``data/training.yaml``: which torch APIs play which part in a training loop (backward, the
optimizer's step, clipping), data loaders and datasets, saved states, and the labels of losses whose MindSpore
class takes another dtype. `torch2ms migrate` rewrites by them (migrate/training.py, migrate/data_loaders.py);
the scan's fixes cast the labels of a loss call (checks.layer_call)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .data import folder as data_folder
from .mappings import _validated, compiled

TRAINING_FILE = "training.yaml"


@dataclass(frozen=True)
class ClipRule:
    params: tuple[str, ...]
    form: str
    require: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LoaderRule:
    params: tuple[str, ...]
    defaults: dict[str, str]
    ignored: frozenset[str]
    form: str
    collate: tuple[str, str] = ("", "")  # (the torch parameter, the MindSpore form appended to the batch)


@dataclass(frozen=True)
class ArrayDatasetRule:
    each: str
    source: str


@dataclass(frozen=True)
class LabelCast:
    position: int
    keyword: str
    form: str
    renames: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainingRules:
    """The facts of ``data/training.yaml``."""

    backward: frozenset[str]
    optimizer_step: frozenset[str]
    zero_grad: frozenset[str]
    value_and_grad: str
    optimizer_parameters: str
    accumulate: str
    clip: dict[str, ClipRule]
    loaders: dict[str, LoaderRule] = field(default_factory=dict)
    array_datasets: dict[str, ArrayDatasetRule] = field(default_factory=dict)
    dataset_bases: frozenset[str] = frozenset()
    save_state: tuple[str, str, str] = ("", "", "")  # (torch save, torch state, MindSpore form)
    save_states: tuple[frozenset[str], str, str] = (frozenset(), "", "")  # (torch states, form, extras form)
    # (torch load, torch apply, suffix, MindSpore form, prefix of a state's names, form of one state of a dict)
    load_state: tuple[str, str, str, str, str, str] = ("", "", "", "", "", "")
    label_casts: dict[str, LabelCast] = field(default_factory=dict)

    def role(self, api: str) -> str | None:
        for name, apis in (("backward", self.backward), ("step", self.optimizer_step),
                           ("zero_grad", self.zero_grad), ("clip", frozenset(self.clip))):
            if api in apis:
                return name
        return None


def parse_rules(text: str, file_name: str = TRAINING_FILE) -> TrainingRules:
    doc = _validated(text, file_name, "training_schema.yaml")
    return TrainingRules(
        backward=frozenset(doc["backward"]), optimizer_step=frozenset(doc["optimizer_step"]),
        zero_grad=frozenset(doc["zero_grad"]), value_and_grad=str(doc["value_and_grad"]),
        optimizer_parameters=str(doc["optimizer_parameters"]), accumulate=str(doc["accumulate"]),
        clip={api: ClipRule(tuple(rule["params"]), str(rule["form"]),
                            {k: tuple(str(x) for x in v) for k, v in (rule.get("require") or {}).items()})
              for api, rule in doc["clip"].items()},
        loaders={api: LoaderRule(tuple(rule["params"]), dict(rule["defaults"]), frozenset(rule["ignored"]),
                                 str(rule["form"]), (str(rule["collate"]["param"]), str(rule["collate"]["form"])))
                 for api, rule in doc["loaders"].items()},
        array_datasets={api: ArrayDatasetRule(str(rule["each"]), str(rule["source"]))
                        for api, rule in doc["array_datasets"].items()},
        dataset_bases=frozenset(doc["dataset_bases"]),
        save_state=(str(doc["save_state"]["save"]), str(doc["save_state"]["state"]), str(doc["save_state"]["form"])),
        save_states=(frozenset(doc["save_states"]["states"]), str(doc["save_states"]["form"]),
                     str(doc["save_states"]["extras"])),
        load_state=(str(doc["load_state"]["load"]), str(doc["load_state"]["apply"]), str(doc["load_state"]["suffix"]),
                    str(doc["load_state"]["form"]), str(doc["load_state"]["prefix"]),
                    str(doc["load_state"]["state_form"])),
        label_casts={api: LabelCast(int(rule["position"]), str(rule["keyword"]), str(rule["form"]),
                                          {str(k): str(v) for k, v in rule["renames"].items()})
                     for api, rule in doc["label_casts"].items()})


@functools.lru_cache(maxsize=1)
def load_rules() -> TrainingRules:
    """The installed rules: validated against their schema once, then read from their compiled copy (a scan that
    meets a layer call needs neither yaml nor jsonschema)."""
    root = data_folder()
    text = root.joinpath(TRAINING_FILE).read_text(encoding="utf-8")
    schema = root.joinpath("training_schema.yaml").read_text(encoding="utf-8")
    return compiled("training", TrainingRules, [text, schema], (__file__,), lambda: parse_rules(text))
