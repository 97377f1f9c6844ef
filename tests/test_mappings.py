"""The mapping tables: schema errors name file, line and key; `torch2ms mappings check` and `stats` on the real tables."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import subprocess
import sys
from importlib import resources

import pytest

from torch2ms.mapping_tools import compute_stats, drift, split_params
from torch2ms.mappings import Entries, MappingError, build_table, load_table, parse_table_file
from torch2ms.model import Category, Confidence, Diagnostic, Edit, Fix, ParamFact, Severity, Span, Target

from conftest import run_cli

GOOD = """namespace: torch
entries:
  - api: torch.abs
    category: equivalent
    ms:
      - {api: mindspore.mint.abs, since: "2.3"}
    examples:
      - {torch: "torch.abs(x)", mindspore: "mindspore.mint.abs(x)", inputs: {x: {shape: [3], dtype: float32}}}
"""


def _error(text: str, name: str = "torch.bad.yaml") -> MappingError:
    with pytest.raises(MappingError) as info:
        parse_table_file(name, text)
    return info.value


def _data(name: str) -> str:
    return resources.files("torch2ms.data").joinpath(name).read_text(encoding="utf-8")


def test_good_file_parses() -> None:
    (entry,) = parse_table_file("torch.ok.yaml", GOOD)
    assert entry.api == "torch.abs"
    assert entry.targets[0].since == (2, 3)
    assert entry.source == "torch.ok.yaml:3"


def test_malformed_yaml_names_file_and_line() -> None:
    err = _error(GOOD.replace("category: equivalent", "category: [equivalent"))
    assert err.file == "torch.bad.yaml"
    assert err.line is not None and err.line >= 4
    assert "invalid YAML" in str(err)


def test_wrong_type_names_line_and_key() -> None:
    err = _error(GOOD.replace("since: \"2.3\"", "since: 2.3"))
    assert (err.file, err.line) == ("torch.bad.yaml", 6)
    assert err.key == "entries[0].ms[0].since"
    assert str(err).startswith("torch.bad.yaml:6: entries[0].ms[0].since:")


def test_bad_category_value() -> None:
    err = _error(GOOD.replace("category: equivalent", "category: same"))
    assert err.line == 4 and err.key == "entries[0].category"


def test_unknown_key_is_an_error() -> None:
    err = _error(GOOD.replace("    category: equivalent\n", "    category: equivalent\n    colour: red\n"))
    assert (err.line, err.key) == (5, "entries[0].colour")
    assert "unknown key 'colour'" in str(err)


def test_unknown_key_in_a_parameter_fact() -> None:
    text = GOOD.replace('since: "2.3"}', 'since: "2.3", params: [{kind: renamed, torch: a, mx: b}]}')
    err = _error(text)
    assert err.line == 6 and "unknown key 'mx'" in str(err)


def test_duplicate_key_names_both_lines() -> None:
    err = _error(GOOD.replace("    category: equivalent\n", "    category: equivalent\n    category: missing\n"))
    assert (err.line, err.key) == (5, "category")
    assert "duplicate key (first at line 4)" in str(err)


def test_entry_outside_namespace() -> None:
    err = _error(GOOD.replace("namespace: torch\n", "namespace: torch.nn\n"))
    assert err.line == 3 and "outside the file's namespace" in str(err)


def test_duplicate_entry_across_files() -> None:
    with pytest.raises(MappingError) as info:
        build_table([("torch.a.yaml", GOOD), ("torch.b.yaml", GOOD)], _data("meta.yaml"), _data("inventory.json"))
    assert info.value.file == "torch.b.yaml" and info.value.line == 3
    assert "duplicate entry 'torch.abs' (first at torch.a.yaml:3)" in str(info.value)


def test_bad_inplace_of() -> None:
    text = GOOD + "  - api: torch.abs_\n    inplace_of: torch.absolute\n"
    with pytest.raises(MappingError) as info:
        build_table([("torch.c.yaml", text)], _data("meta.yaml"), _data("inventory.json"))
    assert (info.value.file, info.value.line, info.value.key) == ("torch.c.yaml", 9, "inplace_of")
    assert "'torch.absolute' is not an entry" in str(info.value)


def test_entry_needs_category_or_inplace_of() -> None:
    err = _error("namespace: torch\nentries:\n  - api: torch.abs\n")
    assert err.line == 3


def test_split_params_reads_docstring_signatures() -> None:
    assert split_params("input, other, *, alpha=1, out=None") == [
        ("input", None), ("other", None), ("alpha", "1"), ("out", "None")]
    assert split_params("input, dim=(1, 2), *args") == [("input", None), ("dim", "(1, 2)")]



def test_docstring_signature_with_a_tuple_result() -> None:
    """The names inside a result annotation such as `-> (Tensor, Tensor)` are not parameters."""
    from torch2ms.mapping_tools import torch_params

    class Documented:  # not callable: torch_params falls back to the docstring, as for torch builtins
        __doc__ = ("\nsvd(input, some=True, compute_uv=True, *, out=None) -> (Tensor, Tensor, Tensor)\n\n"
                   "pad(input, pad=(0, 0)) -> Tensor\n")

    assert torch_params(Documented(), "svd") == [
        [("input", None), ("some", "True"), ("compute_uv", "True"), ("out", "None")]]
    assert torch_params(Documented(), "pad") == [[("input", None), ("pad", "(0, 0)")]]

def test_drift_reports_undeclared_parameters() -> None:
    def torch_fn(input, dim, keepdim=False, out=None):  # noqa: A002 - mirrors torch's names
        return input

    def ms_fn(input, dim):  # noqa: A002
        return input

    assert drift("torch.fn", torch_fn, Target("mindspore.fn"), ms_fn) == ["keepdim"]
    declared = Target("mindspore.fn", params=(ParamFact(kind="dropped", torch="keepdim"),))
    assert drift("torch.fn", torch_fn, declared, ms_fn) == []


def test_shipped_tables_load_and_are_large() -> None:
    table = load_table()
    assert len(table) >= 1800
    categories = {e.category.value for e in table.entries.values()}
    assert categories == {"equivalent", "diff_params", "missing"}
    for entry in table.entries.values():
        if entry.category.value == "missing":
            assert entry.note, entry.api


def test_the_compiled_table_pickles_each_entry_by_its_fields() -> None:
    """The compiled copy every start reads (`mappings._read_compiled`): each entry and its facts load as their
    class called with their fields (not dataclasses' slot state, read field by field), equal to the table."""
    table = load_table()
    entry = next(e for e in table.entries.values() if e.targets and e.targets[0].params and e.examples)
    for value in (entry, entry.targets[0], entry.targets[0].params[0], entry.examples[0]):
        reduced = value.__reduce__()
        assert reduced[0] is type(value) and type(value)(*reduced[1]) == value
    assert pickle.loads(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)).entries == table.entries


def test_the_compiled_table_loads_an_entry_when_it_is_first_looked_up() -> None:
    """A loaded compiled copy holds its entries pickled apart (`Entries`): loading it reads none of them, the
    sets derived from all of them come with it, and a lookup loads one entry, the same object every time."""
    table = load_table()
    loaded = pickle.loads(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
    entries = loaded.entries
    assert isinstance(entries, Entries) and not entries._loaded
    assert loaded.layer_containers == table.layer_containers and loaded.layer_sequences == table.layer_sequences
    assert not entries._loaded  # the derived sets were pickled with the table, not computed from its entries
    assert len(entries) == len(table.entries) and list(entries) == list(table.entries)
    assert "torch.cat" in entries and "torch.no_such_api" not in entries
    assert entries.get("torch.no_such_api") is None and entries.get("torch.no_such_api", 3) == 3
    with pytest.raises(KeyError):
        entries["torch.no_such_api"]
    first = entries.get("torch.cat")
    assert first == table.entries["torch.cat"] and first is entries["torch.cat"]
    assert set(entries._loaded) == {"torch.cat"}
    assert loaded.view((2, 10), "cpu").target(first) == table.view((2, 10), "cpu").target(table.entries["torch.cat"])
    # pickled again (a table a loaded copy was made from): still one pickle per entry, loaded or not
    again = pickle.loads(pickle.dumps(loaded, protocol=pickle.HIGHEST_PROTOCOL)).entries
    assert isinstance(again, Entries) and not again._loaded and again["torch.cat"] == first


def test_a_finding_with_a_fix_keeps_every_other_field() -> None:
    """`Diagnostic.with_fix` is `dataclasses.replace(diag, fix=...)`, field for field."""
    diag = Diagnostic(code="TMS102", severity=Severity.WARNING, category=Category.DIFF_PARAMS, span=Span(1, 2, 3, 4),
                      message="m", torch_api="torch.a", mindspore_api="mindspore.b", doc_url="u",
                      confidence=Confidence.LOW, runtime="confirmed")
    fix = Fix("Use b", (Edit(Span(1, 2, 1, 3), "b"),), safe=False)
    assert diag.with_fix(fix) == dataclasses.replace(diag, fix=fix)
    assert diag.with_fix(fix).with_fix(None) == diag


@pytest.mark.needs_torch
def test_stats_reports_at_least_90_percent() -> None:
    from torch2ms.mapping_tools import run_stats

    out = io.StringIO()
    assert run_stats(out, as_json=True) == 0
    data = json.loads(out.getvalue())
    assert data["source"] == "installed torch"
    assert data["total"]["percent"] >= 90.0, data["total"]
    assert data["categories"]["equivalent"] > 500
    for ns, row in data["namespaces"].items():
        assert row["classified"] <= row["public"], ns
    rows, _, _ = compute_stats(load_table(), use_installed=False)
    assert sum(r.classified for r in rows) / sum(r.public for r in rows) >= 0.9


def test_stats_text_output() -> None:
    result = run_cli("mappings", "stats")
    assert result.returncode == 0, result.stderr
    assert "torch.nn.functional" in result.stdout and "total" in result.stdout


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_mappings_check_passes() -> None:
    result = subprocess.run([sys.executable, "-m", "torch2ms", "mappings", "check"], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 problem(s)" in result.stdout


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_mappings_check_fails_on_a_bad_target(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from torch2ms.mapping_tools import check_table

    text = GOOD.replace("mindspore.mint.abs,", "mindspore.mint.absolutely_not,")
    table = build_table([("torch.t.yaml", text)], _data("meta.yaml"), _data("inventory.json"))
    result = check_table(table)
    assert not result.ok
    assert any("mindspore.mint.absolutely_not does not resolve" in p for p in result.problems)


def test_the_form_for_a_device() -> None:
    """`MappingEntry.choose`: the version's first target, unless it does not run on the device; then the
    first form verified there, else the first not known to fail there (older spellings included)."""
    from torch2ms.model import Category, MappingEntry

    mint = Target(api="mindspore.mint.nn.Conv2d", since=(2, 3), devices=("ascend",), no_kernel=("cpu",))
    older = Target(api="mindspore.nn.Conv2d", until=(2, 3), devices=("cpu", "gpu", "ascend"), verified=("cpu",))
    entry = MappingEntry(api="torch.nn.Conv2d", category=Category.EQUIVALENT, targets=(mint, older))
    assert entry.target_for((2, 10), "ascend") is mint
    cpu = entry.choose((2, 10), "cpu")
    assert cpu.target is older and cpu.verified and cpu.fallback
    assert cpu.device_note() == "mindspore.mint.nn.Conv2d has no CPU kernel; mindspore.nn.Conv2d is verified on CPU"
    gpu = entry.choose((2, 10), "gpu")
    assert gpu.target is older and not gpu.verified
    assert gpu.device_note() == "mindspore.mint.nn.Conv2d is not documented for GPU; mindspore.nn.Conv2d is documented for GPU"
    assert entry.target_for((2, 10), None) is mint  # device-blind: the preferred form
    assert entry.target_for((2, 2), "ascend") is older  # mint does not exist before 2.3
    # nothing runs on the device: the preferred form, missing there when measured to have no kernel
    alone = MappingEntry(api="torch.roll", category=Category.EQUIVALENT,
                         targets=(Target(api="mindspore.mint.roll", devices=("gpu", "ascend"), no_kernel=("cpu",)),))
    assert alone.target_for((2, 10), "cpu").api == "mindspore.mint.roll"  # type: ignore[union-attr]
    assert alone.category_for((2, 10), "cpu") is Category.MISSING
    assert alone.category_for((2, 10), "gpu") is Category.EQUIVALENT
    assert alone.category_for((2, 10), None) is Category.EQUIVALENT
    # unstated devices are no reason to leave the preferred form
    plain = MappingEntry(api="torch.abs", category=Category.EQUIVALENT,
                         targets=(Target(api="mindspore.mint.abs", since=(2, 3)), older))
    assert plain.target_for((2, 10), "gpu").api == "mindspore.mint.abs"  # type: ignore[union-attr]


def test_mappings_check_without_the_verify_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where torch and MindSpore are not installed, the check says which extra it needs (exit code 2),
    before it prints anything, instead of an internal error."""
    from torch2ms import extras

    installed = extras.importlib.util.find_spec
    monkeypatch.setattr(extras.importlib.util, "find_spec",
                        lambda name, *rest: None if name in ("torch", "mindspore") else installed(name, *rest))
    result = run_cli("mappings", "check")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("torch2ms: error: torch2ms mappings check needs torch and mindspore, not installed here "
                             "(install the verify extra: pip install 'torch2ms[verify]')\n")


def test_the_data_folder_is_the_one_importlib_resources_names() -> None:
    """`torch2ms.data.folder()` (no importlib.resources at start-up) is the folder importlib.resources gives for
    the installed package, with the tables in it."""
    from torch2ms.data import folder

    assert str(folder()) == str(resources.files("torch2ms.data"))
    assert folder().joinpath("meta.yaml").read_text(encoding="utf-8") == \
        resources.files("torch2ms.data").joinpath("meta.yaml").read_text(encoding="utf-8")
