"""A hostile repository: what a checkout someone else wrote can put in the scanned tree.

Planted cache files, FIFOs, sockets, devices, links to kernel files, link loops, file
names that are not UTF-8 or hold control characters, huge lines and deep chains. For
each: no code from the tree runs, nothing hangs, every file gets its finding or one
TMS9xx naming the reason, and every error that ends the command is one line with exit
code 2 (exit code 1 means findings).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from torch2ms import cache as cache_module
from torch2ms.api import read_bytes, scan_paths
from torch2ms.cache import Cache, signing_key
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.model import FileResult

from conftest import as_tuples
from conftest import run_cli_process as run_cli  # hostile input: each run in its own process, under a time limit

GOOD = "import torch\nx = torch.zeros(3)\n"
FIXABLE = "import torch\n\n\ndef f(x):\n    return torch.nn.functional.softmax(x, dim=0) + torch.abs(x)\n"


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the test run) when the block takes longer than `seconds`."""
    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"still running after {seconds:g} s: it blocks")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def errors(results: list[FileResult]) -> dict[str, tuple[str, str]]:
    out = {}
    for result in results:
        error = result.error
        if error is not None:
            out[Path(result.path).name] = (error.code, error.message)
    return out


@pytest.fixture
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A user cache folder (and so a cache key) of the test's own."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("TORCH2MS_CACHE_DIR", str(folder))
    signing_key.cache_clear()
    yield folder / "torch2ms"
    signing_key.cache_clear()


# ---------------------------------------------------------------- the results cache
def project(root: Path, count: int = 6) -> Path:
    for i in range(count):
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"m{i}.py").write_text(GOOD + f"y{i} = torch.ones({i})\n")
    return root / "pkg"


def filled(tmp_path: Path, folder: str = "c") -> tuple[Path, Config, Cache]:
    """A project and the cache its scan filled."""
    pkg = project(tmp_path)
    config = Config()
    cache = Cache(tmp_path / folder, config, load_table())
    scan_paths([str(pkg)], config, cache=cache)
    return pkg, config, cache


class _Explode:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, ("open(__import__('os').environ['TORCH2MS_MARKER'], 'w').write('ran')",))


def test_a_planted_pickle_in_the_cache_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache file's name is predictable: a pickle committed under it must not be loaded."""
    marker = tmp_path / "marker"
    monkeypatch.setenv("TORCH2MS_MARKER", str(marker))
    pkg = project(tmp_path)
    config = Config()
    planted = Cache(tmp_path / "c", config, load_table()).file
    planted.parent.mkdir()
    planted.write_bytes(pickle.dumps({str(p): _Explode() for p in pkg.iterdir()}))
    cache = Cache(tmp_path / "c", config, load_table())
    results = scan_paths([str(pkg)], config, cache=cache)
    assert not marker.exists()
    assert cache.hits == 0 and all(r.diagnostics[0].code == "TMS101" for r in results)


def test_a_cache_file_written_for_another_user_is_not_read(tmp_path: Path, own_key: Path) -> None:
    """A cache file committed to the project, claiming the files have no findings, hides nothing:
    it was signed with another user's key. (With the signer's own key the forgery would be served.)"""
    from torch2ms.cache import content_digest

    pkg = project(tmp_path)
    config = Config()
    real = {str(p): p.read_bytes() for p in pkg.iterdir()}
    for path in real:
        Path(path).write_text("x = 1\n")
    forger = Cache(tmp_path / "c", config, load_table())
    scan_paths([str(pkg)], config, cache=forger)  # entries without findings ...
    for path, data in real.items():
        Path(path).write_bytes(data)

    def forge(header: dict) -> None:  # ... claimed for the real contents
        for row in header["entries"]:
            data = real[row[0]]
            row[1], row[2], row[3] = len(data), os.stat(row[0]).st_mtime_ns, content_digest(data)

    _resigned(forger.file, forge)
    served = scan_paths([str(pkg)], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert all(not r.diagnostics for r in served)  # the forgery works for the key that signed it
    signing_key.cache_clear()
    (own_key / "cache-key").unlink()  # another user, or a fresh CI machine, with a key of its own
    cache = Cache(tmp_path / "c", config, load_table())
    results = scan_paths([str(pkg)], config, cache=cache)
    assert cache.hits == 0
    assert all(r.diagnostics and r.diagnostics[0].code == "TMS101" for r in results)


def _parts(file: Path) -> tuple[dict, bytes]:
    """A cache file's header and its region (what the rows' offsets point into)."""
    data = file.read_bytes()
    start = len(cache_module.MAGIC) + 32
    (length,) = cache_module._LENGTH.unpack_from(data, start)
    return json.loads(data[start + 8:start + 8 + length]), data[start + 8 + length:]


def _signed(file: Path, header: dict, region: bytes) -> None:
    """Write a cache file signed with this user's key."""
    new = json.dumps(header).encode()
    body = cache_module._LENGTH.pack(len(new)) + new + region
    key = signing_key()
    assert key is not None
    file.write_bytes(cache_module.MAGIC + cache_module._mac(key, body) + body)


def _resigned(file: Path, change) -> None:
    """Rewrite a cache file's header with `change` and sign it again with this user's key."""
    header, region = _parts(file)
    change(header)
    _signed(file, header, region)


@pytest.mark.parametrize("change", [
    lambda h: h["entries"][0].__setitem__(1, "not a size"),
    lambda h: h["entries"][0].__setitem__(9, {"files": 1}),
    lambda h: h.__setitem__("graph", ["key", [[0, {"Net.forward": 5}]]]),
    lambda h: h["entries"].__setitem__(0, "an entry"),
    lambda h: h["entries"][0].__setitem__(8, 10 ** 9),
    lambda h: h["entries"][0].__setitem__(6, -1),
    lambda h: h.__setitem__("entries", {"a": 1}),
], ids=["size", "summary", "graph", "row", "offset", "order", "entries"])
def test_a_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, change) -> None:
    """Even a file this user's torch2ms signed is checked field by field; any mismatch is a miss."""
    pkg, config, first = filled(tmp_path)
    expected = as_tuples(scan_paths([str(pkg)], config))
    _resigned(first.file, change)
    cache = Cache(tmp_path / "c", config, load_table())
    assert as_tuples(scan_paths([str(pkg)], config, cache=cache)) == expected
    assert cache.hits == 0


def test_a_signed_record_that_does_not_decode_is_one_clear_error(tmp_path: Path) -> None:
    """Records are decoded when used. One that does not decode although the file's MAC checks out
    can only be a bug of this build: the command stops with one line naming the file, exit code 2."""
    pkg = project(tmp_path)
    first = run_cli("scan", str(pkg), "--isolated", "--cache-dir", "c", "--format", "json", cwd=tmp_path)
    assert first.returncode == 1
    (file,) = (tmp_path / "c").glob("*.t2ms")
    header, region = _parts(file)
    row = header["entries"][0]
    at, end = row[6], row[7]  # the first file's result: made an empty list of the same size
    _signed(file, header, region[:at] + b"[" + b" " * (end - at - 2) + b"]" + region[end:])
    proc = run_cli("scan", str(pkg), "--isolated", "--cache-dir", "c", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"torch2ms: error: {row[0]}: the results cache holds a result that does not decode "
                           "(of another shape); run again with --no-cache\n")


def test_a_truncated_cache_file_is_a_miss(tmp_path: Path) -> None:
    pkg, config, first = filled(tmp_path)
    data = first.file.read_bytes()
    for size in (0, 10, len(cache_module.MAGIC) + 40, len(data) // 2, len(data) - 1):
        first.file.write_bytes(data[:size])
        cache = Cache(tmp_path / "c", config, load_table())
        scan_paths([str(pkg)], config, cache=cache)
        assert cache.hits == 0


def test_a_fifo_a_link_or_a_huge_file_in_place_of_the_cache_is_a_miss(tmp_path: Path) -> None:
    pkg, config, good = filled(tmp_path, "good")
    target = Cache(tmp_path / "c", config, load_table()).file
    target.parent.mkdir()

    os.mkfifo(target)
    with deadline(20):
        cache = Cache(tmp_path / "c", config, load_table())
    assert cache.hits == 0 and cache._entries == {}

    target.unlink()
    target.symlink_to(good.file)  # a valid cache, but through a link planted in the tree
    assert Cache(tmp_path / "c", config, load_table())._entries == {}

    target.unlink()
    with open(target, "wb") as handle:  # sparse: no disk space used
        handle.truncate(cache_module.MAX_CACHE_BYTES + 1)
    with deadline(20):
        assert Cache(tmp_path / "c", config, load_table())._entries == {}


def test_the_cache_never_writes_through_planted_links(tmp_path: Path) -> None:
    pkg = project(tmp_path)
    config = Config()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "linked").symlink_to(outside, target_is_directory=True)
    scan_paths([str(pkg)], config, cache=Cache(tmp_path / "linked", config, load_table()))
    assert list(outside.iterdir()) == []  # a cache folder that is a link is not used
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / ".gitignore").symlink_to(outside / "authorized_keys")
    scan_paths([str(pkg)], config, cache=Cache(tmp_path / "c", config, load_table()))
    assert not (outside / "authorized_keys").exists()
    assert any(p.suffix == ".t2ms" for p in (tmp_path / "c").iterdir())


def test_the_cache_holds_no_pickle(tmp_path: Path) -> None:
    """The format is data only: JSON and text after a fixed header, nothing a deserializer could run."""
    _pkg, _config, cache = filled(tmp_path)
    data = cache.file.read_bytes()
    assert data.startswith(cache_module.MAGIC)
    header, region = _parts(cache.file)
    assert {"salt", "cwds", "graph", "entries"} == set(header)
    region.decode("utf-8")
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(data)


# ---------------------------------------------------------------- files that are not files
def hostile_tree(root: Path) -> Path:
    tree = root / "repo"
    (tree / "sub").mkdir(parents=True)
    (tree / "good.py").write_text(GOOD)
    os.mkfifo(tree / "fifo.py")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tree / "sock.py"))
    server.close()
    if os.path.exists("/proc/kmsg"):
        (tree / "kmsg.py").symlink_to("/proc/kmsg")
    (tree / "zero.py").symlink_to("/dev/zero")
    (tree / "sub" / "up").symlink_to(tree, target_is_directory=True)
    (tree / "loop.py").symlink_to(tree / "loop.py")
    outside = root / "elsewhere.py"
    outside.write_text(GOOD)
    (tree / "secret.py").symlink_to(outside)
    return tree


def test_fifos_sockets_devices_and_kernel_files_are_skipped_without_blocking(tmp_path: Path) -> None:
    tree = hostile_tree(tmp_path)
    with deadline(60):
        results = scan_paths([str(tree)], Config())
    found = errors(results)
    assert found["fifo.py"] == ("TMS903", "is a FIFO (named pipe), not a regular file: skipped")
    assert found["sock.py"] == ("TMS903", "is a socket, not a regular file: skipped")
    assert found["zero.py"] == ("TMS903", "is a character device, not a regular file: skipped")
    for link in ("secret.py",) + (("kmsg.py",) if os.path.exists("/proc/kmsg") else ()):
        assert found[link] == ("TMS903", "symlink to outside the scanned folders, not read"), link
    assert found["loop.py"] == ("TMS903", "broken symlink or symlink loop: skipped")
    assert found["up"][0] == "TMS903"  # the loop back up the tree is walked once
    assert [r.diagnostics[0].code for r in results if r.path.endswith("good.py")] == ["TMS101"]


def test_files_named_on_the_command_line_are_read_only_when_regular(tmp_path: Path) -> None:
    """A path given by the user is read wherever it points, but never a device or a kernel file."""
    fifo = tmp_path / "named.py"
    os.mkfifo(fifo)
    with deadline(30):
        assert read_bytes("/dev/zero")[1].diagnostics[0].message == "is a character device, not a regular file"
        assert read_bytes(str(fifo))[1].diagnostics[0].message == "is a FIFO (named pipe), not a regular file"
        assert "kernel's /proc" in read_bytes("/proc/self/status")[1].diagnostics[0].message
        if os.path.exists("/proc/kmsg"):
            assert read_bytes("/proc/kmsg")[1].diagnostics[0].code == "TMS903"
        results = scan_paths([str(fifo), "/dev/zero"], Config())
    assert [r.diagnostics[0].code for r in results] == ["TMS903", "TMS903"]


def test_a_fifo_swapped_in_during_the_scan_is_skipped(tmp_path: Path) -> None:
    """Between the walk and the read a file is replaced by a FIFO: the read refuses it, no hang."""
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "b.py").write_text(GOOD)
    swapped: list[str] = []

    def swap(_result: FileResult) -> None:
        if not swapped:
            (tmp_path / "b.py").unlink()
            os.mkfifo(tmp_path / "b.py")
            swapped.append("b.py")

    with deadline(30):
        results = scan_paths([str(tmp_path)], Config(), on_result=swap)
    assert swapped and errors(results) == {"b.py": ("TMS903", "is a FIFO (named pipe), not a regular file")}


def test_reads_are_bounded(tmp_path: Path) -> None:
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(64 << 20)
    code, message = errors(scan_paths([str(tmp_path)], Config()))["huge.py"]
    assert code == "TMS903" and message == "too large: 67,108,864 bytes (the limit is 33,554,432)"


def test_fix_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f.py")
    (tmp_path / "g.py").write_text(FIXABLE)
    with deadline(60):
        proc = run_cli("scan", str(tmp_path), "--isolated", "--fix", "--no-cache", "--jobs", "1", cwd=tmp_path)
    assert proc.returncode == 1 and "f.py:1:1: TMS903 error: is a FIFO" in proc.stdout
    assert "mindspore" in (tmp_path / "g.py").read_text()


# ---------------------------------------------------------------- odd names, odd configuration
def test_names_that_are_not_utf8_or_hold_control_characters(tmp_path: Path) -> None:
    """Every format reports such a file, escaped; none crashes; text output stays one line a finding."""
    folder = tmp_path / "n"
    folder.mkdir()
    for name in (b"/bad\xffname.py", "/esc\x1b[31mred\nline\u202e.py".encode()):
        name = os.fsencode(folder) + name
        with open(name, "w", encoding="utf-8") as handle:
            handle.write(GOOD)
    out = {}
    for fmt in ("text", "json", "sarif", "html"):
        proc = subprocess.run([sys.executable, "-m", "torch2ms", "scan", "n", "--isolated", "--no-cache",
                               "--format", fmt], cwd=tmp_path, capture_output=True, timeout=300)
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert b"Traceback" not in proc.stderr
        out[fmt] = proc.stdout.decode("utf-8")  # strict: the report is valid UTF-8
    assert out["text"].splitlines()[:2] == [
        "n/bad\\xffname.py:2:5: TMS101 [*] info: torch.zeros -> mindspore.mint.zeros",
        "n/esc\\x1b[31mred\\x0aline\\u202e.py:2:5: TMS101 [*] info: torch.zeros -> mindspore.mint.zeros",
    ]
    doc = json.loads(out["json"])
    assert [f["path"] for f in doc["files"]] == ["n/bad\\xffname.py", "n/esc\\x1b[31mred\\x0aline\\u202e.py"]
    assert "\\ud" not in out["json"].lower()  # no lone surrogate, not even escaped
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out["sarif"])["runs"][0]["results"]]
    assert uris == ["n/bad%FFname.py", "n/esc%1B%5B31mred%0Aline%E2%80%AE.py"]
    assert '"bad\\\\xffname.py"' in out["html"]  # the page's file tree holds each name escaped
    diff = subprocess.run([sys.executable, "-m", "torch2ms", "scan", "n", "--isolated", "--no-cache", "--diff"],
                          cwd=tmp_path, capture_output=True, timeout=300)
    assert diff.returncode == 1 and b"Traceback" not in diff.stderr
    assert "--- a/n/bad\\xffname.py\n" in diff.stdout.decode("utf-8")


@pytest.mark.parametrize("text, expected", [
    ("tool = 5\n", "pyproject.toml: [tool]: expected a table, got an integer"),
    ("[tool]\ntorch2ms = 5\n", "pyproject.toml: [tool.torch2ms]: expected a table, got an integer"),
    ("[tool.torch2ms]\nselect = " + "[" * 5000 + "]" * 5000 + "\n",
     "pyproject.toml: [tool.torch2ms] select: expected a list of strings"),
    ("[tool.torch2ms]\nselect = " + "[" * 50000 + "]" * 50000 + "\n",
     "pyproject.toml: cannot read configuration: values nested too deeply"),
    ("[tool.torch2ms]\nselect = [[\"TMS1\"]]\n", "pyproject.toml: [tool.torch2ms] select: expected a list of strings"),
])
def test_odd_configuration_is_one_line_and_exit_code_2(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "m.py").write_text(GOOD)
    proc = run_cli("scan", "m.py", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("torch2ms: error: ")
    assert proc.stderr.rstrip().endswith(expected)


def test_a_pyproject_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")
    (tmp_path / "m.py").write_text(GOOD)
    proc = run_cli("scan", "m.py", "--no-cache", "--config", "pyproject.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "torch2ms: error: pyproject.toml: cannot read configuration: is a FIFO (named pipe), " \
                          "not a regular file\n"


def test_a_symlink_loop_as_the_first_path(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "m.py").write_text(GOOD)
    proc = run_cli("scan", "loop", "m.py", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr == ""
    assert proc.stdout.splitlines()[:2] == ["loop:1:1: TMS903 error: broken symlink or symlink loop",
                                            "m.py:2:5: TMS101 [*] info: torch.zeros -> mindspore.mint.zeros"]


def test_output_into_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(GOOD)
    for fmt in ("json", "sarif", "html", "text"):
        proc = run_cli("scan", "m.py", "--no-cache", "--format", fmt, "-o", "missing/out", cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr == "torch2ms: error: missing/out: cannot write the report: No such file or directory\n"
    proc = run_cli("scan", "m.py", "--no-cache", "--html", "missing/r.html", cwd=tmp_path)
    assert proc.returncode == 2 and "missing/r.html: cannot write the report" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_an_internal_error_is_one_line_unless_verbose(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:
    from torch2ms import cli

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("the analysis broke")

    monkeypatch.setattr(cli, "scan_outcomes", broken)
    (tmp_path / "m.py").write_text(GOOD)
    assert cli.main(["scan", str(tmp_path / "m.py"), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err == ("torch2ms: internal error: ValueError: the analysis broke "
                   "(run with --verbose for the traceback; please report it)\n")
    assert cli.main(["scan", str(tmp_path / "m.py"), "--no-cache", "--verbose"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "ValueError: the analysis broke" in err
    assert cli.main(["--verbose", "scan", str(tmp_path / "m.py"), "--no-cache"]) == 2
    assert "Traceback" in capsys.readouterr().err


# ---------------------------------------------------------------- huge lines and deep chains
def _one_line(calls: int) -> str:
    return "import torch\nx = torch.zeros(3)\ny = [" + ", ".join(["torch.nn.functional.softmax(x, dim=0)"] * calls) + "]\n"


@pytest.mark.slow
def test_report_size_is_linear_in_the_findings_of_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch2ms.report import html, sarif, text
    from torch2ms.report import json as json_report

    monkeypatch.chdir(tmp_path)
    sizes: dict[str, list[int]] = {}
    for calls in (2000, 5000):
        path = tmp_path / f"w{calls}.py"
        path.write_text(_one_line(calls))
        results = scan_paths([str(path)], Config())
        assert len(results[0].diagnostics) == calls + 1
        rendered = {"json": json_report.render(results, "2.10"), "sarif": sarif.render(results, "2.10"),
                    "html": html.render(results, "2.10", date="2026-01-01"), "text": text.render(results)}
        for fmt, out in rendered.items():
            sizes.setdefault(fmt, []).append(len(out))
        previews = [d["rewrite"] for d in json.loads(rendered["json"])["files"][0]["diagnostics"] if d["rewrite"]]
        assert len(previews) == calls + 1
        assert max(len(p["before"]) + len(p["after"]) for p in previews) < 1000
    for fmt, (small, large) in sizes.items():
        assert large < 2.5 * small * 1.1, (fmt, sizes)


def test_rewrite_preview_cuts_a_long_line_around_the_edit() -> None:
    from torch2ms.model import Category, Diagnostic, Edit, Fix, Severity, Span
    from torch2ms.report import json as json_report

    line = "y = [" + "a, " * 200 + "torch.abs(x)" + ", b" * 200 + "]"
    col = line.index("torch.abs")
    fix = Fix("Call mindspore.mint.abs", (Edit(Span(1, col, 1, col + 9), "mindspore.mint.abs"),))
    diag = Diagnostic("TMS101", Severity.INFO, Category.EQUIVALENT, Span(1, col, 1, col + 12), "m", fix=fix)
    preview = json_report.rewrite_preview(diag, line + "\n")
    assert preview is not None
    assert preview["before"] == "\u2026" + line[col - 40:col + 49] + "\u2026"
    assert preview["after"] == "\u2026" + line[col - 40:col] + "mindspore.mint.abs" + line[col + 9:col + 49] + "\u2026"


@pytest.mark.parametrize("chain, count", [
    ("x" + ".abs()" * 10_000, 10_001),
    ("x" + "[0]" * 10_000, 1),
    ("torch" + ".nn" * 20_000, 1),
    ("x" + ".view(1)[0]" * 5_000, 5_001),
])
def test_long_chains_are_analysed(chain: str, count: int) -> None:
    result = scan_source(f"import torch\nx = torch.zeros(3)\ny = {chain}\n", "chain.py")
    assert result.error is None
    assert len([d for d in result.diagnostics if d.span.start_line > 1]) >= count


@pytest.mark.parametrize("chain, codes", [("x" + ".abs()" * 10_000, {"TMS205", "TMS203", "TMS201"}),
                                          ("self" + ".w" * 20_000, {"TMS201"})])
def test_long_chains_in_network_code(chain: str, codes: set[str]) -> None:
    """Rules that quote an expression (a condition, a mask) do so without walking all of it."""
    text = (f"import torch\nclass N(torch.nn.Module):\n    def forward(self, x):\n        if {chain}:\n"
            f"            return x[{chain} > 0]\n        return torch.nonzero({chain})\n")
    result = scan_source(text, "net.py")
    assert result.error is None and codes <= {d.code for d in result.diagnostics}
    assert all(len(d.message) < 600 for d in result.diagnostics)


def test_scan_source_leaves_process_state_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The language server runs two scans at once: the analysis must not toggle the collector or limits."""
    def changed(*_args: object) -> None:
        raise AssertionError("the analysis changed process state")

    for name in ("disable", "enable", "freeze", "set_threshold"):
        monkeypatch.setattr(gc, name, changed)
    monkeypatch.setattr(sys, "setrecursionlimit", changed)
    text = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.nonzero()\n"
    result = scan_source(text, "net.py")
    assert result.error is None and "TMS201" in [d.code for d in result.diagnostics]


def test_deep_chains_through_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "chain.py").write_text("import torch\nx = torch.zeros(3)\ny = x" + ".abs()" * 10_000 + "\n")
    proc = run_cli("scan", "chain.py", "--no-cache", "--select", "TMS9", cwd=tmp_path)
    assert proc.returncode == 0 and "TMS9" not in proc.stdout and proc.stderr == ""


# ---------------------------------------------------------------- workers and their parent
def _children(pid: int) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_fix_workers_end_with_their_parent(tmp_path: Path) -> None:
    """kill -9 of `scan --fix --jobs 2` mid-run: no worker lives on, nothing is written after, no temp files."""
    src = tmp_path / "src"
    src.mkdir()
    files = [src / f"m{i:03}.py" for i in range(600)]
    for path in files:
        path.write_text(FIXABLE * 8)
    proc = subprocess.Popen([sys.executable, "-m", "torch2ms", "scan", str(src), "--isolated", "--fix", "--jobs", "2",
                             "--no-cache"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline_at = time.monotonic() + 240
        while time.monotonic() < deadline_at:  # until both workers are fixing files
            workers |= _children(proc.pid)
            if len(workers) >= 2 and sum("mindspore" in p.read_text() for p in files) >= 2:
                break
            time.sleep(0.05)
        assert len(workers) >= 2, "the workers never started"
    finally:
        proc.kill()
        proc.wait()
    end = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < end:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)], "a worker outlived its parent"
    before = _snapshot(src)
    time.sleep(1.5)
    assert _snapshot(src) == before, "a file changed after the parent was killed"
    assert sorted(before) == [f"m{i:03}.py" for i in range(600)], "a temporary file was left behind"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_verify_worker_ends_with_its_pool(tmp_path: Path) -> None:
    """The verify pool starts its workers with process.PARENT_ENV; the worker's first step honours it."""
    from torch2ms.process import PARENT_ENV
    from torch2ms.verify.pool import worker_env

    assert worker_env()[PARENT_ENV] == str(os.getpid())
    pid_file = tmp_path / "grandchild"
    pool_like = (
        "import os, subprocess, sys, time\n"
        f"env = dict(os.environ, {PARENT_ENV}=str(os.getpid()))\n"
        "child = subprocess.Popen([sys.executable, '-c', 'from torch2ms.process import configure_process\\n"
        "configure_process()\\nimport time\\ntime.sleep(120)'], env=env, start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", pool_like], cwd=tmp_path)
    try:
        end = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < end
            time.sleep(0.05)
        time.sleep(1.0)  # the worker has set up its parent-death signal
        worker = int(pid_file.read_text())
        assert _alive(worker)
    finally:
        parent.kill()
        parent.wait()
    end = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(worker)


def test_a_fix_is_not_written_once_the_parent_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step of an atomic write checks the parent; a worker whose parent died writes nothing."""
    from torch2ms import fix_files, process

    target = tmp_path / "m.py"
    target.write_text(FIXABLE)
    ended: list[int] = []

    def end(_signum: int, _frame: object) -> None:
        process._remove_temp_files()
        ended.append(1)
        raise SystemExit(3)

    monkeypatch.setattr(process, "_parent", 999_999_999)  # a worker whose parent is gone
    monkeypatch.setattr(process, "_on_terminate", end)
    with pytest.raises(SystemExit):
        fix_files.fix_file(str(target), Config())
    assert ended and target.read_text() == FIXABLE
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]
