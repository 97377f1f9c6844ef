"""Migration-readiness checks (TMS3xx): golden files, markers, fixes, codes and real-world sources.

Each tests/golden/readiness/<case>.py is scanned with only the TMS3 codes selected (so
the growing mapping table does not churn these files) and compared with <case>.txt.
The inputs carry their own expectations: a line marked ``# expect: TMS3xx[, TMS3yy]``
must get exactly those codes, a line marked ``# expect: none`` must get none, and a
finding on an unmarked line fails the test.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest

from torch2ms.codes import CODES
from torch2ms.config import Config
from torch2ms.engine import parse, scan_source
from torch2ms.fix import apply_edits
from torch2ms.mappings import load_table
from torch2ms.model import Category, Diagnostic
from torch2ms.readiness import KIND_OF_CODE, KINDS, READINESS_CODES, kind_of, readiness_diagnostics
from torch2ms.source import SourceText
from torch2ms.resolve import resolve

from conftest import GOLDEN, check_golden

READINESS = GOLDEN / "readiness"
CASES = sorted(p for p in READINESS.glob("*.py") if not p.name.endswith(".fixed.py"))
ONLY_READINESS = Config(select=("TMS3",))
_EXPECT = re.compile(r"#\s*expect:\s*(?P<what>none|TMS3\d\d(?:\s*,\s*TMS3\d\d)*)")


def scan(text: str, config: Config = ONLY_READINESS) -> list[Diagnostic]:
    result = scan_source(text, "case.py", config)
    assert result.error is None, result.error
    return list(result.diagnostics)


_TABLE_FACT = re.compile(r", and the mapping table (maps it to \S+|knows no MindSpore sparse equivalent for it)$")


def render(diags: list[Diagnostic]) -> str:
    """The golden text. What the mapping table knows about a sparse op is left out (it grows; a
    separate test checks that part against the live table)."""
    out = []
    for d in diags:
        if d.code == "TMS311" and _TABLE_FACT.search(d.message):
            d = replace(d, message=_TABLE_FACT.sub(", and <what the mapping table knows>", d.message),
                        mindspore_api="<table>")
        fix = ""
        if d.fix is not None:
            fix = f" [fix: {d.fix.title}, {'safe' if d.fix.safe else 'unsafe'}]"
        out.append(f"{d.span.start_line}:{d.span.start_col + 1}-{d.span.end_line}:{d.span.end_col + 1} {d.code} "
                   f"{d.confidence.value} {d.torch_api} -> {d.mindspore_api}{fix}\n    {d.message}\n")
    return "".join(out)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_readiness_golden(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    diags = scan(source)
    assert all(d.category is Category.READINESS for d in diags)
    check_golden(case.with_suffix(".txt"), render(diags))
    found: dict[int, set[str]] = {}
    for d in diags:
        found.setdefault(d.span.start_line, set()).add(d.code)
    marked: dict[int, set[str]] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match is None:
            continue
        what = match.group("what")
        marked[number] = set() if what == "none" else {c.strip() for c in what.split(",")}
    for number, codes in marked.items():
        assert found.get(number, set()) == codes, f"{case.name}:{number}: expected {codes or 'none'}, got {found.get(number)}"
    unmarked = sorted(set(found) - set(marked))
    assert not unmarked, f"{case.name}: findings on unmarked lines {unmarked}: " + \
        ", ".join(f"{n}: {found[n]}" for n in unmarked)


def test_every_check_has_positive_and_negative_cases() -> None:
    positives: set[str] = set()
    negatives = 0
    for case in CASES:
        text = case.read_text(encoding="utf-8")
        positives |= set(re.findall(r"TMS3\d\d", "".join(m.group(0) for m in _EXPECT.finditer(text))))
        negatives += text.count("# expect: none")
    assert positives == set(READINESS_CODES)
    assert negatives >= 2 * len(KINDS)


def test_codes_are_registered_with_kinds() -> None:
    registered = {code for code in CODES if code.startswith("TMS3")}
    assert registered == set(KIND_OF_CODE)
    for code in READINESS_CODES:
        info = CODES[code]
        assert info.category is Category.READINESS
        assert info.doc_url and info.doc_url.startswith("https://www.mindspore.cn/")
        assert kind_of(code) in KINDS
    assert set(KIND_OF_CODE.values()) == set(KINDS)
    assert kind_of("TMS101") is None


# ------------------------------------------------------------------ messages
def _by_code(diags: list[Diagnostic], code: str) -> list[Diagnostic]:
    return [d for d in diags if d.code == code]


def test_second_order_lists_network_apis() -> None:
    diags = scan((READINESS / "second_order.py").read_text(encoding="utf-8"))
    grad = _by_code(diags, "TMS301")[0]
    # forward's ops and the layers built in __init__ of the file's modules
    for api in ("torch.nn.Linear", "torch.nn.LayerNorm", "torch.nn.functional.gelu"):
        assert api in grad.message
    assert "torch.rand" not in grad.message  # not on the network path


def test_second_order_without_network_code() -> None:
    text = "import torch\n\ndef penalty(out, x):\n    return torch.autograd.grad(out, x, create_graph=True)\n"
    (diag,) = scan(text)
    assert diag.code == "TMS301" and "no network code" in diag.message


def test_sparse_says_whether_the_table_knows_an_equivalent() -> None:
    diags = _by_code(scan((READINESS / "sparse.py").read_text(encoding="utf-8")), "TMS311")
    table = load_table()
    version = Config().version
    for diag in diags:
        if diag.torch_api in ("torch.nn.Embedding", "torch.nn.functional.embedding"):
            assert "sparse=True" in diag.message
            continue
        entry = table.lookup(diag.torch_api or "")
        target = entry.target_for(version, "cpu") if entry is not None else None
        if target is not None and entry is not None and entry.category_for(version, "cpu") is not Category.MISSING:
            assert target.api in diag.message and diag.mindspore_api == target.api
        else:
            assert "knows no MindSpore sparse equivalent" in diag.message and diag.mindspore_api is None


def test_training_loop_is_one_finding_per_loop() -> None:
    diags = scan((READINESS / "training_loop.py").read_text(encoding="utf-8"))
    loops = _by_code(diags, "TMS361")
    assert [d.span.start_line for d in loops] == [12, 22]  # the inner batch loop and the step function
    assert "value_and_grad" in loops[0].message and "zero_grad" in loops[0].message


def test_readiness_codes_can_be_switched_off() -> None:
    text = (READINESS / "training_loop.py").read_text(encoding="utf-8")
    assert not any(d.code.startswith("TMS3") for d in scan(text, Config(ignore=("TMS3",))))
    assert {d.code for d in scan(text, Config(select=("TMS361",)))} == {"TMS361"}
    # the API-table findings for the same calls are still there alongside
    both = {d.code[:4] for d in scan(text, Config())}
    assert {"TMS1", "TMS3"} <= both


def test_noqa_suppresses_a_readiness_finding() -> None:
    text = "import torch\ntorch.manual_seed(0)  # noqa: TMS365\ntorch.manual_seed(1)\n"
    assert [d.span.start_line for d in scan(text)] == [3]


# ------------------------------------------------------------------ fixes
def test_container_fixes_golden_and_valid() -> None:
    case = READINESS / "containers.py"
    text = case.read_text(encoding="utf-8")
    diags = [d for d in scan(text) if d.fix is not None]
    assert {d.code for d in diags} == {"TMS321", "TMS322"}
    assert all(not d.fix.safe for d in diags if d.fix is not None)  # behaviour changes: parameters get registered
    edits = []
    for diag in diags:
        assert diag.fix is not None
        edits.extend(diag.fix.edits)
    fixed = apply_edits(text, edits)
    check_golden(READINESS / "containers.fixed.py", fixed)
    ast.parse(fixed)
    assert not [d for d in scan(fixed) if d.code in ("TMS321", "TMS322")]
    assert fixed.count("import mindspore\n") == 1
    assert "self.pair = mindspore.nn.CellList(list((nn.Linear(width, width), nn.Tanh())))" in fixed


@pytest.mark.needs_numpy
@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_container_fix_runs_in_mindspore() -> None:
    """The wrapped containers are what MindSpore needs: the layers' parameters become the Cell's."""
    import numpy as np
    import mindspore

    class Tower(mindspore.nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.layers = mindspore.nn.CellList([mindspore.nn.Dense(3, 3), mindspore.nn.ReLU()])
            self.pair = mindspore.nn.CellList([mindspore.nn.Dense(3, 3), mindspore.nn.Tanh()])
            self.heads = mindspore.nn.CellDict({"cls": mindspore.nn.Dense(3, 2)})
            self.scales = mindspore.ParameterTuple(
                [mindspore.Parameter(mindspore.Tensor(np.ones(3, np.float32)), name=f"scale{i}") for i in range(2)])

        def construct(self, x):  # type: ignore[no-untyped-def]
            for layer in self.layers:
                x = layer(x)
            for layer in self.pair:
                x = layer(x)
            return self.heads["cls"](x * self.scales[0] * self.scales[1])

    net = Tower()
    out = net(mindspore.Tensor(np.ones((2, 3), np.float32)))
    assert out.shape == (2, 2)
    names = {p.name for p in net.trainable_params()}
    assert len([n for n in names if n.startswith(("layers.", "pair.", "heads."))]) == 6  # 3 Dense x (weight, bias)


def test_unparenthesized_tuple_gets_no_fix() -> None:
    text = ("import torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.pair = nn.Linear(2, 2), nn.ReLU()\n")
    (diag,) = scan(text, Config(select=("TMS321",)))
    assert diag.code == "TMS321" and diag.fix is None


@pytest.mark.needs_mindspore
def test_named_mindspore_apis_exist() -> None:
    """Every MindSpore API a readiness finding names is real in the installed MindSpore."""
    import importlib

    names: set[str] = set()
    for case in CASES:
        for diag in scan(case.read_text(encoding="utf-8")):
            if diag.mindspore_api:
                names.add(diag.mindspore_api)
    assert len(names) >= 12
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        obj = None
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr, None)
            break
        if obj is None:
            missing.append(name)
    assert not missing, missing


# ------------------------------------------------------------------ robustness and real code
ODD_SOURCES = [
    "import torch\nclass A(B, metaclass=M): pass\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        self.x: list = [torch.nn.Linear(1, 1)]\n"
    "        (self.a, self.b) = [1, 2]\n        self.d = {**other}\n",
    "import torch\nfor x in y:\n    x.backward()\n    (lambda: opt.step())()\n",
    "import torch\nwhile True:\n    loss.backward()\n    opt.step()\nelse:\n    pass\n",
    "import torch\nmatch x:\n    case [a, *rest]:\n        a.backward(); opt.step()\n",
    "import torch\ntry:\n    pass\nexcept E as e:\n    e.to(device)\n",
    "import torch\ndef f(): torch.autograd.grad(x, y, create_graph=True)\n",
    "import torch\nx.to(\n    device)\nm.train(1, 2)\nm.eval(flag)\n",
    "from torch import *\nclass F(autograd.Function): pass\n",
    "import torch\nclass D(torch.utils.data.IterableDataset):\n    def __iter__(self):\n        yield torch.ones(1)\n",
]


@pytest.mark.parametrize("source", ODD_SOURCES)
def test_odd_sources_do_not_fail(source: str) -> None:
    result = scan_source(source, "odd.py", Config())
    assert result.error is None, result.error


def test_checks_are_pure_functions_of_the_tree() -> None:
    text = (READINESS / "training_loop.py").read_text(encoding="utf-8")
    tree = parse(text)
    table = load_table()
    calls = resolve(tree, table, SourceText(text))
    first = readiness_diagnostics(tree, calls, text, table.view(Config().version, Config().device))
    again = readiness_diagnostics(tree, calls, text, table.view(Config().version, Config().device))
    assert first == again and first


def test_example_project(example_project: Path) -> None:
    found: dict[str, set[str]] = {}
    for path in sorted(example_project.rglob("*.py")):
        result = scan_source(path.read_text(encoding="utf-8"), str(path), ONLY_READINESS)
        assert result.error is None
        for diag in result.diagnostics:
            found.setdefault(diag.code, set()).add(path.name)
    assert "model.py" in found.get("TMS331", set())  # the network classes
    assert "train.py" in found.get("TMS361", set())  # the training loop
    assert "data.py" in found.get("TMS351", set())  # Dataset / DataLoader
    assert {"TMS341", "TMS365"} <= set(found)


@pytest.mark.needs_torch
def test_torch_sources_have_no_internal_errors() -> None:
    import torch

    files = sorted(Path(torch.__file__).parent.rglob("*.py"))[::40]
    assert len(files) > 30
    codes: set[str] = set()
    for path in files:
        result = scan_source(path.read_text(encoding="utf-8", errors="replace"), str(path), Config())
        errors = [d for d in result.diagnostics if d.code == "TMS904"]
        assert not errors, f"{path}: {errors[0].message}"
        codes |= {d.code for d in result.diagnostics if d.code.startswith("TMS3")}
    assert len(codes) >= 3  # the checks really ran over these files


# ------------------------------------------------------------------ the API lists are data
def _readiness_yaml() -> str:
    from importlib import resources

    return resources.files("torch2ms.data").joinpath("readiness.yaml").read_text(encoding="utf-8")


def _table_with(readiness_text: str, files: list[tuple[str, str]] | None = None):  # type: ignore[no-untyped-def]
    """A table with this readiness.yaml (and no entries unless `files` are given: the checks do not need them)."""
    from importlib import resources

    from torch2ms.mappings import build_table

    data = resources.files("torch2ms.data")
    return build_table(files or [], data.joinpath("meta.yaml").read_text(encoding="utf-8"),
                       data.joinpath("inventory.json").read_text(encoding="utf-8"), readiness_text)


@pytest.mark.parametrize(("change", "key", "reason"), [
    (("seed_apis:\n", "seed_api:\n"), "seed_api", "unknown key 'seed_api'"),
    (("- torch.manual_seed\n", "- numpy.random.seed\n"), "seed_apis[", "does not match"),
    (("  torch.utils.data.DataLoader: mindspore.dataset.GeneratorDataset\n",
      "  torch.utils.data.DataLoader: [mindspore.dataset.GeneratorDataset]\n"), "data_targets.", "not of type"),
    (("    dict: mindspore.nn.CellDict\n", "    set: mindspore.nn.CellDict\n"),
     "container_targets.module.set", "unknown key 'set'"),
    (("- torch.seed\n", "- torch.seed\n- torch.seed\n"), "seed_apis", "non-unique"),
    (("clip_apis:\n", "clip_apis: [\n"), "", "invalid YAML"),
])
def test_a_broken_readiness_file_names_the_file_line_and_key(change: tuple[str, str], key: str, reason: str) -> None:
    from torch2ms.mappings import MappingError

    text = _readiness_yaml()
    assert change[0] in text
    broken = text.replace(change[0], change[1], 1)
    with pytest.raises(MappingError) as info:
        _table_with(broken)
    error = info.value
    assert error.file == "readiness.yaml" and str(error).startswith("readiness.yaml:")
    assert error.line is not None and broken.splitlines()[error.line - 1].strip()
    assert error.key.startswith(key) and reason in str(error), str(error)


def test_a_missing_list_is_an_error() -> None:
    from torch2ms.mappings import MappingError

    text = re.sub(r"^clip_apis:\n(- .*\n)+", "", _readiness_yaml(), flags=re.MULTILINE)
    with pytest.raises(MappingError, match=r"readiness\.yaml.*'clip_apis' is a required property"):
        _table_with(text)


def test_the_checks_follow_the_data_file() -> None:
    """A torch API taken out of readiness.yaml is no longer reported; the table's digest (the key of
    the results cache and of the compiled table) changes with the file."""
    source = "import torch\ntorch.manual_seed(0)\ntorch.nn.utils.clip_grad_norm_(p, 1.0)\n"
    tree = parse(source)
    default = _table_with(_readiness_yaml())
    edited = _table_with(_readiness_yaml().replace("- torch.manual_seed\n", ""))
    assert edited.digest != default.digest
    codes = {}
    for name, table in (("default", default), ("edited", edited)):
        calls = resolve(tree, table, SourceText(source))
        codes[name] = sorted(d.code for d in readiness_diagnostics(tree, calls, source, table.view(Config().version, Config().device)))
    assert codes == {"default": ["TMS362", "TMS365"], "edited": ["TMS362"]}


def test_readiness_kinds_are_a_field_of_the_code_table() -> None:
    assert [c for c, info in CODES.items() if info.kind is not None] == list(READINESS_CODES)
    assert all(CODES[code].kind == KIND_OF_CODE[code] for code in READINESS_CODES)
    assert all(info.kind is None for code, info in CODES.items() if not code.startswith("TMS3"))
    assert list(dict.fromkeys(CODES[code].kind for code in READINESS_CODES)) == list(KINDS)  # report order


def test_the_checks_import_neither_torch_nor_mindspore() -> None:
    import subprocess
    import sys

    program = ("import sys\nfrom torch2ms.config import Config\nfrom torch2ms.engine import scan_source\n"
               "r = scan_source(open(sys.argv[1]).read(), 'x.py', Config(select=('TMS3',)))\n"
               "assert r.diagnostics and r.error is None\n"
               "print(sorted(m for m in ('torch', 'mindspore') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", program, str(READINESS / "training_loop.py")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
