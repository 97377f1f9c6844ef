"""Each finding is true for the call it is on: parameter facts only where the call touches them, no finding
on named-tuple fields, one finding per use, and an effort class per finding."""

from __future__ import annotations

import json
from pathlib import Path

from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table

from conftest import run_cli

TABLE = load_table()


def findings(source: str, config: Config | None = None) -> list[tuple[str, str, int, str]]:
    result = scan_source(source, "m.py", config)
    assert result.error is None, result.error
    return [(d.code, d.torch_api or "", d.span.start_line, d.message) for d in result.diagnostics]


def test_parameter_facts_only_for_parameters_the_call_uses() -> None:
    head = "import torch.nn.functional as F\n"
    plain, = findings(head + "y = F.interpolate(x, scale_factor=2.0, mode='nearest')\n")
    assert plain[0] == "TMS101"
    assert "area" not in plain[3] and "antialias" not in plain[3]
    bilinear, = findings(head + "y = F.interpolate(x, scale_factor=2.0, mode='bilinear')\n")  # no CPU kernel
    assert bilinear[0] == "TMS102" and "no kernel for mode linear, bilinear or bicubic" in bilinear[3]
    whole, = findings(head + "y = F.interpolate(x, scale_factor=2, mode='bilinear')\n")  # mint takes a float
    assert whole[0] == "TMS102" and "'scale_factor' must be a float" in whole[3] and "area" not in whole[3]
    area, = findings(head + "y = F.interpolate(x, scale_factor=2, mode='area')\n")
    assert area[0] == "TMS102" and "'area'" in area[3] and "antialias" not in area[3]
    smooth, = findings(head + "y = F.interpolate(x, scale_factor=2, antialias=True)\n")
    assert smooth[0] == "TMS102" and "antialias" in smooth[3] and "area" not in smooth[3]
    unknown, = findings(head + "def f(x, m):\n    return F.interpolate(x, scale_factor=2, mode=m)\n")
    assert unknown[0] == "TMS102" and "'area'" in unknown[3]  # a mode that may be 'area'
    # a default that differs matters only when the call relies on it (mindspore.mint.topk, the form
    # written for Ascend, defaults dim to -1 where torch's None means the last dimension)
    ascend = Config(device="ascend")
    relied, = findings("import torch\ny = torch.topk(x, 2)\n", ascend)
    given, = findings("import torch\ny = torch.topk(x, 2, dim=1)\n", ascend)
    assert "default of 'dim' differs" in relied[3] and "default" not in given[3]
    # an entry whose note tells of a difference that is no parameter stays "different parameters"
    resize = TABLE.lookup("torchvision.transforms.Resize")
    assert resize is not None and resize.note
    kept, = [f for f in findings("import torchvision.transforms as T\nt = T.Resize(8)\n") if f[2] == 2]
    assert kept[0] == "TMS102" and resize.note in kept[3] and "antialias" not in kept[3]


def test_named_tuple_fields_are_not_tensor_methods() -> None:
    source = ("import torch\n\ndef f(probs):\n    p = torch.softmax(probs, 1)\n    a = p.max(dim=1).values\n"
              "    b = torch.sort(p).indices.float()\n    c = p.min(0).values.sum()\n    d = p.values()\n")
    found = [(code, api, line) for code, api, line, _ in findings(source)]
    assert ("TMS103", "torch.Tensor.values", 8) in found  # a call of .values() is the sparse method
    assert not any(api in ("torch.Tensor.values", "torch.Tensor.indices") and line < 8 for _, api, line in found)
    # the methods called on a field are the tensor methods, with the code a direct call of theirs gets
    direct = {api: code for code, api, _, _ in findings("import torch\nt = torch.ones(2)\nt.float()\nt.sum()\n")}
    assert (direct["torch.Tensor.float"], "torch.Tensor.float", 6) in found
    assert (direct["torch.Tensor.sum"], "torch.Tensor.sum", 7) in found


def test_one_finding_per_use() -> None:
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n"
        "def main(model, data, device):\n"
        "    torch.manual_seed(0)\n"
        "    dev = torch.device('cpu')\n"
        "    loader = DataLoader(data, batch_size=4)\n"
        "    for x in loader:\n"
        "        x = x.to(device)\n"
        "    model.to(device)\n"
    )
    result = scan_source(source, "m.py")
    by_line = {}
    for diag in result.diagnostics:
        by_line.setdefault(diag.span.start_line, []).append(diag)
    spans = [(d.span, d.torch_api) for d in result.diagnostics if d.torch_api]
    assert len(spans) == len(set(spans))
    seed, = by_line[5]
    assert seed.code == "TMS101" and "(also TMS365: set the seed with mindspore.set_seed" in seed.message
    assert seed.fix is not None and seed.fix.edits  # the mapping's rewrite stays
    device, = by_line[6]
    assert device.code == "TMS103" and "also TMS341" in device.message
    loader, = by_line[7]
    assert loader.code == "TMS102" and "(also TMS351: MindSpore builds the pipeline" in loader.message
    batch, = by_line[9]  # a batch of the loader is a tensor: its .to() differs in parameters, and is a move
    assert batch.code == "TMS102" and "(also TMS341: .to(device)" in batch.message
    move, = by_line[10]  # nothing is known about `model`: TMS105 was a guess, the move is certain
    assert move.code == "TMS341" and "possible Tensor method" not in move.message
    # selection comes first: a code that is turned off does not take the use
    only_readiness = scan_source(source, "m.py", Config(select=("TMS3",)))
    assert [d.code for d in only_readiness.diagnostics if d.span.start_line == 5] == ["TMS365"]
    no_readiness = scan_source(source, "m.py", Config(ignore=("TMS3",)))
    assert [d.code for d in no_readiness.diagnostics if d.span.start_line == 10] == ["TMS105"]


def test_one_finding_per_use_in_the_example_project(example_project: Path) -> None:
    doc = json.loads(run_cli("scan", str(example_project), "--isolated", "--no-cache", "--format", "json").stdout)
    for file in doc["files"]:
        uses = [(d["span"]["start_line"], d["span"]["start_col"], d["torch_api"]) for d in file["diagnostics"]
                if d["torch_api"]]
        assert len(uses) == len(set(uses)), file["path"]


def test_effort_class_of_each_finding(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import torch\n\ndef f(x, d):\n"
        "    with torch.no_grad():\n"            # 4 remove
        "        dev = torch.device('cpu')\n"   # 5 remove
        "    y = torch.histogram(x)\n"         # 6 blocker: no workaround known
        "    y.backward()\n"                   # 7 manual: a known workaround
        "    z = torch.cat([x, x])\n"          # 8 automatic
        "    w = torch.cuda.get_device_name()\n"  # 9 not in the tables
        "    return d.unsqueeze(0)\n",         # 10 a possible tensor method, uncertain
        encoding="utf-8")
    doc = json.loads(run_cli("scan", "m.py", "--isolated", "--format", "json", cwd=tmp_path).stdout)
    got = {(d["span"]["start_line"], d["code"]): (d["effort"], d["category"]) for d in doc["files"][0]["diagnostics"]}
    assert got[(4, "TMS103")] == ("remove", "missing")
    assert got[(5, "TMS103")] == ("remove", "missing")
    assert got[(6, "TMS103")] == ("blocker", "missing")
    assert got[(7, "TMS103")] == ("manual", "missing")
    assert got[(8, "TMS101")] == ("automatic", "equivalent")
    assert got[(9, "TMS104")] == ("unknown", "unmapped")
    assert got[(10, "TMS105")] == ("automatic", "uncertain")
    summary = doc["summary"]
    assert sum(summary["by_effort"].values()) == summary["findings"]
    assert summary["by_effort"]["remove"] == 2
    rows = {row["api"]: row for row in doc["apis"]}
    assert rows["torch.no_grad"]["effort"] == "remove" and rows["torch.histogram"]["effort"] == "blocker"
    # a possible tensor method is listed, but is no use: not in api_uses, nor in the readiness figure
    assert rows["torch.Tensor.unsqueeze"]["category"] == "uncertain" and rows["torch.Tensor.unsqueeze"]["uses"] == 0
    assert summary["readiness"]["api_uses"] == summary["api_uses"] == 6 == sum(r["uses"] for r in rows.values())


def test_a_finding_the_fix_rewrites_safely_is_automatic(tmp_path: Path) -> None:
    """torch.tanh's CPU form carries a fact a person must know (MindSpore raises for integer input), so
    its entry alone says "manual"; a call the fix rewrites safely is still work the tool does."""
    from torch2ms.effort import entry_effort

    entry = TABLE.lookup("torch.tanh")
    assert entry is not None and entry_effort(entry, (2, 10), "cpu") == "manual"
    (tmp_path / "m.py").write_text("import torch\ny = torch.tanh(torch.ones(2))\n", encoding="utf-8")
    doc = json.loads(run_cli("scan", "m.py", "--isolated", "--format", "json", cwd=tmp_path).stdout)
    tanh, = [d for d in doc["files"][0]["diagnostics"] if d["torch_api"] == "torch.tanh"]
    assert tanh["fix"] is not None and tanh["fix"]["safe"] and tanh["effort"] == "automatic"


def test_a_parameter_whose_meaning_differs_counts_only_where_it_is_passed() -> None:
    # argmax's keepdim without dim gives another shape in MindSpore (measured by verify's opt= cases)
    head = "import torch\nx = torch.ones(3, 4)\n"
    plain, = [f for f in findings(head + "y = x.argmax()\n") if f[1] == "torch.Tensor.argmax"]
    assert plain[0] == "TMS101" and "keepdim" not in plain[3]
    kept, = [f for f in findings(head + "y = x.argmax(keepdim=True)\n") if f[1] == "torch.Tensor.argmax"]
    assert kept[0] == "TMS102" and "keepdim" in kept[3]
