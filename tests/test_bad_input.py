"""Each kind of bad input gives one clear error naming the file and the reason; the scan goes on."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from torch2ms.api import scan_paths
from torch2ms.config import Config
from torch2ms.model import FileResult

GOOD = "import torch\nx = torch.zeros(3)\n"


def scan(*paths: Path) -> dict[str, FileResult]:
    return {Path(r.path).name: r for r in scan_paths([str(p) for p in paths], Config())}


def only_error(result: FileResult) -> tuple[str, str, int]:
    assert len(result.diagnostics) == 1, result.diagnostics
    diag = result.diagnostics[0]
    return diag.code, diag.message, diag.span.start_line


def test_syntax_error_with_location(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import torch\n\ndef f(:\n    pass\n")
    (tmp_path / "good.py").write_text(GOOD)
    results = scan(tmp_path)
    code, message, line = only_error(results["bad.py"])
    assert code == "TMS901" and line == 3 and message.startswith("syntax error")
    assert results["good.py"].diagnostics[0].code == "TMS101"


def test_python2_code_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("import torch\nprint 'hello'\n")
    code, message, line = only_error(scan(tmp_path / "old.py")["old.py"])
    assert code == "TMS901" and line == 2 and "Python 2" in message


def test_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"import torch\n# caf\xe9\nx = torch.zeros(1)\n")
    code, message, line = only_error(scan(tmp_path / "latin.py")["latin.py"])
    assert code == "TMS902" and line == 2 and "utf-8" in message and "0xe9" in message


def test_pep263_coding_line_is_honoured(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nimport torch\nname = 'café'; x = torch.zeros(1)\n"
    (tmp_path / "coded.py").write_bytes(source.encode("latin-1"))
    (diag,) = scan(tmp_path / "coded.py")["coded.py"].diagnostics
    assert diag.code == "TMS101" and diag.span.start_line == 3
    assert diag.span.start_col == source.splitlines()[2].index("torch.zeros")


def test_bad_coding_declaration(tmp_path: Path) -> None:
    (tmp_path / "weird.py").write_bytes(b"# -*- coding: klingon -*-\nimport torch\n")
    code, message, _ = only_error(scan(tmp_path / "weird.py")["weird.py"])
    assert code == "TMS902" and "klingon" in message


def test_bom_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    (diag,) = scan(tmp_path / "bom.py")["bom.py"].diagnostics
    assert diag.code == "TMS101" and diag.span.start_line == 2 and diag.span.start_col == 4


def test_empty_file_is_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    result = scan(tmp_path / "empty.py")["empty.py"]
    assert result.diagnostics == () and result.lines == 0


def test_binary_file_named_py(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(pickle.dumps({"torch": list(range(50))}) + b"\x00\x01")
    code, message, _ = only_error(scan(tmp_path / "blob.py")["blob.py"])
    assert code == "TMS903" and "binary" in message


def _scan_as_nobody(path: Path) -> FileResult:
    """Root reads any file, so drop to an unprivileged user in a forked child."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            os.setgid(65534)
            os.setuid(65534)
            data = pickle.dumps(scan_paths([str(path)], Config())[0])
            os.write(write_fd, data)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))


def test_unreadable_file(tmp_path: Path) -> None:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="torch2ms-unreadable-"))
    try:
        folder.chmod(0o755)
        secret = folder / "secret.py"
        secret.write_text(GOOD)
        secret.chmod(0o000)
        result = _scan_as_nobody(secret) if os.geteuid() == 0 else scan(secret)["secret.py"]
        code, message, _ = only_error(result)
        assert code == "TMS903" and "permission denied" in message
    finally:
        (folder / "secret.py").chmod(0o644)
        (folder / "secret.py").unlink()
        folder.rmdir()


def test_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "again").symlink_to(tmp_path / "sub")
    (tmp_path / "sub" / "m.py").write_text(GOOD)
    results = scan_paths([str(tmp_path)], Config())
    by_name = {Path(r.path).name: r for r in results}
    for name in ("a.py", "b.py"):
        code, message, _ = only_error(by_name[name])
        assert code == "TMS903" and "symlink" in message
    assert by_name["again"].diagnostics[0].code == "TMS903"
    # The real file is scanned once, the loop does not recurse forever.
    assert sum(1 for r in results if r.path.endswith("m.py")) == 1


def test_missing_directory_does_not_stop_the_scan(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(GOOD)
    results = scan_paths([str(tmp_path / "nowhere"), str(tmp_path / "m.py")], Config())
    code, message, _ = only_error(results[0])
    assert code == "TMS903" and "no such file" in message and results[0].path.endswith("nowhere")
    assert results[1].diagnostics[0].code == "TMS101"


def test_deep_nesting_does_not_crash(tmp_path: Path) -> None:
    long_sum = "import torch\nx = " + " + ".join(["torch.ones(1)"] * 3000) + "\n"
    (tmp_path / "long.py").write_text(long_sum)
    result = scan(tmp_path / "long.py")["long.py"]
    assert len(result.diagnostics) == 3000 and result.error is None
    nested = "import torch\nx = " + "f(" * 5000 + "torch.ones(1)" + ")" * 5000 + "\n"
    (tmp_path / "nested.py").write_text(nested)
    error = scan(tmp_path / "nested.py")["nested.py"].error
    assert error is not None and error.code in ("TMS901", "TMS904")
