"""Robustness under bad input: a bounded, deterministic sample of the fuzz campaign (fuzz/).

Every input runs in a child process (fuzz.runner.Runner) under a time bound, so a
hang fails the test instead of stalling CI, and a crash of the interpreter is one
failing input, not a dead test run. The checks themselves are fuzz.oracle's: no
exception, a clear TMS9xx per-file error for what cannot be analysed (never TMS904
on valid Python), spans inside the text, --fix output that parses and is a fixed
point. The long campaign is `python -m fuzz.campaign` (see docs/security.md).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis.configuration import set_hypothesis_home_dir

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz import mutate, oracle, strategies  # noqa: E402
from fuzz import runner as runner_module  # noqa: E402
from fuzz.runner import Runner  # noqa: E402
from torch2ms.api import scan_paths  # noqa: E402
from torch2ms.cache import Cache  # noqa: E402
from torch2ms.config import Config  # noqa: E402
from torch2ms.engine import scan_source  # noqa: E402
from torch2ms.mappings import MappingError, build_table, load_table, parse_table_file  # noqa: E402

# Hypothesis keeps caches (unicode tables) in .hypothesis/ of the working directory: not in the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "torch2ms-hypothesis")

# CPU seconds the checking process may spend on one input (fuzz.runner): a loaded machine slows the
# clock, not the CPU time an input needs; a real hang never answers at all.
TIME_BOUND_S = 30.0
CI = settings(max_examples=25, deadline=None, derandomize=True, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def runner():  # type: ignore[no-untyped-def]
    with Runner(timeout=TIME_BOUND_S) as r:
        yield r


def ok(r: Runner, kind: str, payload: object, **options: object) -> None:
    outcome = r.check(kind, payload, **options)
    shown = payload if isinstance(payload, bytes) else str(payload)
    assert not outcome.problems, f"{kind} check failed: {outcome.problems}\ninput ({len(shown)} chars): " \
                                 f"{shown[:600]!r}"


def example_texts() -> list[tuple[str, str]]:
    return [(p.name, mutate.read_text(p)) for p in mutate.example_files()]


# ---------------------------------------------------------------- generated programs
@CI
@given(strategies.torch_programs())
def test_generated_torch_programs_scan_cleanly(runner: Runner, text: str) -> None:
    ok(runner, "scan", text, lsp=True)


@settings(CI, max_examples=15)
@given(strategies.hypothesmith_programs())
def test_hypothesmith_programs_scan_cleanly(runner: Runner, text: str) -> None:
    ok(runner, "scan", text)


@settings(CI, max_examples=15)
@given(strategies.torch_programs())
def test_fix_on_generated_programs_parses_and_is_idempotent(runner: Runner, text: str) -> None:
    assume(oracle.parses(text) is True)
    ok(runner, "fix", text, unsafe=len(text) % 2 == 0)


# ---------------------------------------------------------------- mutations of real files
def test_truncation_at_every_token_boundary_of_an_example(runner: Runner) -> None:
    # Every boundary of data.py here; the campaign does every file (python -m fuzz.campaign --only truncate).
    text = mutate.read_text(ROOT / "examples" / "vision_project" / "visionnet" / "data.py")
    tried = 0
    for cut in mutate.truncations(text):
        ok(runner, "scan", cut, lsp=tried % 7 == 0)
        tried += 1
    assert tried > 300


@pytest.mark.needs_torch
def test_truncation_of_installed_torch_sources(runner: Runner) -> None:
    rng = random.Random(9)
    files = mutate.torch_files(3, rng)
    assert files, "torch is a dependency of the dev setup; its sources must be found"
    for path in files:
        text = mutate.read_text(path)
        ok(runner, "scan", text)
        for cut in mutate.truncations(text, limit=60, rng=rng):
            ok(runner, "scan", cut)


def test_byte_flips(runner: Runner) -> None:
    rng = random.Random(3)
    seeds = [p.read_bytes() for p in mutate.example_files()]
    for _ in range(60):
        ok(runner, "bytes", mutate.flip_bytes(rng.choice(seeds), rng, rng.randint(1, 8)))


def test_text_mutations_scan_and_fix(runner: Runner) -> None:
    rng = random.Random(5)
    texts = [t for _, t in example_texts()]
    for i in range(120):
        text = mutate.mutate_text(rng.choice(texts), rng)
        ok(runner, "scan", text, lsp=True, repeat=i % 10 == 0)
        if i % 6 == 0:
            ok(runner, "fix", text)


def test_mixed_line_endings_keep_positions(runner: Runner) -> None:
    rng = random.Random(11)
    for _, text in example_texts():
        mixed = mutate.mixed_line_endings(text, rng)
        ok(runner, "scan", mixed, lsp=True)
        ok(runner, "fix", mixed)
        # Same findings at the same lines whatever the line endings (form feeds aside, which keep lines too).
        plain = scan_source(text, "a.py")
        other = scan_source(mixed, "a.py")
        assert [(d.code, d.span) for d in plain.diagnostics] == [(d.code, d.span) for d in other.diagnostics]
        assert plain.lines == other.lines


def test_old_mac_line_endings_give_the_same_findings() -> None:
    # Found by the line-ending mutator: with \r-only line breaks the readiness checks (TMS3xx)
    # counted lines by \n and lost their findings, and the file's line count was 1.
    for _, text in example_texts():
        plain = scan_source(text, "a.py")
        cr = scan_source(text.replace("\n", "\r"), "a.py")
        assert [(d.code, d.span) for d in cr.diagnostics] == [(d.code, d.span) for d in plain.diagnostics]
        assert cr.lines == plain.lines


@pytest.mark.parametrize("kind", mutate.NESTING_KINDS)
def test_deep_nesting(runner: Runner, kind: str) -> None:
    for depth in (60, 1500):
        ok(runner, "scan", mutate.deep_nesting(kind, depth if kind not in ("blocks", "defs", "classes") else 120))


def test_a_hang_is_told_by_cpu_time_and_a_blocked_child_by_the_clock() -> None:
    """The bound counts the checking process's CPU time, so a busy machine does not make a hang of a
    slow answer; a child that waits without using the CPU is given up after the clock's longer bound."""
    with Runner(timeout=0.2) as r:
        spinning = r.check("never_answers", "cpu")
        assert spinning.hung and spinning.problems == ["hang: no answer within 0.2 s of CPU time or 4 s"]
        blocked = r.check("never_answers", "blocked")
        assert blocked.hung and blocked.seconds >= 0.2 * runner_module.WALL_FACTOR
        assert r.started == 2  # each hang replaced the child
        assert r.check("scan", "import torch\n", timeout=TIME_BOUND_S).problems == []
        assert r.started == 3


def test_long_lines_and_huge_files(runner: Runner) -> None:
    ok(runner, "scan", mutate.long_line(1500))
    ok(runner, "scan", mutate.long_string_line(2_000_000))
    ok(runner, "bytes", mutate.huge_file(example_texts()[-1][1], 5_000).encode("utf-8"))
    ok(runner, "fix", mutate.long_line(300))


@pytest.mark.parametrize("data", [
    b"", b"\xef\xbb\xbf", b"\xef\xbb\xbfimport torch\nx = torch.zeros(1)\n", b"import torch\x00\n",
    b"\xff\xfei\x00m\x00", b"# -*- coding: utf-16 -*-\nimport torch\n", b"# coding: latin-1\nimport torch\n\xe9\n",
    b"\xef\xbb\xbf# coding: latin-1\nimport torch\n", b"import torch\n\xed\xa0\x80 = 1\n",
    b"import torch\nx = '\\N{no such name}'\n", b"import torch\r\r\n\rx = torch.zeros(1)\r",
    b"import torch\n" + b"\\\n" * 50 + b"x = torch.zeros(1)\n", b"import torch\n" + b"\t \x0c" * 40 + b"y = 1\n",
], ids=lambda d: repr(d[:24]))
def test_odd_bytes(runner: Runner, data: bytes) -> None:
    ok(runner, "bytes", data)


# ---------------------------------------------------------------- regressions found by fuzzing
def test_noqa_on_a_syntax_error_line_does_not_hide_the_file_error() -> None:
    # Found by the generated-program fuzzer: a noqa comment on the line of the syntax error
    # silently turned an unanalysable file into a clean one.
    result = scan_source("import torch\nx = torch.zeros(1  # noqa\n", "a.py")
    assert [d.code for d in result.diagnostics] == ["TMS901"]
    result = scan_source("import torch\nx = (f'{f'{x}'}')  # noqa: TMS901\n", "a.py")
    assert [d.code for d in result.diagnostics] == ["TMS901"]
    # Findings themselves are still suppressed.
    assert scan_source("import torch\nx = torch.zeros(1)  # noqa\n", "a.py").diagnostics == ()


def test_python_m_torch2ms_does_not_import_from_the_working_directory(tmp_path: Path) -> None:
    # Found while testing safety: `python -m torch2ms` (how the VS Code client starts the
    # server, with the project folder as working directory) imported a project's argparse.py.
    marker = tmp_path / "MARKER"
    for name in ("argparse.py", "json.py", "ast.py", "tokenize.py", "asyncio.py", "logging.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    (tmp_path / "model.py").write_text("import torch\nx = torch.zeros(1)\n")
    result = subprocess.run([sys.executable, "-m", "torch2ms", "scan", "--no-cache", "--isolated", "model.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), f"imported a project module: {marker.read_text()}"
    assert result.returncode == 1 and "TMS101" in result.stdout, result.stderr


# ---------------------------------------------------------------- properties
def _project(tmp_path: Path) -> Path:
    """The example project plus mutated and broken copies: ~30 files."""
    src = tmp_path / "proj"
    shutil.copytree(ROOT / "examples" / "vision_project", src)
    rng = random.Random(21)
    texts = [t for _, t in example_texts()]
    for i in range(22):
        text = mutate.mutate_text(rng.choice(texts), rng)
        (src / f"mutant_{i:02d}.py").write_text(text, encoding="utf-8", newline="")
    (src / "binary.py").write_bytes(b"import torch\x00")
    (src / "latin.py").write_bytes(b"import torch\n# caf\xe9\n")
    return src


def _key(results: list) -> list:  # type: ignore[type-arg]
    return [(Path(r.path).name, r.lines, r.diagnostics) for r in results]


def test_results_do_not_depend_on_jobs_or_the_cache(tmp_path: Path) -> None:
    project = _project(tmp_path)
    config = Config()
    serial = scan_paths([str(project)], config, jobs=1)
    assert len(serial) >= 25
    assert _key(scan_paths([str(project)], config, jobs=2)) == _key(serial)
    cache_dir = tmp_path / "cache"
    cold = scan_paths([str(project)], config, jobs=2, cache=Cache(cache_dir, config, load_table()))
    warm = scan_paths([str(project)], config, jobs=1, cache=Cache(cache_dir, config, load_table()))
    assert _key(cold) == _key(serial) and _key(warm) == _key(serial)
    # Touched but unchanged files, and a changed file, through the same cache.
    first = sorted(project.rglob("mutant_*.py"))[0]
    first.write_text(first.read_text(encoding="utf-8") + "\ny = torch.zeros(2)\n", encoding="utf-8")
    os.utime(sorted(project.rglob("*.py"))[-1])
    fresh = scan_paths([str(project)], config, jobs=1)
    again = scan_paths([str(project)], config, jobs=2, cache=Cache(cache_dir, config, load_table()))
    assert _key(again) == _key(fresh)


def test_fix_is_idempotent_on_the_example_project(tmp_path: Path) -> None:
    from torch2ms.fix_files import fix_paths

    project = tmp_path / "proj"
    shutil.copytree(ROOT / "examples" / "vision_project", project)
    first = fix_paths([str(project)], Config(), unsafe=True)
    assert sum(f.applied for f in first) > 0 and not any(f.error for f in first)
    for path in project.rglob("*.py"):
        assert oracle.parses(path.read_text(encoding="utf-8")) is True, path
    second = fix_paths([str(project)], Config(), unsafe=True)
    assert [(f.applied, f.changed) for f in second] == [(0, False)] * len(second)


def test_report_counts_agree_across_formats(tmp_path: Path) -> None:
    project = _project(tmp_path)
    json_out, html_out = tmp_path / "r.json", tmp_path / "r.html"
    common = ["scan", str(project), "--no-cache", "--isolated", "-j", "1"]
    run = [sys.executable, "-m", "torch2ms"]
    subprocess.run(run + common + ["--format", "json", "-o", str(json_out), "--html", str(html_out),
                                   "--date", "2026-01-01"], capture_output=True, text=True, timeout=300)
    text = subprocess.run(run + common, capture_output=True, text=True, timeout=300).stdout
    stats = subprocess.run(run + common + ["--statistics"], capture_output=True, text=True, timeout=300).stdout
    summary = json.loads(json_out.read_text(encoding="utf-8"))["summary"]
    html = html_out.read_text(encoding="utf-8")

    def card(name: str) -> float:
        match = re.search(rf'id="value-{re.escape(name)}" data-value="([^"]*)"', html)
        assert match, f"no summary card {name} in the HTML report"
        return float(match.group(1))

    assert card("findings") == summary["findings"] and card("apis") == len(summary["by_api"])  # APIs with uses
    for effort in ("remove", "automatic", "manual", "blocker", "unknown"):
        assert card(f"effort-{effort}") == summary["by_effort"].get(effort, 0), effort
    assert card("effort-file_error") == summary["by_category"].get("file_error", 0)
    blob = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert blob, "the HTML report embeds its data"
    files = json.loads(blob.group(1))["files"]
    assert len(files) == summary["files"] and sum(f[1] for f in files) == summary["lines"]
    findings = [line for line in text.splitlines() if re.match(r".+:\d+:\d+: TMS\d{3} ", line)]
    assert len(findings) == summary["findings"]
    assert f"{summary['files']:,} files ({summary['files_failed']:,} failed), {summary['lines']:,} lines: " \
           f"{sum(summary['by_api'].values()):,} uses of {len(summary['by_api']):,} torch APIs, " \
           f"{summary['findings']:,} findings" in stats
    assert text.splitlines()[-1].startswith(f"Found {summary['findings']:,} findings (")
    assert summary["files_failed"] >= 3  # the broken mutants, binary.py, latin.py


# ---------------------------------------------------------------- mapping files
GOOD_TABLE = """namespace: torch
entries:
  - api: torch.abs
    category: equivalent
    ms:
      - {api: mindspore.mint.abs, since: "2.3"}
    examples:
      - {torch: "torch.abs(x)", mindspore: "mindspore.mint.abs(x)", inputs: {x: {shape: [3], dtype: float32}}}
"""


@pytest.mark.parametrize("text, line, words", [
    (GOOD_TABLE.replace("category: equivalent", "category: [equivalent"), 5, "invalid YAML"),
    (GOOD_TABLE.replace("entries:", "entries: 5\nx:"), 3, "unknown key 'x'"),
    ("namespace: torch\nentries: 5\n", 2, "is not of type 'array'"),
    (GOOD_TABLE.replace("abs(x)", "abs(\x00x)"), 8, "control characters"),
    (GOOD_TABLE.replace('since: "2.3"', "since: [2]"), 6, "since"),
    (GOOD_TABLE.replace("    category: equivalent\n", "    category: equivalent\n    colour: red\n"), 5,
     "unknown key 'colour'"),
    (GOOD_TABLE.replace("    category: equivalent\n", "    category: equivalent\n    category: missing\n"), 5,
     "duplicate key"),
    (GOOD_TABLE + "  - ? [a, b]\n    : 1\n", 9, ""),
    (GOOD_TABLE + "  - {? {a: 1} : 2}\n", 9, ""),
    ("\t- bad indentation\n", 1, "invalid YAML"),
    ("a: &x [*x]\n", 1, ""),
    ("!!python/object/apply:os.system ['true']\n", 1, ""),
], ids=["malformed", "unknown-top-key", "wrong-type-entries", "control-character", "wrong-type-since", "unknown-key", "duplicate-key", "list-key",
        "map-key", "tab", "recursive-alias", "python-tag"])
def test_bad_mapping_file_is_a_located_error(text: str, line: int, words: str) -> None:
    with pytest.raises(MappingError) as info:
        parse_table_file("torch.bad.yaml", text)
    err = info.value
    assert err.file == "torch.bad.yaml" and str(err).startswith("torch.bad.yaml:"), str(err)
    assert err.line == line, str(err)
    assert words in str(err)


def test_duplicate_entry_across_files_names_both() -> None:
    from importlib import resources

    data = resources.files("torch2ms.data")
    with pytest.raises(MappingError) as info:
        build_table([("torch.a.yaml", GOOD_TABLE), ("torch.b.yaml", GOOD_TABLE)],
                    data.joinpath("meta.yaml").read_text(encoding="utf-8"),
                    data.joinpath("inventory.json").read_text(encoding="utf-8"))
    assert (info.value.file, info.value.line) == ("torch.b.yaml", 3)
    assert "torch.a.yaml:3" in str(info.value)


@settings(CI, max_examples=150)
@given(seed=strategies.st.integers(0, 2**32 - 1))
def test_mutated_mapping_files_never_raise_anything_else(seed: int) -> None:
    rng = random.Random(seed)
    text = mutate.mutate_text(GOOD_TABLE, rng)
    try:
        parse_table_file("torch.fz.yaml", text)
    except MappingError as exc:
        assert str(exc).startswith("torch.fz.yaml"), str(exc)
        assert exc.line is None or 1 <= exc.line <= text.count("\n") + 2, str(exc)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_mappings_check_names_file_and_line_of_a_target_that_does_not_resolve(tmp_path: Path) -> None:
    from torch2ms import mapping_tools

    unresolved, broken = tmp_path / "unresolved", tmp_path / "broken"  # load_table caches per folder
    unresolved.mkdir()
    broken.mkdir()
    (unresolved / "torch.yaml").write_text(
        GOOD_TABLE.replace("mindspore.mint.abs,", "mindspore.mint.no_such_op,"), encoding="utf-8")
    out = io.StringIO()
    assert mapping_tools.run_check(out, directory=str(unresolved)) == 1
    assert "torch.yaml:3: torch.abs: target mindspore.mint.no_such_op does not resolve" in out.getvalue()
    (broken / "torch.yaml").write_text(GOOD_TABLE.replace("category: equivalent", "category: 7"), encoding="utf-8")
    out = io.StringIO()
    assert mapping_tools.run_check(out, directory=str(broken)) == 1
    assert out.getvalue().startswith("schema: torch.yaml:4: entries[0].category:"), out.getvalue()
    assert "Traceback" not in out.getvalue()


# ---------------------------------------------------------------- safety
HOSTILE = """\
import os
open({marker!r}, "a").write("ran " + __name__ + "\\n")
os._exit(7)
import torch
x = torch.zeros(3)
"""


def test_scanning_never_runs_or_imports_the_scanned_code(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    project = tmp_path / "project"
    project.mkdir()
    body = HOSTILE.format(marker=str(marker))
    # A scanned file that runs code on import, shadows torch, the stdlib and torch2ms itself, plus a conftest
    # and a sitecustomize that Python would pick up from the path.
    for name in ("evil.py", "torch.py", "json.py", "ast.py", "tokenize.py", "re.py", "yaml.py", "torch2ms.py",
                 "sitecustomize.py", "conftest.py", "__init__.py", "setup.py"):
        (project / name).write_text(body, encoding="utf-8")
    (project / "torch").mkdir()
    (project / "torch" / "__init__.py").write_text(body, encoding="utf-8")
    # Library API.
    results = scan_paths([str(project)], Config(), jobs=2)
    assert len(results) == 13 and all(r.error is None for r in results)
    assert all("TMS101" in [d.code for d in r.diagnostics] for r in results)
    # --fix through the API rewrites text only.
    from torch2ms.fix_files import fix_paths

    fix_paths([str(project / "evil.py")], Config(), write=False)
    # The installed console script, run from inside the hostile folder, in every output format.
    script = shutil.which("torch2ms", path=str(Path(sys.executable).parent)) or "torch2ms"
    for extra in ([], ["--format", "json"], ["--format", "sarif"], ["--html", str(tmp_path / "r.html")],
                  ["--diff"]):
        done = subprocess.run([script, "scan", ".", "--no-cache", *extra], cwd=project, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 1, done.stderr
    assert not marker.exists(), f"scanned code ran: {marker.read_text()}"
