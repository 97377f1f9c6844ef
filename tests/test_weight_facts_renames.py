"""The fallback that copies weights by name in the verify workers reads MindSpore's spellings from the tables'
weight facts (their one source), not from a list of its own."""

from __future__ import annotations

from torch2ms.mappings import load_table
from torch2ms.model import WeightParam
from torch2ms.weights.facts import Facts


def test_renames_come_from_the_tables_weight_facts() -> None:
    renames = Facts.from_entries(load_table().entries.values()).renames()
    assert renames["gamma"] == "weight" and renames["beta"] == "bias"
    assert renames["moving_mean"] == "running_mean" and renames["moving_variance"] == "running_var"
    assert renames["embedding_table"] == "weight"


def test_renames_leave_out_disagreeing_prefixes_placeholders_and_transforms() -> None:
    facts = Facts({
        ("t.A", "m.A"): (WeightParam("weight", "gamma"), WeightParam("w_{l}", "kernel_{l}"),
                         WeightParam("linear1", "dense1", layer="t.Linear", ms_layer="m.Dense"),
                         WeightParam("scale", "s", transform=(("unsqueeze", 0),))),
        ("t.B", "m.B"): (WeightParam("bias", "gamma"), WeightParam("running_var", "var")),
    })
    # gamma is weight in one form and bias in another: no single answer, so no rename
    assert facts.renames() == {"var": "running_var"}
