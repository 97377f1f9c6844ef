"""The network scope across files (torch2ms/project_graph.py).

tests/data/network_scope/ is a small project whose network code calls helpers in other
modules (relative imports, a package import alias, a re-export, an inherited method, a
forward inherited from a base in another file, two modules that call each other) and
whose Dataset calls one helper of its own. Each line that must report dynamic-shape codes
says so in its comment (`# TMS201: ...`, `# fine: ...` for none), and
tests/golden/network_scope.txt holds every finding with the reason the message gives.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from torch2ms.api import scan_paths
from torch2ms.cache import Cache
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.model import Severity
from torch2ms.project_graph import ProjectScope, link, regraded, regrades

from conftest import GOLDEN, ROOT, as_tuples, check_golden, scan_every_way

PROJECT = ROOT / "tests" / "data" / "network_scope"
ONLY_DYNAMIC = Config(select=("TMS2",))
_CODE = re.compile(r"TMS2\d\d")
_REASON = "; this is network code: "


def relative(path: str, root: Path) -> str:
    return Path(path).resolve().relative_to(root.resolve()).as_posix()


def render(results, root: Path) -> str:
    rows = []
    for result in sorted(results, key=lambda r: relative(r.path, root)):
        for d in result.diagnostics:
            reason = d.message.partition(_REASON)[2] or ("data processing" if d.code.startswith("TMS25") else "-")
            rows.append(f"{relative(result.path, root)}:{d.span.start_line}:{d.span.start_col + 1} {d.code} "
                        f"{d.confidence.value} {reason}")
    return "".join(row + "\n" for row in rows)


def annotated_mismatches(results, root: Path) -> list[str]:
    """Lines whose comment names TMS2xx codes must report exactly those; `# fine` lines none."""
    out = []
    for result in results:
        by_line: dict[int, set[str]] = {}
        for d in result.diagnostics:
            by_line.setdefault(d.span.start_line, set()).add(d.code)
        name = relative(result.path, root)
        for number, line in enumerate(Path(result.path).read_text(encoding="utf-8").splitlines(), start=1):
            comment = line.split("#", 1)[1].strip() if "#" in line else ""
            got = by_line.get(number, set())
            if comment.startswith("fine") and got:
                out.append(f"{name}:{number} is marked fine but reports {sorted(got)}")
            elif _CODE.search(comment) and got != set(_CODE.findall(comment)):
                out.append(f"{name}:{number}: expected {sorted(_CODE.findall(comment))}, got {sorted(got)}")
            elif not comment and got:
                out.append(f"{name}:{number}: unexpected {sorted(got)}")
    return out


def test_project_golden_and_annotations() -> None:
    results = scan_paths([str(PROJECT)], ONLY_DYNAMIC)
    assert not any(d.code.startswith("TMS9") for r in results for d in r.diagnostics)
    assert annotated_mismatches(results, PROJECT) == []
    check_golden(GOLDEN / "network_scope.txt", render(results, PROJECT))


def test_reasons_name_the_network_caller_and_its_file() -> None:
    by_file = {relative(r.path, PROJECT): r for r in scan_paths([str(PROJECT)], ONLY_DYNAMIC)}
    ops = {d.span.start_line: d for d in by_file["models/ops.py"].diagnostics}
    assert ops[7].code == "TMS202" and ops[7].severity is Severity.WARNING
    assert ops[7].message.endswith(_REASON + "called from Net.forward in models/net.py")
    assert ops[29].message.endswith(_REASON + "called from deeper, on the path from Head.forward in models/net.py")
    assert ops[16].code == "TMS251" and ops[16].severity is Severity.INFO and _REASON not in ops[16].message
    child = {d.span.start_line: d for d in by_file["models/net.py"].diagnostics}[23]
    assert child.message.endswith("forward of Child, an nn.Module subclass through its base Mid in models/base.py")


def test_one_file_alone_keeps_its_own_scope() -> None:
    """The language server scans one document: a helper file alone is data processing."""
    text = (PROJECT / "models" / "ops.py").read_text(encoding="utf-8")
    codes = [d.code for d in scan_source(text, "ops.py", ONLY_DYNAMIC).diagnostics]
    assert codes == ["TMS252", "TMS253", "TMS251", "TMS251", "TMS251"]


def test_cache_and_jobs_give_the_same_graded_result(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    config = Config()
    runs = scan_every_way(project, tmp_path)
    expected = as_tuples(runs["plain"])
    assert all(as_tuples(runs[k]) == expected for k in ("cold", "warm", "parallel", "parallel_cached"))
    assert runs["warm_cache"].hits == len(runs["plain"]) and runs["warm_cache"].misses == 0
    assert any(_REASON in d.message for r in runs["warm"] for d in r.diagnostics)
    # an edit of the caller re-grades the cached helper: the network call removed, the helper is data code
    net = project / "models" / "net.py"
    net.write_text(net.read_text(encoding="utf-8").replace("topk_helper(y) + ", ""), encoding="utf-8")
    again_cache = Cache(tmp_path / "c", config, load_table())
    again = {relative(r.path, project): r for r in scan_paths([str(project)], config, cache=again_cache)}
    assert again_cache.misses == 1
    lines = {d.span.start_line: d.code for d in again["models/ops.py"].diagnostics if d.code.startswith("TMS2")}
    assert lines[7] == "TMS252" and 6 not in lines


def test_scan_roots_and_package_names(tmp_path: Path) -> None:
    """Module names come from the scan root and the packages' __init__.py: a src layout, a package given
    as the scan root, a script folder that imports a module beside it, a two-level relative import."""
    files = {
        "src/mypkg/__init__.py": "",
        "src/mypkg/layers/__init__.py": "",
        "src/mypkg/layers/net.py": ("import torch\nfrom ..util.ops import cut\n\n\n"
                                    "class Net(torch.nn.Module):\n    def forward(self, x):\n        return cut(x)\n"),
        "src/mypkg/util/__init__.py": "",
        "src/mypkg/util/ops.py": "import torch\n\n\ndef cut(x: torch.Tensor):\n    return torch.nonzero(x)\n",
        "scripts/model.py": ("import torch\nimport tools\nfrom mypkg.util import ops\n\n\n"
                             "class M(torch.nn.Module):\n    def forward(self, x):\n        return tools.f(x) + ops.g(x)\n"),
        "scripts/tools.py": "import torch\n\n\ndef f(x: torch.Tensor):\n    return x[x > 0]\n",
        "src/mypkg/util/more.py": "import torch\n\n\ndef g(x: torch.Tensor):\n    return torch.unique(x)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")

    def codes(roots: list[str]) -> dict[str, list[str]]:
        return {relative(r.path, tmp_path): [d.code for d in r.diagnostics]
                for r in scan_paths(roots, ONLY_DYNAMIC) if r.diagnostics}

    whole = codes([str(tmp_path)])
    assert whole["src/mypkg/util/ops.py"] == ["TMS201"]  # ..util.ops from mypkg.layers.net
    assert whole["scripts/tools.py"] == ["TMS203"]  # `import tools` beside the script
    assert whole["src/mypkg/util/more.py"] == ["TMS251"]  # ops.g: not in mypkg.util.ops, so not reached
    alone = codes([str(tmp_path / "src" / "mypkg")])  # the package itself as the root
    assert alone["src/mypkg/util/ops.py"] == ["TMS201"]
    files_only = codes([str(tmp_path / "scripts" / "model.py"), str(tmp_path / "scripts" / "tools.py")])
    assert files_only["scripts/tools.py"] == ["TMS203"]


def test_noqa_and_select_apply_to_regraded_findings(tmp_path: Path) -> None:
    (tmp_path / "net.py").write_text("import torch\nfrom helpers import h\n\n\nclass N(torch.nn.Module):\n"
                                     "    def forward(self, x):\n        return h(x)\n", encoding="utf-8")
    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef h(x: torch.Tensor):\n"
                                         "    if x.sum() > 0:  # noqa: TMS205\n        x = x + 1\n"
                                         "    return x[x > 0], x.item()\n", encoding="utf-8")
    results = {Path(r.path).name: r for r in scan_paths([str(tmp_path)], ONLY_DYNAMIC)}
    assert [d.code for d in results["helpers.py"].diagnostics] == ["TMS203", "TMS206"]
    only_data = {Path(r.path).name: r for r in scan_paths([str(tmp_path)], Config(select=("TMS25",)))}
    assert [d.code for d in only_data["helpers.py"].diagnostics] == []  # re-graded away, not re-added
    network_only = {Path(r.path).name: r for r in scan_paths([str(tmp_path)], Config(select=("TMS206",)))}
    assert [d.code for d in network_only["helpers.py"].diagnostics] == ["TMS206"]


def test_cycles_and_unresolved_imports_terminate(tmp_path: Path) -> None:
    """Re-exports that import each other, a module importing itself, imports of nothing scanned."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("import torch\nfrom .b import thing\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("import torch\nfrom . import thing\nfrom .b import loop\n",
                                           encoding="utf-8")
    (tmp_path / "pkg" / "net.py").write_text(
        "import torch\nimport numpy as np\nfrom pkg import thing\nfrom .b import loop\nfrom nowhere import f\n"
        "from ..outside import g\n\n\nclass N(torch.nn.Module):\n    def forward(self, x):\n"
        "        return thing(x) + loop(x) + f(x) + g(x) + np.sum(x)\n", encoding="utf-8")
    results = scan_paths([str(tmp_path)], ONLY_DYNAMIC)
    assert len(results) == 3 and not any(r.diagnostics for r in results)


def test_link_without_facts_changes_nothing() -> None:
    result = scan_source("import torch\nx = torch.zeros(3)\n", "a.py")
    assert regrades([("a.py", result.scope)], ["."]) == {}
    assert link([result], ["."]) == [result]


@pytest.mark.parametrize("scope_is_small", [True])
def test_scope_facts_are_small_for_plain_files(scope_is_small: bool) -> None:
    """A file with no imports of the project, no classes and no data-processing findings carries nothing."""
    source = "import torch\nimport os\n\n\ndef f(x):\n    return g(x) + os.getpid()\n\n\ndef g(x):\n    return x\n"
    assert (scan_source(source, "a.py").scope is None) is scope_is_small


def test_project_scope_kept_up_to_date_one_file_at_a_time(tmp_path: Path) -> None:
    """The language server's view: a pass is due only when calls, classes or imports change, and its
    answer re-grades a file exactly as a project scan does."""
    net = ("import torch\nfrom .util import helper\n\n\nclass Net(torch.nn.Module):\n"
           "    def forward(self, x):\n        return helper(x)\n")
    util = "import torch\n\n\ndef helper(x: torch.Tensor):\n    return x[x > 0]\n"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    files = {pkg / "__init__.py": "", pkg / "model.py": net, pkg / "util.py": util}
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    scans = {path: scan_source(text, str(path)) for path, text in files.items()}
    project = ProjectScope()
    assert not project.update(str(pkg / "util.py"), scans[pkg / "util.py"].scope)  # not loaded yet: no pass
    project.load([(str(p), r.scope) for p, r in scans.items()], [str(tmp_path)])
    project.reached = project.pass_over_copy()()
    expected = {Path(r.path).name: r for r in scan_paths([str(tmp_path)])}["util.py"]
    assert regraded(scans[pkg / "util.py"], project.reasons(str(pkg / "util.py"))) == expected
    assert project.reasons(str(pkg / "util.py")) and not project.reasons(str(pkg / "model.py"))

    # an edit inside forward that keeps its calls: no pass due
    body_edit = net.replace("return helper(x)", "y = helper(x)\n        return y * 2")
    assert not project.update(str(pkg / "model.py"), scan_source(body_edit, str(pkg / "model.py")).scope)
    # the call is gone: a pass is due, and it no longer reaches the helper
    assert project.update(str(pkg / "model.py"), scan_source(net.replace("helper(x)", "x"), str(pkg / "model.py")).scope)
    project.reached = project.pass_over_copy()()
    assert project.reasons(str(pkg / "util.py")) == {}
    # a new file is a pass too
    assert project.update(str(pkg / "extra.py"), scan_source("import torch\n", str(pkg / "extra.py")).scope)
