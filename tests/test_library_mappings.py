"""torchvision / torchaudio / torchtext: their table files, the resolver's import tracking, `mappings check`
when the library is not installed, and the official tables' rows all being present."""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from torch2ms import mapping_tools
from torch2ms.engine import scan_source
from torch2ms.mapping_tools import check_table, library_stats, run_stats
from torch2ms.mappings import MappingError, build_table, load_table, parse_table_file, prefilter_words
from torch2ms.model import Category

DATA = Path(__file__).resolve().parent / "data"
LIBRARIES = ("torchvision", "torchaudio", "torchtext")
TABLE = load_table()

VISION = """namespace: torchvision
entries:
  - api: torchvision.transforms.Resize
    category: equivalent
    ms:
      - {api: mindspore.dataset.vision.Resize}
  - api: torchvision.ops.nms
    category: diff_params
    ms:
      - {api: mindspore.ops.NoSuchOperator}
"""


def _data(name: str) -> str:
    return resources.files("torch2ms.data").joinpath(name).read_text(encoding="utf-8")


def _findings(source: str) -> list[tuple[str, str, int, int, int, int]]:
    """(code, api, start line, start col, end line, end col) of the API-mapping findings (TMS1xx)."""
    result = scan_source(source, "example.py", table=TABLE)
    assert result.error is None, result.error
    return [(d.code, d.torch_api or "", d.span.start_line, d.span.start_col, d.span.end_line, d.span.end_col)
            for d in result.diagnostics if d.code.startswith("TMS1")]


# ----------------------------------------------------------------------------- schema and files
def test_schema_accepts_library_namespaces() -> None:
    resize, nms = parse_table_file("torchvision.yaml", VISION)
    assert (resize.api, resize.category, resize.targets[0].api) == (
        "torchvision.transforms.Resize", Category.EQUIVALENT, "mindspore.dataset.vision.Resize")
    assert nms.source == "torchvision.yaml:7"
    for lib in ("torchaudio", "torchtext"):
        entries = parse_table_file(f"{lib}.yaml", VISION.replace("torchvision", lib))
        assert [e.api.partition(".")[0] for e in entries] == [lib, lib]
    text = VISION.replace("namespace: torchvision", "namespace: torchvision.transforms").replace(
        "torchvision.ops.nms", "torchvision.transforms.Pad")
    assert len(parse_table_file("torchvision.transforms.yaml", text)) == 2


@pytest.mark.parametrize("namespace", ["numpy", "torchvisionx", "torchvision.", "Torchvision"])
def test_schema_rejects_other_namespaces(namespace: str) -> None:
    with pytest.raises(MappingError) as info:
        parse_table_file("lib.yaml", VISION.replace("namespace: torchvision", f"namespace: {namespace}"))
    assert (info.value.file, info.value.line, info.value.key) == ("lib.yaml", 1, "namespace")


def test_library_entry_outside_its_file_namespace() -> None:
    text = VISION.replace("api: torchvision.ops.nms", "api: torchaudio.transforms.Vol")
    with pytest.raises(MappingError) as info:
        parse_table_file("torchvision.yaml", text)
    assert info.value.line == 7 and "outside the file's namespace 'torchvision'" in str(info.value)


def test_shipped_library_files() -> None:
    for lib in LIBRARIES:
        assert f"{lib}.yaml" in TABLE.files
    ours = {api: e for api, e in TABLE.entries.items() if api.partition(".")[0] in LIBRARIES}
    # the official rows are each library's file; a hand-written table of scripts/mapping_libraries.yaml is its own
    entries = {api: e for api, e in ours.items() if e.source.split(":")[0] == f"{api.partition('.')[0]}.yaml"}
    assert {e.source.split(":")[0] for api, e in ours.items() if api not in entries} <= {"torchvision.ops.misc.yaml"}
    assert len(entries) == 89
    assert sum(api.startswith("torchvision.") for api in entries) == 37
    assert sum(api.startswith("torchaudio.") for api in entries) == 27
    assert sum(api.startswith("torchtext.") for api in entries) == 25
    for api, entry in entries.items():
        assert entry.category in (Category.EQUIVALENT, Category.DIFF_PARAMS), api
        assert entry.targets and entry.targets[0].api.startswith(("mindspore.dataset.", "mindspore.ops.")), api
        assert entry.doc and entry.doc.startswith("https://www.mindspore.cn/docs/"), api
        assert entry.note, api
        assert entry.source.split(":")[0] == f"{api.partition('.')[0]}.yaml"
    # Facts the official table records, and one it misses (torchvision 0.28's Resize(antialias=)).
    flip = entries["torchvision.transforms.RandomHorizontalFlip"].targets[0]
    assert [(f.kind, f.torch, f.ms) for f in flip.params] == [("renamed", "p", "prob")]
    resize = entries["torchvision.transforms.Resize"].targets[0]
    assert {(f.kind, f.torch) for f in resize.params} == {("dropped", "max_size"), ("dropped", "antialias")}
    assert entries["torchvision.transforms.ColorJitter"].targets[0].api == "mindspore.dataset.vision.RandomColorAdjust"
    assert entries["torchvision.transforms.CenterCrop"].category is Category.EQUIVALENT
    # A parameter of the old torchvision the table describes, gone from the current one, is not a fact.
    affine = entries["torchvision.transforms.RandomAffine"].targets[0]
    assert "fillcolor" not in {f.torch for f in affine.params}


def test_roots_and_modules_come_from_the_tables() -> None:
    assert TABLE.roots == frozenset({"torch", *LIBRARIES, "einops"})  # einops: scripts/mapping_libraries.yaml
    assert {"torchvision", "torchvision.transforms", "torchvision.datasets", "torchvision.ops",
            "torchaudio.transforms", "torchtext.data.functional"} <= TABLE.modules
    assert "torch.nn" in TABLE.modules  # meta.yaml's torch modules stay
    assert "torchvision.transforms.Resize" not in TABLE.modules
    # 'torch' is a part of every domain library's name; einops code is read where no torch is named
    assert prefilter_words(TABLE.roots) == ("einops", "torch")
    assert prefilter_words(frozenset({"torch", "jax", "jaxlib"})) == ("jax", "torch")


# ----------------------------------------------------------------------------- the official rows
def test_every_official_row_is_present() -> None:
    """tests/data/official_rows.csv: every torch-side name of both official tables (newest and r2.4.10),
    copied from the reference data; `present_as` is the entry that covers it (the real spelling where
    the docs have a typo, such as torch.nn.LogSoftMax)."""
    with (DATA / "official_rows.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 928
    assert sum(r["torch_api"].partition(".")[0] in LIBRARIES for r in rows) == 89
    absent = [r["torch_api"] for r in rows if r["present_as"] not in TABLE.entries]
    assert absent == [], f"{len(absent)} official rows without an entry: {absent[:20]}"
    renamed = {r["torch_api"]: r["present_as"] for r in rows if r["torch_api"] != r["present_as"]}
    assert renamed["torch.nn.LogSoftMax"] == "torch.nn.LogSoftmax"
    assert all(a.lower().rstrip("_") == p.lower().rstrip("_") for a, p in renamed.items()), renamed


# ----------------------------------------------------------------------------- the scanner
def test_scan_reports_torchvision_calls_with_exact_spans() -> None:
    source = (
        "import torch\n"
        "import torchvision\n"
        "import torchvision.transforms as T\n"
        "from torchvision import transforms, datasets\n"
        "from torchvision.transforms import Resize, Normalize as Norm\n"
        "from torchvision.models import resnet18\n"
        "\n"
        "pipeline = T.Compose([Resize(256), T.CenterCrop(224), transforms.ToTensor(), Norm([0.5], [0.5])])\n"
        "train = datasets.CIFAR10(root='data', train=True, transform=pipeline)\n"
        "flip = torchvision.transforms.RandomHorizontalFlip(p=0.3)\n"
        "keep = torchvision.ops.nms(torch.rand(4, 4), torch.rand(4), 0.5)\n"
        "model = resnet18()\n"
        "model.to('cpu')\n"
    )
    assert _findings(source) == [
        ("TMS101", "torchvision.transforms.Compose", 8, 11, 8, 97),
        ("TMS102", "torchvision.transforms.Resize", 8, 22, 8, 33),
        ("TMS101", "torchvision.transforms.CenterCrop", 8, 35, 8, 52),
        ("TMS102", "torchvision.transforms.ToTensor", 8, 54, 8, 75),
        ("TMS102", "torchvision.transforms.Normalize", 8, 77, 8, 95),
        ("TMS102", "torchvision.datasets.CIFAR10", 9, 8, 9, 69),
        ("TMS102", "torchvision.transforms.RandomHorizontalFlip", 10, 7, 10, 57),
        ("TMS102", "torchvision.ops.nms", 11, 7, 11, 64),
        ("TMS101", "torch.rand", 11, 27, 11, 43),
        ("TMS101", "torch.rand", 11, 45, 11, 58),
        # not in the official tables: unmapped, like a torch API the tables lack
        ("TMS104", "torchvision.models.resnet18", 12, 8, 12, 18),
    ]
    # nothing is known about what resnet18() returns: .to() is only a possible Tensor method (TMS105), and
    # that guess gives way to the device-move finding of the same call (one finding per use)
    moves = [(d.code, d.torch_api) for d in scan_source(source, "example.py", table=TABLE).diagnostics
             if d.span.start_line == 13]
    assert moves == [("TMS341", "torch.Tensor.to")]


def test_scan_messages_name_the_target_and_the_facts() -> None:
    source = "from torchvision.transforms import RandomHorizontalFlip\nflip = RandomHorizontalFlip(p=0.3)\n"
    (diag,) = [d for d in scan_source(source, "f.py", table=TABLE).diagnostics if d.code.startswith("TMS1")]
    assert diag.mindspore_api == "mindspore.dataset.vision.RandomHorizontalFlip"
    assert "'p' is 'prob' in MindSpore" in diag.message
    assert diag.doc_url and diag.doc_url.startswith("https://www.mindspore.cn/docs/")


def test_operator_class_targets_get_no_automatic_fix() -> None:
    # torchvision.ops.nms(boxes, scores, t) is not NMSWithMask(boxes, scores, t): a human must rewrite it.
    source = "import torch, torchvision\nkeep = torchvision.ops.nms(torch.rand(4, 4), torch.rand(4), 0.5)\n"
    (diag,) = [d for d in scan_source(source, "f.py", table=TABLE).diagnostics
               if d.torch_api == "torchvision.ops.nms"]
    assert diag.code == "TMS102" and diag.fix is None
    assert "MindSpore requires 'bboxes'" in diag.message


@pytest.mark.parametrize(("source", "expected"), [
    ("import torchvision.transforms\nt = torchvision.transforms.CenterCrop(8)\n",
     [("TMS101", "torchvision.transforms.CenterCrop", 2, 4, 2, 40)]),
    ("from torchvision.transforms import *\nt = CenterCrop(8)\n",
     [("TMS101", "torchvision.transforms.CenterCrop", 2, 4, 2, 17)]),
    ("import torchvision as tv\nt = tv.transforms.Resize(8, antialias=True)\n",
     [("TMS102", "torchvision.transforms.Resize", 2, 4, 2, 43)]),
    ("import torchaudio.transforms as AT\nm = AT.MelSpectrogram(sample_rate=16000)\n",
     [("TMS102", "torchaudio.transforms.MelSpectrogram", 2, 4, 2, 40)]),
    ("from torchtext.data.functional import simple_space_split\ntokens = simple_space_split(['a b'])\n",
     [("TMS102", "torchtext.data.functional.simple_space_split", 2, 9, 2, 36)]),
    ("from torchaudio import transforms\nv = transforms.Vol(0.5)\n",
     [("TMS101", "torchaudio.transforms.Vol", 2, 4, 2, 23)]),
    ("from torchvision import *\nt = transforms.CenterCrop(8)\n",
     [("TMS101", "torchvision.transforms.CenterCrop", 2, 4, 2, 28)]),
])
def test_import_forms(source: str, expected: list[tuple[str, str, int, int, int, int]]) -> None:
    assert _findings(source) == expected


def test_names_not_imported_from_a_library_are_not_reported() -> None:
    # `transforms` is a local module here; torchvision appears only in a comment.
    source = "import transforms  # not torchvision\nt = transforms.Resize(8)\n"
    assert _findings(source) == []
    assert _findings("import numpy as np\nx = np.zeros(3)\n") == []


def test_equivalent_entry_reports_a_parameter_it_lacks() -> None:
    assert _findings("import torchvision.transforms as T\nT.CenterCrop(8)\n") == [
        ("TMS101", "torchvision.transforms.CenterCrop", 2, 0, 2, 15)]
    (diag,) = [d for d in scan_source("import torchvision.transforms as T\nT.Resize(8, antialias=True)\n",
                                      "f.py", table=TABLE).diagnostics if d.code.startswith("TMS1")]
    assert diag.code == "TMS102" and "'antialias' has no MindSpore counterpart" in diag.message


# ----------------------------------------------------------------------------- mappings check / stats
def _library_table() -> object:
    return build_table([("torchvision.yaml", VISION)], _data("meta.yaml"), _data("inventory.json"))


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_check_counts_an_absent_library_as_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torchvision" else real(name, *a))
    result = check_table(_library_table())  # type: ignore[arg-type]
    assert result.not_checked == {"torchvision": 2}
    assert result.not_checked_reason == {"torchvision": "torchvision not installed"}
    # The MindSpore targets are still resolved: the bad one is the only problem.
    assert result.targets == 2
    assert len(result.problems) == 1 and "mindspore.ops.NoSuchOperator does not resolve" in result.problems[0]
    assert not any("torchvision.transforms.Resize" in p for p in result.problems)
    assert result.warnings == []  # no example can run without the library: not a warning


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_check_counts_a_broken_library_as_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    real_spec, real_import = importlib.util.find_spec, importlib.import_module

    def fake_import(name: str, *args: object) -> object:
        if name.partition(".")[0] == "torchvision":
            raise RuntimeError("operator torchvision::nms does not exist")
        return real_import(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "torchvision" else real_spec(name, *a))
    monkeypatch.setattr(importlib, "import_module", fake_import)
    result = check_table(_library_table())  # type: ignore[arg-type]
    assert result.not_checked == {"torchvision": 2}
    assert result.not_checked_reason["torchvision"] == "torchvision cannot be imported (RuntimeError)"


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_check_of_the_shipped_library_files_in_this_environment() -> None:
    files = [(f"{lib}.yaml", _data(f"{lib}.yaml")) for lib in LIBRARIES]
    table = build_table(files, _data("meta.yaml"), _data("inventory.json"))
    result = check_table(table)
    assert result.problems == [], result.problems[:5]
    assert result.targets == 89  # every MindSpore target resolves in the installed MindSpore
    for lib, count in (("torchvision", 37), ("torchaudio", 27), ("torchtext", 25)):
        if importlib.util.find_spec(lib) is None:
            assert result.not_checked[lib] == count
            assert result.not_checked_reason[lib] == f"{lib} not installed"
        else:  # installed and importable: its names are resolved (and a failure is a problem above)
            assert result.not_checked.get(lib, 0) in (0, count)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_run_check_prints_not_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torchvision" else real(name, *a))
    (tmp_path / "torchvision.yaml").write_text(VISION.replace("mindspore.ops.NoSuchOperator", "mindspore.ops.NMSWithMask"),
                                               encoding="utf-8")
    out = io.StringIO()
    assert mapping_tools.run_check(out, directory=str(tmp_path)) == 0
    text = out.getvalue()
    assert "not checked: 2 torchvision source(s): torchvision not installed" in text
    assert "resolved 0 torch APIs (2 not checked) and 2 MindSpore targets" in text
    assert "0 problem(s)" in text


def test_stats_show_the_library_namespaces() -> None:
    libs = library_stats(TABLE)
    assert libs["torchvision.transforms"]["entries"] == 25
    assert libs["torchvision.datasets"]["entries"] == 9
    assert libs["torchvision.ops"] == {"entries": 3, "diff_params": 3}
    assert libs["torchvision.ops.misc"] == {"entries": 1, "missing": 1}  # scripts/mapping_libraries.yaml
    assert sum(v["entries"] for ns, v in libs.items() if ns.partition(".")[0] in LIBRARIES) == 89 + 1
    assert libs["einops.layers.torch"] == {"entries": 3, "missing": 3}  # scripts/mapping_libraries.yaml
    assert not any(ns.startswith("torch.") or ns == "torch" for ns in libs)
    out = io.StringIO()
    assert run_stats(out, as_json=True) == 0
    assert json.loads(out.getvalue())["libraries"] == libs
    out = io.StringIO()
    assert run_stats(out) == 0
    text = out.getvalue()
    assert "other libraries" in text and "torchaudio.transforms" in text and "torchtext.datasets" in text
