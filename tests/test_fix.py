"""--fix / --diff: edits, golden rewrites, the examples of the tables, guarantees, round trips."""

from __future__ import annotations

import ast
import difflib
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT, run_cli
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.fix import FixError, apply_edits, fix_source, fix_text
from torch2ms.fix_files import fix_file, write_atomic
from torch2ms.mappings import load_table
from torch2ms.model import DEVICES, Edit, Span
from torch2ms.transforms import result_dtype

GOLDEN = Path(__file__).resolve().parent / "golden" / "fix"
TABLE = str(GOLDEN / "table")

# name -> (target version, unsafe fixes, expected output file)
CASES = {
    "call_target": ("2.10", False, "call_target.fixed.py"),
    "param_rename": ("2.2", False, "param_rename.fixed.py"),
    "param_drop": ("2.10", False, "param_drop.fixed.py"),
    "default_explicit": ("2.10", False, "default_explicit.fixed.py"),
    "import_added": ("2.10", False, "import_added.fixed.py"),
    "import_removed": ("2.10", False, "import_removed.fixed.py"),
    "unsafe_structural": ("2.10", True, "unsafe_structural.fixed.py"),
    "unsafe_structural_safe_only": ("2.10", False, "unsafe_structural.safe.fixed.py"),
    "not_fixed": ("2.10", True, "not_fixed.fixed.py"),
}


def _source(name: str) -> str:
    base = name.replace("_safe_only", "")
    return (GOLDEN / f"{base}.py").read_text(encoding="utf-8")


# ---------------------------------------------------------------- apply_edits
def test_apply_edits_sorts_and_merges_identical_edits():
    text = "import torch\nx = torch.cat(a)\ny = torch.cat(b)\n"
    imp = Edit(Span(2, 0, 2, 0), "import mindspore\n")
    edits = [Edit(Span(3, 4, 3, 13), "mindspore.mint.cat"), imp, Edit(Span(2, 4, 2, 13), "mindspore.mint.cat"), imp]
    assert apply_edits(text, edits) == (
        "import torch\nimport mindspore\nx = mindspore.mint.cat(a)\ny = mindspore.mint.cat(b)\n")


def test_apply_edits_rejects_overlaps():
    with pytest.raises(ValueError, match="conflicting"):
        apply_edits("abcdef\n", [Edit(Span(1, 0, 1, 3), "X"), Edit(Span(1, 2, 1, 5), "Y")])
    with pytest.raises(ValueError, match="conflicting"):  # an insertion inside a replaced range
        apply_edits("abcdef\n", [Edit(Span(1, 0, 1, 3), "X"), Edit(Span(1, 1, 1, 1), "Y")])
    with pytest.raises(ValueError):
        apply_edits("abc\n", [Edit(Span(5, 0, 5, 1), "X")])


def test_apply_edits_adjacent_and_insertions_keep_order():
    text = "abcdef"
    out = apply_edits(text, [Edit(Span(1, 3, 1, 6), "Z"), Edit(Span(1, 0, 1, 3), "X"),
                             Edit(Span(1, 3, 1, 3), "1"), Edit(Span(1, 3, 1, 3), "2")])
    assert out == "X12Z"


def test_apply_edits_code_point_columns_and_crlf():
    text = "s = 'é漢'; t = torch.cat(x)\r\nu = 1\r\n"
    start = text.index("torch.cat")
    out = apply_edits(text, [Edit(Span(1, start, 1, start + 9), "mindspore.mint.cat"),
                             Edit(Span(2, 0, 2, 1), "v")])
    assert out == "s = 'é漢'; t = mindspore.mint.cat(x)\r\nv = 1\r\n"


# ---------------------------------------------------------------- golden files
@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str):
    version, unsafe, expected_file = CASES[name]
    table = load_table(TABLE)
    config = Config(target_version=version)
    before = _source(name)
    out = fix_text(before, f"{name}.py", config, unsafe, table)
    expected = (GOLDEN / expected_file).read_text(encoding="utf-8")
    assert out.text == expected, "".join(difflib.unified_diff(
        expected.splitlines(True), out.text.splitlines(True), "expected", "actual"))
    ast.parse(out.text)
    again = fix_text(out.text, f"{name}.py", config, unsafe, table)
    assert again.text == out.text and not again.applied  # --fix twice == once
    if name == "not_fixed":
        assert not out.applied and out.text == before


def test_every_fix_is_over_the_original_text_and_applies_alone():
    """The contract the language server relies on: each finding's fix applies to the scanned text."""
    table = load_table(TABLE)
    for name, (version, _unsafe, _) in CASES.items():
        text = _source(name)
        result = scan_source(text, name, Config(target_version=version), table)
        fixes = [d for d in result.diagnostics if d.fix is not None]
        for diag in fixes:
            alone = apply_edits(text, diag.fix.edits)
            ast.parse(alone)
            assert alone != text
        for diag in result.diagnostics:
            if diag.code in ("TMS103", "TMS105"):
                assert diag.fix is None or not diag.fix.safe, diag
            if diag.code.startswith("TMS2") and diag.fix is not None:  # only the rewrite of the call's API
                assert diag.fix.title == f"Call {diag.mindspore_api}", diag
        if name == "call_target":
            assert len(fixes) == 4 and all(d.fix.safe for d in fixes)


def test_unsafe_fixes_are_marked_unsafe():
    table = load_table(TABLE)
    result = scan_source(_source("unsafe_structural"), "u.py", Config(), table)
    titles = {d.fix.title: d.fix.safe for d in result.diagnostics if d.fix}
    assert titles["Make Net a mindspore.nn.Cell (forward -> construct)"] is False
    assert titles["Remove the device move .cuda()"] is False
    assert titles["Call mindspore.mint.nn.Linear"] is True


def test_dropping_a_non_default_value_is_never_done():
    # antialias=True selects another computation: dropping it would silently change the result,
    # so not even --unsafe-fixes rewrites the call
    table = load_table(TABLE)
    text = "import torch.nn.functional as F\ny = F.interpolate(x, 2.0, antialias=True)\n"
    assert fix_text(text, "d.py", Config(), False, table).text == text
    assert fix_text(text, "d.py", Config(), True, table).text == text


@pytest.mark.parametrize(("line", "expected"), [
    # a parameter MindSpore gives other results for (AdaptiveMaxPool3d's return_indices), by position or keyword
    ("y = nn.AdaptiveMaxPool3d(2, True)", None),
    ("y = nn.AdaptiveMaxPool3d(2, return_indices=True)", None),
    # ... and where the tables compose the call with the value changed (an int32 index or pivots), the composition
    ("y = torch.linalg.lu_solve(lu, pivots=piv, B=b)", (True, "y = mindspore.ops.lu_solve(b, lu, piv.astype(mindspore.int32))")),
    ("y = torch.index_add(x, 0, i, s)", (True, "y = x.index_add(0, i.astype(mindspore.int32), s, alpha=1)")),
    ("y = torch.index_add(x, 0, index=i, source=s)", (True, "y = x.index_add(0, i.astype(mindspore.int32), s, alpha=1)")),
    # a dropped parameter passed last by position goes too (unsafe: True is not torch's default)
    ("y = F.celu(x, 1.0, True)", (False, "y = mindspore.ops.celu(x, 1.0)")),
    ("y = F.celu(x, 1.0)", (True, "y = mindspore.ops.celu(x, 1.0)")),
    # a default that differs: written out when torch's default is relied on, left alone when passed
    ("y = torch.amax(x, 1)", (True, "y = mindspore.mint.amax(x, 1)")),
    ("y = torch.amax(x, dim=1)", (True, "y = mindspore.mint.amax(x, dim=1)")),
    ("y = torch.amax(x)", (False, "y = mindspore.mint.amax(x)")),
    # the CPU forms (the default device): a parameter MindSpore takes at another position goes by keyword
    # (nn.Dropout's first parameter is keep_prob), only where it is the last positional argument
    # (its only other fact covers 0-d inputs: a difference for some inputs leaves the fix safe; a torch
    # module starts in training mode, a Cell in inference mode)
    ("y = nn.Dropout(0.1)", (True, "y = mindspore.nn.Dropout(p=0.1).set_train()")),
    ("y = nn.Dropout(0.1, False)", None),
    ("y = nn.Conv2d(3, 8, 3, 1, 1)", (True, "y = mindspore.nn.Conv2d(3, 8, 3, 1, padding=1, pad_mode='pad', has_bias=True)")),
    # ... or where every positional argument after it goes by keyword too; MindSpore's pooling reads a
    # padding only with pad_mode='pad' (verified against torch for every padding, ceil_mode and count_include_pad)
    ("y = nn.AvgPool2d(3, 2, 1, True, False)",
     (True, "y = mindspore.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False, pad_mode='pad')")),
    # a MindSpore parameter torch lacks, written with the value that behaves as torch does
    ("y = nn.Conv2d(3, 8, 3, groups=3, bias=False)",
     (True, "y = mindspore.nn.Conv2d(3, 8, 3, group=3, has_bias=False, pad_mode='pad')")),
    ("y = nn.GELU()", (True, "y = mindspore.nn.GELU(approximate=False)")),
    ("y = nn.GELU(approximate='tanh')", (True, "y = mindspore.nn.GELU(approximate=True)")),  # the bool MindSpore names it by
    ("y = nn.GELU(approximate=mode)", None),  # a value known only at run time: no pair to write
    ("y = nn.Conv2d(3, 8, 3, padding_mode='reflect')", None),
    # a default computed from another argument: the pooling stride is the kernel size
    ("y = nn.MaxPool2d(k)", (True, "y = mindspore.nn.MaxPool2d(k, stride=k, pad_mode='pad')")),
    # an expression of names and constants is written again; a call is not (it could differ)
    ("y = nn.MaxPool2d(k + 1)", (True, "y = mindspore.nn.MaxPool2d(k + 1, stride=k + 1, pad_mode='pad')")),
    ("y = nn.MaxPool2d(f(k))", (False, "y = mindspore.nn.MaxPool2d(f(k), pad_mode='pad')")),
    # a shape MindSpore takes only as a tuple; over n > 1 trailing axes its begin_norm_axis must be counted
    # from the input's rank (MindSpore 2.10 rejects -2: "should be in the range [-1, 3)"), unknown here
    ("y = nn.LayerNorm(d)", (False, "y = mindspore.nn.LayerNorm((d,), epsilon=1e-05)")),
    ("y = nn.LayerNorm((4, 5), eps=1e-6)", None),
])
def test_parameter_facts_see_positional_arguments(line: str, expected) -> None:
    """A fact names torch's parameter and its position (`position`, from torch's signature)."""
    source = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + line + "\n"
    (diag,) = [d for d in scan_source(source, "f.py").diagnostics if d.span.start_line == 4]
    if expected is None:
        assert diag.fix is None, diag.fix
        return
    safe, text = expected
    assert diag.fix is not None and diag.fix.safe is safe
    assert apply_edits(source, diag.fix.edits).splitlines()[-1] == text


@pytest.mark.parametrize("method", ["float_power_(2)", "polygamma_(1)", "detach_()"])
def test_an_inplace_method_without_an_inplace_form_is_missing_and_never_rewritten(method: str) -> None:
    # Rewriting x.float_power_(2) to x.float_power(2) would silently drop the update of x.
    source = f"import torch\nx = torch.ones(3)\nx.{method}\n"
    (diag,) = [d for d in scan_source(source, "f.py").diagnostics if d.span.start_line == 3]
    assert diag.code == "TMS103" and diag.fix is None
    assert "no in-place form" in diag.message and f"x = x.{method.split('_(')[0]}(" in diag.message
    assert "x.float_power(2)" not in fix_text(source, "f.py", Config(), True, load_table()).text


def test_a_fix_that_would_not_parse_is_left_out():
    # A keyword added after a bare generator argument would be a syntax error.
    table = load_table(TABLE)
    text = "import torch\nm = torch.nn.Conv2d(c for c in cs)\nn = torch.nn.Linear(2, 3)\n"
    out = fix_text(text, "g.py", Config(), False, table)
    ast.parse(out.text)
    assert "torch.nn.Conv2d(c for c in cs)" in out.text
    assert "mindspore.mint.nn.Linear(2, 3)" in out.text


# ---------------------------------------------------------------- the shipped tables
def test_version_dependent_target_with_the_shipped_table():
    text = "import torch\ny = torch.cat([a, b], dim=0)\n"
    new, applied = fix_source(text, "v.py", Config(target_version="2.2"))
    assert new == "import mindspore\ny = mindspore.ops.cat([a, b], axis=0)\n"
    assert [d.torch_api for d in applied] == ["torch.cat"]
    new, _ = fix_source(text, "v.py", Config())
    assert new == "import mindspore\ny = mindspore.mint.cat([a, b], dim=0)\n"


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class _Normalise(ast.NodeTransformer):
    """Hide what other entries govern: MindSpore names other than the entry's own target, and
    keywords the fix adds to make a torch default explicit when the example leaves them out."""

    def __init__(self, own: str, dropped_keywords: set[str], dropped_positions: set[int] = frozenset()) -> None:
        self.own = own
        self.dropped_keywords = dropped_keywords
        self.dropped_positions = dropped_positions

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = _dotted(node)
        if name is not None and name.startswith("mindspore.") and name != self.own:
            return ast.Name(id="OTHER_MINDSPORE_NAME", ctx=ast.Load())
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.keywords = [k for k in node.keywords if k.arg not in self.dropped_keywords]
        if _dotted(node.func) == self.own:
            node.args = [a for i, a in enumerate(node.args) if i not in self.dropped_positions]
        return self.generic_visit(node)


def _body(code: str, own: str, dropped: set[str] = frozenset(), positions: set[int] = frozenset()) -> list[str]:
    tree = _Normalise(own, set(dropped), set(positions)).visit(ast.parse(code))
    return [ast.dump(s) for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]


def _example_config(entry, mindspore_code: str) -> Config | None:
    """The target version and device an example is written for: those for which the fix writes the
    target its MindSpore code calls.

    None when it calls none of them: no fix can produce it from the entry's data."""
    for target in entry.targets:
        parts = target.api.split(".")
        member = any(p[:1].isupper() for p in parts[:-1])  # a method: mindspore.nn.Cell.set_train
        pattern = rf"\.{re.escape(parts[-1])}\b" if member else rf"\b{re.escape(target.api)}\b"
        if re.search(pattern, mindspore_code):
            versions = ["2.10"]
            if target.since is not None:
                versions.append(".".join(map(str, target.since)))
            if target.until is not None:
                major, minor = target.until[0], (target.until[1] if len(target.until) > 1 else 0)
                older = (major, minor - 1) if minor > 0 else (major - 1, 99)
                versions.append(".".join(map(str, older)))
            for version in versions:
                for device in DEVICES:
                    config = Config(target_version=version, device=device)
                    if entry.target_for(config.version, device) is target and device not in target.no_kernel:
                        return config  # (where it has no kernel, the fix writes another form)
            return None
    return Config() if not entry.targets else None


def test_fixing_each_example_gives_its_mindspore_code():
    """For every example whose own finding has a safe fix, the fix yields the example's MindSpore code.

    Four allowances: a nested call of another API follows that API's own entry (any MindSpore
    name is accepted there), a keyword the fix adds to write out a torch default that differs
    from MindSpore's may be absent from the example, and so may the cast of the result to torch's
    dtype where the target states another one and the set_train() that puts a new layer whose
    forward depends on the training flag in torch's training mode (verify sets the mode itself;
    the fix is then stricter than the example).
    """
    table = load_table()
    checked = 0
    failures: list[str] = []
    unreachable: list[str] = []  # examples that call none of the entry's targets (e.g. a CPU stand-in)
    for entry in table.entries.values():
        for example in entry.examples:
            config = _example_config(entry, example.mindspore)
            if config is None:
                unreachable.append(f"{entry.source} {entry.api}: {example.mindspore!r}")
                continue
            target = entry.target_for(config.version, config.device)
            source = "import torch\n" + example.torch.rstrip("\n") + "\n"
            own = [d for d in scan_source(source, entry.api, config, table).diagnostics
                   if d.torch_api == entry.api and d.fix is not None and d.fix.safe]
            if not own or target is None:
                continue
            checked += 1
            out = fix_text(source, entry.api, config, True, table)  # nested calls of other entries too
            ast.parse(out.text)
            expected_tree = ast.parse(example.mindspore)
            written = {k.arg for n in ast.walk(expected_tree) if isinstance(n, ast.Call) for k in n.keywords}
            explicit = {p.ms or p.torch for p in target.params if p.kind == "default_differs"} - written
            casts = any(result_dtype(p) for p in target.params)
            written_text, expected_text = (_uncast(out.text), _uncast(example.mindspore)) if casts else \
                (out.text, example.mindspore)
            written_text = written_text.replace(".set_train()", "")
            # a default written out as a keyword may be passed by position in the example (MaxPool2d(2, 2))
            by_position = {p.position for p in target.params if p.kind == "default_differs" and p.default_from
                           and (p.ms or p.torch) in explicit and p.position is not None}
            if _body(written_text, target.api, explicit) not in (
                    _body(expected_text, target.api), _body(expected_text, target.api, positions=by_position)):
                failures.append(f"{entry.source} {entry.api}: {example.torch!r} -> {out.text!r}, "
                                f"expected {example.mindspore!r}")
            if "mindspore." in out.text:
                assert "import mindspore\n" in out.text
    assert not failures, "\n".join(failures)
    assert checked >= 15
    print(f"{checked} examples checked, {len(unreachable)} call no target of their entry")
    assert len(unreachable) <= checked // 5, "too many examples call no target of their entry:\n" + \
        "\n".join(unreachable)


def _uncast(text: str) -> str:
    """The text without the casts of results to torch's dtype that the fix adds."""
    text = re.sub(r"\(lambda r: \(r\[0\], r\[1\]\.astype\(mindspore\.\w+\)\)\)\((.*)\)$", r"\1", text, flags=re.M)
    return re.sub(r"\.astype\(mindspore\.\w+\)$", "", text, flags=re.M)


# ---------------------------------------------------------------- files and the CLI
def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    path = tmp_path / "model.py"
    path.write_text(text, encoding="utf-8")
    return path


MODEL = "import torch\n\n\ndef f(a, b):\n    return torch.cat([a, b], dim=0)  # join\n"
FIXED = "import mindspore\n\n\ndef f(a, b):\n    return mindspore.mint.cat([a, b], dim=0)  # join\n"


def test_cli_fix_writes_keeps_mode_and_is_idempotent(tmp_path: Path):
    path = _project(tmp_path, MODEL)
    os.chmod(path, 0o640)
    first = run_cli("scan", "--fix", "--no-cache", str(path))
    assert first.returncode == 0, first.stderr  # nothing remains
    assert path.read_text(encoding="utf-8") == FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "fixed 1 finding(s) in 1 file(s)" in first.stderr
    assert not [p for p in tmp_path.iterdir() if "torch2ms-tmp" in p.name]
    second = run_cli("scan", "--fix", "--no-cache", str(path))
    assert second.returncode == 0 and path.read_text(encoding="utf-8") == FIXED


def test_cli_fix_exit_code_counts_remaining_findings(tmp_path: Path):
    path = _project(tmp_path, MODEL + "\nwith torch.no_grad():\n    pass\n")
    proc = run_cli("scan", "--fix", "--no-cache", str(path))
    assert proc.returncode == 1
    assert "TMS103" in proc.stdout and "torch.cat" not in proc.stdout
    assert "mindspore.mint.cat" in path.read_text(encoding="utf-8")


def test_cli_diff_writes_nothing(tmp_path: Path):
    path = _project(tmp_path, MODEL)
    proc = run_cli("scan", "--diff", "--no-cache", str(path))
    assert proc.returncode == 1
    assert path.read_text(encoding="utf-8") == MODEL
    assert "-    return torch.cat([a, b], dim=0)  # join" in proc.stdout
    assert "+    return mindspore.mint.cat([a, b], dim=0)  # join" in proc.stdout
    assert proc.stdout.startswith("--- a/")
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    clean = _project(clean_dir, "import os\n")
    proc = run_cli("scan", "--diff", "--no-cache", str(clean))
    assert proc.returncode == 0 and proc.stdout == ""


def test_read_only_file_gets_an_error_and_stays(tmp_path: Path):
    path = _project(tmp_path, MODEL)
    os.chmod(path, 0o444)
    proc = run_cli("scan", "--fix", "--no-cache", str(path))
    assert proc.returncode == 1
    assert "read-only" in proc.stderr and "model.py" in proc.stderr
    assert path.read_text(encoding="utf-8") == MODEL
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_write_atomic_refuses_a_file_changed_on_disk(tmp_path: Path):
    path = _project(tmp_path, MODEL)
    path.write_text(MODEL + "# edited meanwhile\n", encoding="utf-8")
    with pytest.raises(FixError, match="changed on disk"):
        write_atomic(str(path), FIXED, MODEL)
    assert path.read_text(encoding="utf-8").endswith("# edited meanwhile\n")


def test_fix_file_does_not_overwrite_a_file_changed_during_the_run(tmp_path: Path, monkeypatch):
    import torch2ms.fix as fix_module

    path = _project(tmp_path, MODEL)
    real = fix_module.fix_text

    def slow_fix(text, *args, **kwargs):
        out = real(text, *args, **kwargs)
        path.write_text(MODEL + "x = 1\n", encoding="utf-8")  # another editor saves the file meanwhile
        return out

    monkeypatch.setattr(fix_module, "fix_text", slow_fix)
    result = fix_file(str(path), Config())
    assert result.error is not None and "changed on disk" in result.error and "model.py" in result.error
    assert path.read_text(encoding="utf-8") == MODEL + "x = 1\n"


def test_encoding_bom_and_crlf_are_kept(tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\r\ny = torch.cat([a, b])  # \xc3\xa9\r\n")
    result = fix_file(str(path), Config())
    assert result.error is None and result.changed
    assert path.read_bytes() == b"\xef\xbb\xbfimport mindspore\r\ny = mindspore.mint.cat([a, b])  # \xc3\xa9\r\n"


def test_noqa_line_is_not_fixed():
    text = "import torch\ny = torch.cat([a, b])  # noqa\nz = torch.cat([a, b])\n"
    new, applied = fix_source(text, "n.py", Config())
    assert len(applied) == 1
    assert "y = torch.cat([a, b])  # noqa" in new and "z = mindspore.mint.cat([a, b])" in new
    assert new.startswith("import torch\nimport mindspore\n")


# ---------------------------------------------------------------- round trips
def _covered_lines(text: str, path: str, config: Config, unsafe: bool) -> set[int]:
    """Lines that some fix of the original scan touches, and the torch import lines."""
    lines: set[int] = set()
    for diag in scan_source(text, path, config).diagnostics:
        if diag.fix is not None and (diag.fix.safe or unsafe):
            for edit in diag.fix.edits:
                lines.update(range(edit.span.start_line, edit.span.end_line + 1))
    for node in ast.parse(text).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _check_round_trip(text: str, path: str, unsafe: bool) -> bool:
    config = Config()
    out = fix_text(text, path, config, unsafe)
    if out.text == text:
        return False
    ast.parse(out.text)
    again = fix_text(out.text, path, config, unsafe)
    assert again.text == out.text, f"{path}: --fix twice differs from once"
    covered = _covered_lines(text, path, config, unsafe)
    old_lines, new_lines = text.splitlines(), out.text.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        for line in range(i1 + 1, i2 + 1):
            assert line in covered, f"{path}:{line} changed outside every edit: {old_lines[line - 1]!r}"
        if op == "insert":
            assert all(line in _INSERTED_IMPORTS for line in new_lines[j1:j2]), (path, new_lines[j1:j2])
    return True


def _imports_of_composed_forms() -> frozenset[str]:
    """``import mindspore`` and the imports of the modules the tables' composed forms name (`imports`)."""
    named = {f"import {module}" for entry in load_table().entries.values()
             for rewrite in (entry.rewrite, *(t.rewrite for t in entry.targets)) if rewrite is not None
             for module in rewrite.arg("imports", ())}
    return frozenset({"import mindspore", *named})


_INSERTED_IMPORTS = _imports_of_composed_forms()


def test_round_trip_examples_project():
    files = sorted((ROOT / "examples").rglob("*.py"))
    assert files
    changed = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        for unsafe in (False, True):
            changed += _check_round_trip(text, str(path), unsafe)
    assert changed >= 1


@pytest.mark.needs_torch
def test_round_trip_torch_sources():
    import torch

    root = Path(torch.__file__).resolve().parent
    files = sorted(p for p in root.rglob("*.py") if p.stat().st_size < 12_000)
    step = max(1, len(files) // 200)
    sample = files[::step][:200]
    changed = 0
    for index, path in enumerate(sample):
        text = path.read_text(encoding="utf-8")
        changed += _check_round_trip(text, str(path), unsafe=index % 4 == 0)
    assert len(sample) >= 150 and changed >= 20


def test_json_report_carries_the_fix_and_unsafe_flag(tmp_path: Path):
    import json

    path = _project(tmp_path, "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
                              "        return nn.ReLU()(x)\n")
    proc = run_cli("scan", "--format", "json", "--no-cache", str(path))
    doc = json.loads(proc.stdout)
    fixes = {d["torch_api"]: d["fix"] for f in doc["files"] for d in f["diagnostics"]}
    assert fixes["torch.nn.Module"]["safe"] is False
    assert {"span": {"start_line": 4, "start_col": 10, "end_line": 4, "end_col": 19},
            "text": "mindspore.nn.Cell"} in fixes["torch.nn.Module"]["edits"]
    relu = fixes["torch.nn.ReLU"]
    assert relu["safe"] is True and relu["edits"][0]["text"] == "mindspore.mint.nn.ReLU"
    unsafe = run_cli("scan", "--fix", "--unsafe-fixes", "--no-cache", str(path))
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    assert path.read_text(encoding="utf-8") == (
        "import mindspore\n\n\nclass Net(mindspore.nn.Cell):\n    def construct(self, x):\n"
        "        return mindspore.mint.nn.ReLU()(x)\n")


def _fixed_line(code: str, device: str = "cpu") -> str:
    """The fixed text of one statement (unsafe fixes too: the translation, not the safety, is tested)."""
    text = "import torch\nimport torch.nn as nn\n\n\ndef f(x: torch.Tensor):\n    return " + code + "\n"
    out, _ = fix_source(text, "m.py", Config(device=device), unsafe=True)
    return out.rsplit("return ", 1)[1].strip()


@pytest.mark.parametrize(("code", "expected"), [
    ("x.size()", "x.shape"),
    ("x.size(1)", "x.shape[1]"),
    ("x.size(dim=1)", "x.shape[1]"),
    ("x.real", "x.real()"),
    ("x.imag", "x.imag()"),
])
def test_attributes_and_methods_that_swap_between_the_libraries(code: str, expected: str) -> None:
    """torch's method x.size() is MindSpore's attribute x.shape; torch's attribute x.real is MindSpore's
    method x.real()."""
    assert _fixed_line(code) == expected


@pytest.mark.parametrize(("code", "expected"), [
    ("torch.full((2, 4), 7.0)", "mindspore.ops.full((2, 4), 7.0, dtype=mindspore.float32)"),
    ("torch.full((2,), True)", "mindspore.ops.full((2,), True, dtype=mindspore.bool_)"),
    ("torch.full((2,), -1)", "mindspore.ops.full((2,), -1)"),
    ("torch.full((3,), -1, dtype=torch.long)", "mindspore.ops.full((3,), -1, dtype=mindspore.int64)"),
    ("torch.full((2,), x.sum().item())", "torch.full((2,), x.sum().item())"),  # type unknown: not fixed
])
def test_full_gets_torchs_dtype_for_its_fill_value(code: str, expected: str) -> None:
    """mindspore.ops.full makes an int64 tensor of a float fill value (torch: float32): the fix writes the
    dtype torch infers for a constant fill value and leaves a fill value of unknown type alone."""
    assert _fixed_line(code) == expected


@pytest.mark.parametrize(("code", "expected"), [
    ("torch.fft.rfft(x).abs()", "mindspore.ops.ComplexAbs()(mindspore.ops.rfft(x))"),
    ("torch.abs(torch.fft.fft(x))", "mindspore.ops.ComplexAbs()(mindspore.ops.fft(x))"),
    ("torch.abs(x)", "mindspore.mint.abs(x)"),
])
def test_abs_of_a_complex_result_stays_real(code: str, expected: str) -> None:
    """MindSpore's abs keeps a complex tensor complex (torch: real magnitudes)."""
    assert _fixed_line(code) == expected


def test_on_ascend_the_mint_layer_keeps_torch_parameters() -> None:
    assert _fixed_line("nn.Conv2d(3, 8, 3, padding=1)", "ascend") == "mindspore.mint.nn.Conv2d(3, 8, 3, padding=1)"
    assert _fixed_line("nn.MaxPool2d(2)", "ascend") == "mindspore.mint.nn.MaxPool2d(2)"


# ---------------------------------------------------------------- the selection of compatible edits
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6), st.sampled_from(["", "a", "bb"])), max_size=40))
def test_linear_selection_accepts_exactly_what_the_pairwise_check_accepts(raw: list[tuple[int, int, str]]) -> None:
    from torch2ms.fix import _Accepted, _conflict, _ordered_unique

    accepted = _Accepted()
    reference: list[tuple[int, int, str]] = []
    for start, length, text in raw:
        edit = (start, start + length, text)
        merged = _ordered_unique(reference + [edit])
        expected = not any(_conflict(a, b) for a, b in zip(merged, merged[1:]))
        assert accepted.fits(edit) == expected
        if expected:
            reference = merged
            accepted.add(edit)
    assert accepted.items == reference


def test_fix_text_without_its_scan_result_applies_the_same_fixes():
    """`scan_result=False` (migrate wants the text only): the scans leave out the port check, whose findings
    carry no fix, and the text and the fixes applied are the same."""
    text = ("import mindspore\nimport torch\nimport torch.nn as nn\n\n"
            "layer = nn.Linear(3, 4)\ny = torch.cat([torch.ones(2), torch.zeros(2)], dim=0)\n"
            "z = mindspore.ops.no_such_op(y)\n")
    full = fix_text(text, "port.py", unsafe=True)
    lean = fix_text(text, "port.py", unsafe=True, scan_result=False)
    assert full.result is not None and any(d.code.startswith("TMS4") for d in full.result.diagnostics)
    assert lean.result is None
    assert lean.text == full.text and lean.text != text
    assert [(d.code, d.span) for d in lean.applied] == [(d.code, d.span) for d in full.applied]
