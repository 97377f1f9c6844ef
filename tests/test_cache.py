"""The results cache: same results with and without it and for any --jobs; tolerant; incremental."""

from __future__ import annotations

import json
import os
from pathlib import Path

from torch2ms.api import scan_paths
from torch2ms.cache import Cache
from torch2ms.config import Config
from torch2ms.mappings import load_table

from conftest import as_tuples, run_cli, scan_every_way

SOURCES = {
    f"pkg/m{i}.py": f"import torch\nimport torch.nn as nn\nx{i} = torch.zeros({i})\nl = nn.Linear({i}, 2)\n"
    for i in range(12)
}
SOURCES["pkg/broken.py"] = "import torch\ndef f(:\n"


def make_project(root: Path) -> Path:
    for name, text in SOURCES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_cache_and_jobs_do_not_change_results(tmp_path: Path) -> None:
    runs = scan_every_way(make_project(tmp_path), tmp_path)
    expected = as_tuples(runs["plain"])
    assert all(as_tuples(runs[k]) == expected for k in ("cold", "warm", "parallel", "parallel_cached"))
    assert runs["warm_cache"].hits == len(SOURCES) and runs["warm_cache"].misses == 0


def test_one_changed_file_is_rescanned_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    config = Config()
    scan_paths([str(project)], config, cache=Cache(tmp_path / "c", config, load_table()))
    changed = project / "m3.py"
    changed.write_text(changed.read_text() + "y = torch.ones(1)\n")
    cache = Cache(tmp_path / "c", config, load_table())
    results = scan_paths([str(project)], config, cache=cache)
    assert cache.misses == 1 and cache.hits == len(SOURCES) - 1
    m3 = next(r for r in results if r.path.endswith("m3.py"))
    assert [d.torch_api for d in m3.diagnostics][-1] == "torch.ones"


def test_touched_but_unchanged_file_hits_by_content(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    config = Config()
    scan_paths([str(project)], config, cache=Cache(tmp_path / "c", config, load_table()))
    target = project / "m5.py"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
    cache = Cache(tmp_path / "c", config, load_table())
    scan_paths([str(project)], config, cache=cache)
    assert cache.misses == 0 and cache.hits == len(SOURCES)


def test_configuration_is_part_of_the_key(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    scan_paths([str(project)], Config(), cache=Cache(tmp_path / "c", Config(), load_table()))
    other = Config(ignore=("TMS101",))
    cache = Cache(tmp_path / "c", other, load_table())
    results = scan_paths([str(project)], other, cache=cache)
    assert cache.hits == 0
    assert all(d.code != "TMS101" for r in results for d in r.diagnostics)


def test_corrupt_cache_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first = run_cli("scan", str(project), "--isolated", "--cache-dir", str(tmp_path / "c"), cwd=tmp_path)
    (index,) = [p for p in (tmp_path / "c").iterdir() if p.suffix == ".t2ms"]
    index.write_bytes(b"\x80\x04garbage that is not a cache file")
    again = run_cli("scan", str(project), "--isolated", "--cache-dir", str(tmp_path / "c"), cwd=tmp_path)
    assert again.returncode == first.returncode == 1
    assert again.stdout == first.stdout and "TMS901" in again.stdout
    assert index.read_bytes()[:20] != b"\x80\x04garbage that is "[:20]


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_cli("scan", str(project), "--isolated", "--no-cache", cwd=tmp_path)
    assert not (tmp_path / ".torch2ms_cache").exists()
    run_cli("scan", str(project), "--isolated", cwd=tmp_path)
    assert (tmp_path / ".torch2ms_cache").is_dir()


def test_warm_text_report_is_served_without_loading_results(tmp_path: Path, monkeypatch) -> None:
    """A cache hit gives its text lines and summary from the index: no result is decoded."""
    from torch2ms import cache as cache_module
    from torch2ms.api import scan_outcomes
    from torch2ms.model import ScanSummary
    from torch2ms.report import text

    project = make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = Config()
    cold = scan_outcomes([str(project)], config,
                         cache=Cache(tmp_path / "c", config, load_table(), render=text.render_file))
    expected_text = text.render([o.result for o in cold])
    expected_summary = ScanSummary.of([o.result for o in cold])

    def no_loading(*_args, **_kwargs):
        raise AssertionError("a warm text report must not decode results")

    real_decode = cache_module.decode_result
    monkeypatch.setattr(cache_module, "decode_result", no_loading)
    warm = scan_outcomes([str(project)], config,
                         cache=Cache(tmp_path / "c", config, load_table(), render=text.render_file))
    assert "".join(o.chunk(no_loading) for o in warm) == expected_text  # the stored chunks, not re-rendered
    assert ScanSummary.combine(o.summary for o in warm) == expected_summary
    monkeypatch.setattr(cache_module, "decode_result", real_decode)
    assert as_tuples(o.result for o in warm) == as_tuples(o.result for o in cold)


def test_cached_text_follows_the_working_directory(tmp_path: Path) -> None:
    """Lines cached in one working directory are re-rendered, not reused, from another one."""
    project = make_project(tmp_path)
    cache_dir = str(tmp_path / "c")
    run_cli("scan", str(project), "--isolated", "--cache-dir", cache_dir, cwd=tmp_path)
    from_inside = run_cli("scan", str(project), "--isolated", "--cache-dir", cache_dir, cwd=project)
    fresh = run_cli("scan", str(project), "--isolated", "--no-cache", cwd=project)
    assert from_inside.stdout == fresh.stdout
    assert from_inside.stdout.startswith("broken.py:2:")


def test_statistics_are_the_same_warm_and_cold(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    args = ("scan", str(project), "--isolated", "--statistics", "--cache-dir", str(tmp_path / "c"))
    cold, warm = run_cli(*args, cwd=tmp_path), run_cli(*args, cwd=tmp_path)
    assert cold.stdout == warm.stdout and "Findings by code:" in warm.stdout
    assert warm.returncode == cold.returncode == 1


def test_results_of_another_build_of_the_scanner_are_not_reused(tmp_path: Path, monkeypatch) -> None:
    """The cache key includes a digest of the scanner's own sources (an edited editable install)."""
    from torch2ms import cache as cache_module

    project = make_project(tmp_path)
    config = Config()
    scan_paths([str(project)], config, cache=Cache(tmp_path / "c", config, load_table()))
    same = Cache(tmp_path / "c", config, load_table())
    scan_paths([str(project)], config, cache=same)
    assert same.misses == 0 and same.hits == len(SOURCES)
    assert len(cache_module.code_digest()) == 32
    monkeypatch.setattr(cache_module, "code_digest", lambda: "another build")
    other = Cache(tmp_path / "c", config, load_table())
    scan_paths([str(project)], config, cache=other)
    assert other.hits == 0 and other.misses == len(SOURCES)


def test_the_data_only_codec_round_trips_results_and_scope_facts() -> None:
    """Every field of a result (fixes, edits, confidence) and of its network-scope facts survives the cache."""
    from torch2ms.cache import _enc_scope, _scope, decode_result, encode_result

    examples = Path(__file__).resolve().parent.parent / "examples" / "vision_project"
    results = scan_paths([str(examples)], Config())
    assert any(d.fix is not None for r in results for d in r.diagnostics)
    assert any(r.scope is not None and r.scope.latent for r in results)
    for result in results:
        assert decode_result(encode_result(result)) == result
        assert _scope(json.loads(json.dumps(_enc_scope(result.scope)))) == result.scope


def test_a_warm_rescan_decodes_no_scope_facts_when_nothing_changed(tmp_path: Path, monkeypatch) -> None:
    """The project-wide network scope depends only on the roots, paths and contents: when none changed,
    its stored outcome is used and only the re-graded files' scope facts are decoded; a change runs the
    pass again."""
    from torch2ms import cache as cache_module
    from torch2ms.api import scan_outcomes
    from torch2ms.report import text

    monkeypatch.chdir(tmp_path)  # the text chunks are cached for this working directory
    helper = tmp_path / "pkg" / "ops.py"
    helper.parent.mkdir()
    helper.write_text("import torch\n\ndef pick(x):\n    return torch.nonzero(x)\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "net.py").write_text("import torch\nfrom .ops import pick\n\nclass Net(torch.nn.Module):\n"
                                             "    def forward(self, x):\n        return pick(x)\n")
    config = Config()
    cold = scan_paths([str(tmp_path / "pkg")], config,
                      cache=Cache(tmp_path / "c", config, load_table(), render=text.render_file))
    assert any("network code" in d.message for r in cold for d in r.diagnostics)

    real = cache_module._scope_of_bytes
    decoded: list[bytes] = []

    def counted(data: bytes):
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(cache_module, "_scope_of_bytes", counted)
    warm = scan_outcomes([str(tmp_path / "pkg")], config,
                         cache=Cache(tmp_path / "c", config, load_table(), render=text.render_file))
    assert "".join(o.chunk(text.render_file) for o in warm) == text.render(cold)
    assert len(decoded) == 1  # only the file re-graded (ops.py needs its latent findings), not all three
    assert as_tuples(o.result for o in warm) == as_tuples(cold)
    helper.write_text("import torch\n\ndef pick(x):\n    return torch.zeros(1)\n")
    changed = scan_paths([str(tmp_path / "pkg")], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert not any("network code" in d.message for r in changed for d in r.diagnostics)


DATAFLOW = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": ("import torch\n\ndef make(x) -> torch.Tensor:\n    return torch.relu(x)\n\n"
                       "class Base(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       "        self.register_buffer('pos', torch.arange(4))\n"),
    "pkg/use.py": ("import torch\nfrom .helpers import make, Base\n\nclass Net(Base):\n    def forward(self, x):\n"
                   "        y = make(x)\n"
                   "        z = y.view(-1, 2.5, -1e999, b'\\xff', 1j, ..., (1, 'a', (None,)), True, k=None)\n"
                   "        return z.sum() + self.pos.size(0)\n"),
}


def test_data_flow_facts_and_the_named_calls_survive_the_cache(tmp_path: Path) -> None:
    """The calls only other files decide (a method on what a helper returns, on a buffer a base class in
    another file registers) keep their call, arguments and folded constants of every type through the
    data-only codec, and a warm re-scan serves the project pass's named calls as the cold scan made them."""
    from torch2ms.cache import _enc_scope, _scope

    for name, text in DATAFLOW.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    config = Config()
    cold = scan_paths([str(tmp_path / "pkg")], config, cache=Cache(tmp_path / "c", config, load_table()))
    use = next(r for r in cold if r.path.endswith("use.py"))
    assert use.scope is not None and use.scope.pending and use.scope.imports
    consts = [a.value for _, _, _, _, call in use.scope.pending for a in call.args if a.is_const]
    assert {type(v) for v in consts} >= {int, float, bytes, complex, tuple, bool, type(None), type(...)}
    for result in cold:
        assert _scope(json.loads(json.dumps(_enc_scope(result.scope)))) == result.scope
    named = {(d.torch_api, d.confidence.value) for d in use.diagnostics}
    assert {("torch.Tensor.view", "high"), ("torch.Tensor.sum", "high"), ("torch.Tensor.size", "high")} <= named
    warm = scan_paths([str(tmp_path / "pkg")], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert as_tuples(warm) == as_tuples(cold)


def test_a_cache_without_a_renderer_stores_results_only(tmp_path, monkeypatch):
    """The cache stores what it is handed: without the text report's renderer it keeps no text chunk,
    and a warm scan's report is rendered from the stored results, the same as with one."""
    from torch2ms.api import scan_outcomes
    from torch2ms.report import text

    project = make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = Config()
    cold = scan_outcomes([str(project)], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert all(o.rendered is None for o in cold)
    warm = scan_outcomes([str(project)], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert all(o.rendered is None for o in warm)  # nothing stored to serve
    assert "".join(o.chunk(text.render_file) for o in warm) == text.render([o.result for o in cold])
