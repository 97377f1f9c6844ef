"""`scan_source(text, path, ...) -> FileResult`: the analysis of one file's text.

Pure: takes text, touches no disk, never raises on bad input. A file that
cannot be analysed gives one TMS9xx diagnostic naming the reason.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Sequence
from dataclasses import replace

from . import checks, dynamic_shape, leftover, portcheck, readiness, syntax
from .codes import CODES
from .config import Config
from .mappings import MappingTable, TableView, load_table, prefilter_words
from .model import ApiCall, Category, Confidence, Diagnostic, FileResult, ScopeFacts, Span
from .resolve import ModuleFacts, resolve_module
from .transforms import Fixer
from .limits import memory_limited
from .source import SourceText, count_lines, split_lines

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z0-9]+(?:[,\s]+[A-Z0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^[ \t]*#\s*torch2ms:\s*noqa(?::\s*(?P<codes>[A-Z0-9]+(?:[,\s]+[A-Z0-9]+)*))?[ \t]*$",
                       re.IGNORECASE | re.MULTILINE)
# findings about a class line (an nn.Module subclass, a custom autograd Function, a Dataset or Sampler)
# that its base's TMS106 joins: one finding per class line
_CLASS_CODES = frozenset({"TMS331", "TMS334", "TMS351"})
_PY2_HINTS = ("Missing parentheses in call to", "leading zeros in decimal integer literals",
              "invalid token", "Did you mean print", "Did you mean exec")


def file_error(path: str, code: str, message: str, line: int = 1, col: int = 0, lines: int = 0) -> FileResult:
    info = CODES[code]
    diag = Diagnostic(code=code, severity=info.severity, category=info.category,
                      span=Span(line, col, line, col), message=message, doc_url=info.doc_url)
    return FileResult(path=path, diagnostics=(diag,), lines=lines)


def _syntax_message(exc: SyntaxError) -> str:
    reason = exc.msg or "invalid syntax"
    if any(hint in reason for hint in _PY2_HINTS):
        reason += " (this looks like Python 2 code; torch2ms reads Python 3)"
    return f"syntax error: {reason}"


def parse(text: str) -> ast.Module:
    """The module's tree (`syntax.parse`: one tree of a text while a migration's passes share them). How deeply
    nested an expression ast accepts follows Python's recursion limit, which the entry points raise
    (`torch2ms.process`); the analysis never changes it."""
    return syntax.parse(text)


def noqa_codes(line: str) -> frozenset[str] | None:
    """None: no noqa; empty set: a bare `# noqa`; else the codes (or prefixes) listed."""
    if "noqa" not in line.lower():
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c)


def file_noqa_codes(text: str) -> frozenset[str] | None:
    """A file-level `# torch2ms: noqa` (every code) or `# torch2ms: noqa: TMS104, TMS3` (those codes or
    prefixes) on a line of its own, as ruff's `# ruff: noqa`: None when the file has none."""
    if "torch2ms" not in text:
        return None
    found: set[str] | None = None
    for match in _FILE_NOQA.finditer(text):
        codes = match.group("codes")
        if not codes:
            return frozenset()
        found = (found or set()) | {c.upper() for c in re.split(r"[,\s]+", codes) if c}
    return None if found is None else frozenset(found)


def continues(line: str) -> bool:
    """The line ends in a backslash continuation (a comment cannot follow it)."""
    return line.rstrip().endswith("\\") and "#" not in line


def noqa_line(lines: Sequence[str], index: int) -> int:
    """The line (0-based) whose `# noqa` covers a finding that starts on line `index`: the line itself, or,
    where it ends in a backslash continuation, the last line of the continued statement (as ruff maps it)."""
    while index + 1 < len(lines) and continues(lines[index]):
        index += 1
    return index


def suppressed(diag: Diagnostic, lines: list[str], file_codes: frozenset[str] | None = None) -> bool:
    """Whether a noqa comment turns the finding off: on its line (or the end of a backslash-continued
    statement) or, `file_codes`, a file-level `# torch2ms: noqa`."""
    if diag.category is Category.FILE_ERROR:
        # A file that could not be analysed has no findings to vouch for: a noqa comment that
        # happens to sit on the line of a syntax error must not hide the whole file.
        return False
    if file_codes is not None and covers(file_codes, diag.code):
        return True
    index = diag.span.start_line - 1
    if not 0 <= index < len(lines):
        return False
    codes = noqa_codes(lines[index])
    if codes is None and continues(lines[index]):
        codes = noqa_codes(lines[noqa_line(lines, index)])
    if codes is None:
        return False
    return covers(codes, diag.code)


def covers(codes: frozenset[str], code: str) -> bool:
    """Whether a noqa comment's codes (empty: all) turn `code` off. A low-confidence guess (TMS105) is the
    same use as the mapping or dynamic-shape finding that the project pass makes of it once another file
    proves the receiver: a comment naming the one shown covers the guess, which the next scan of the
    file alone makes again."""
    if not codes or any(code.startswith(c) for c in codes):
        return True
    return code == "TMS105" and any(c.startswith(("TMS1", "TMS2")) for c in codes)


def _use_keys(diag: Diagnostic) -> list[tuple[object, ...]]:
    """The use a finding is about: its span and torch API, and for a class line (`_CLASS_CODES` and the
    base's TMS106) the line and API: the findings `one_per_use` and `one_per_class_line` join."""
    if not diag.torch_api:
        return []
    keys: list[tuple[object, ...]] = [(diag.span, diag.torch_api)]
    if diag.code in _CLASS_CODES or diag.code == "TMS106":
        keys.append((diag.span.start_line, diag.torch_api))
    return keys


def unsuppressed(diagnostics: Sequence[Diagnostic], lines: list[str],
                 file_codes: frozenset[str] | None = None) -> list[Diagnostic]:
    """The findings no noqa comment turns off. A comment that turns off one finding of a use turns off the
    use: the findings joined with it into one (`one_per_use`) do not come back once it is suppressed,
    so `--add-noqa`, which names the finding shown, converges in one pass."""
    off = [suppressed(d, lines, file_codes) for d in diagnostics]
    if not any(off):
        return list(diagnostics)
    hidden = {key for d, is_off in zip(diagnostics, off) if is_off for key in _use_keys(d)}
    return [d for d, is_off in zip(diagnostics, off)
            if not is_off and not any(key in hidden for key in _use_keys(d))]


def diagnose(calls: Sequence[ApiCall], view: TableView,
             events: Sequence[dynamic_shape.ShapeEvent] | None = None,
             network: frozenset[str] | None = None, fixer: Fixer | None = None) -> list[Diagnostic]:
    """The findings of one file's calls and events; `fixer` gives each call's finding its fix."""
    if events is None:
        return [checks.check_call(call, view, fixer=fixer) for call in calls]
    if network is None:
        network = dynamic_shape.network_contexts(calls, events)  # forward and the functions it calls
    out = [checks.check_call(call, view, dynamic_shape.in_network(call.in_network, call.context, network), fixer)
           for call in calls]
    out.extend(dynamic_shape.event_diagnostics(calls, events, network))
    out.extend(dynamic_shape.extra_call_diagnostics(calls, view, network))
    return out


def _rank(diag: Diagnostic) -> tuple[bool, int, bool, str]:
    """Which of the findings of one use is reported: a high-confidence one, then the higher level, then
    an API-mapping or dynamic-shape finding (TMS1xx/TMS2xx) before a readiness check (TMS3xx)."""
    return (diag.confidence is Confidence.LOW, -diag.severity.rank, diag.category is Category.READINESS, diag.code)


def one_per_use(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per use: findings with the same span and torch API (TMS105 and TMS341 on `.to(device)`,
    TMS102 and TMS351 on a DataLoader, TMS101 and TMS365 on manual_seed) become the best-ranked one
    (`_rank`), whose message gains the others' advice ("also TMS365: ...", not a low-confidence guess)
    and which takes their fix when it has none."""
    groups: dict[tuple[Span, str], list[int]] = {}
    for index, diag in enumerate(diagnostics):
        if diag.torch_api and diag.category is not Category.FILE_ERROR:
            groups.setdefault((diag.span, diag.torch_api), []).append(index)
    if all(len(members) == 1 for members in groups.values()):
        return diagnostics
    out: dict[int, Diagnostic] = dict(enumerate(diagnostics))
    for (_, api), members in groups.items():
        if len(members) == 1:
            continue
        ranked = sorted(members, key=lambda i: _rank(diagnostics[i]))
        best = diagnostics[ranked[0]]
        others = [diagnostics[i] for i in ranked[1:]]
        advice = [f"{d.code}: {d.message.removeprefix(api + ': ')}" for d in others
                  if d.confidence is Confidence.HIGH]
        if advice:
            best = replace(best, message=f"{best.message} (also {'; '.join(advice)})")
        if best.fix is None:
            fix = next((d.fix for d in others if d.fix is not None), None)
            if fix is not None:
                best = replace(best, fix=fix)
        out[ranked[0]] = best
        for index in ranked[1:]:
            del out[index]
    return [out[i] for i in sorted(out)]


def one_per_class_line(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per class line: a base class named in `class Net(nn.Module):` (TMS106) is said by the
    line's class finding (TMS331 module-subclass, TMS334 custom autograd Function, TMS351 a Dataset),
    which takes its fix and whose range reaches over the base."""
    classes: dict[tuple[int, str | None], int] = {
        (d.span.start_line, d.torch_api): i for i, d in enumerate(diagnostics)
        if d.category is Category.READINESS and d.torch_api and d.code in _CLASS_CODES}
    if not classes:
        return diagnostics
    out: dict[int, Diagnostic] = dict(enumerate(diagnostics))
    for index, diag in enumerate(diagnostics):
        owner = classes.get((diag.span.start_line, diag.torch_api)) if diag.code == "TMS106" else None
        if owner is None:
            continue
        joined = out[owner]
        if diag.fix is not None and joined.fix is None:
            joined = replace(joined, fix=diag.fix)
        if (diag.span.end_line, diag.span.end_col) > (joined.span.end_line, joined.span.end_col):
            # the class finding's range reaches over the base it speaks for: `Net(nn.Module`
            joined = replace(joined, span=Span(joined.span.start_line, joined.span.start_col,
                                               diag.span.end_line, diag.span.end_col))
        out[owner] = joined
        del out[index]
    return [out[i] for i in sorted(out)]


def apply_config(result: FileResult, text: str, config: Config) -> FileResult:
    """Drop what select/ignore and `# noqa` comments turn off (also from the findings kept for the
    project-wide network scope, `FileResult.scope.latent`)."""
    scope = result.scope
    if not result.diagnostics and (scope is None or not scope.latent):
        return result
    lines = split_lines(text) if "noqa" in text.lower() else []
    file_codes = file_noqa_codes(text) if lines else None
    ignored = config.ignored_in(result.path) if config.per_file_ignores else ()

    def enabled(code: str) -> bool:
        return config.enabled(code) and not any(code.startswith(c) for c in ignored)

    kept = one_per_use(one_per_class_line(
        unsuppressed([d for d in result.diagnostics if enabled(d.code)], lines, file_codes)))
    if scope is not None and scope.latent:
        scope = dynamic_shape.filter_latent(
            scope, lambda d: enabled(d.code) and not suppressed(d, lines, file_codes))
    if len(kept) == len(result.diagnostics) and scope is result.scope:
        return result
    return FileResult(path=result.path, diagnostics=tuple(kept), lines=result.lines, scope=scope)


def scan_source(text: str, path: str = "<string>", config: Config | None = None,
                table: MappingTable | None = None, *, fixes: bool = True) -> FileResult:
    """Analyse one file's text. Never raises for bad input.

    `fixes=False` leaves every finding's `fix` unset (about a fifth of the time of a large
    file): the language server publishes without them and builds them for a code action."""
    config = config or Config()
    return syntax.remembered(("scan", text, path, id(config), id(table), fixes), (config, table),
                             lambda: apply_config(_analyse(text, path, config, table, fixes), text, config))


def _with_dataflow(scope: ScopeFacts | None, module: ModuleFacts, text: str) -> ScopeFacts | None:
    """`scope` with the file's data-flow facts (what its functions return, its classes' attributes, its
    module-level names) and the calls whose API other files decide (resolved by the project pass)."""
    facts = module.dataflow
    if not module.exported and facts.empty():
        return scope
    lines = split_lines(text) if module.exported and "noqa" in text.lower() else []
    pending = []
    for item in module.exported:
        line = item.call.span.start_line
        codes = noqa_codes(lines[line - 1]) if 0 < line <= len(lines) else None
        pending.append((item.receiver, item.member, item.low, None if codes is None else tuple(sorted(codes)),
                        item.call))
    return replace(scope or ScopeFacts(), pending=tuple(pending), returns=facts.returns, attrs=facts.attrs,
                   values=facts.values, arguments=facts.arguments)


def _analyse(text: str, path: str, config: Config, table: MappingTable | None, fixes: bool = True) -> FileResult:
    lines_count = count_lines(text)
    table = table or load_table()
    # Nothing can refer to torch (or torchvision, ...: the tables' roots) without naming it; the port check
    # (TMS4xx) reads what names MindSpore.
    has_torch = any(word in text for word in prefilter_words(table.roots))
    port_check = portcheck.wanted(text, config.enabled)
    if "\x00" in text:
        return file_error(path, "TMS903", "binary file: it contains NUL bytes", lines=lines_count)
    try:
        tree = parse(text)
    except SyntaxError as exc:
        return file_error(path, "TMS901", _syntax_message(exc), exc.lineno or 1,
                          max((exc.offset or 1) - 1, 0), lines_count)
    except RecursionError:
        return file_error(path, "TMS901", "cannot parse: expressions nested more deeply than Python's parser allows "
                                          f"at recursion limit {sys.getrecursionlimit():,} (docs/security.md)",
                          lines=lines_count)
    except (MemoryError, ValueError) as exc:
        if isinstance(exc, MemoryError) and memory_limited():
            raise
        return file_error(path, "TMS901", f"cannot parse: {type(exc).__name__}: too deeply nested or too large",
                          lines=lines_count)
    if not has_torch and not port_check:  # parsed all the same: a file that is not Python is never clean
        return FileResult(path=path, lines=lines_count)
    try:
        positions = SourceText(text)
        diagnostics = portcheck.port_diagnostics(tree, positions, table, config.version, config.device,
                                                 config.enabled) if port_check else []
        if not has_torch:
            diagnostics.sort(key=Diagnostic.sort_key)
            return FileResult(path=path, diagnostics=tuple(diagnostics), lines=lines_count)
        module = resolve_module(tree, table, positions)
        calls, shape_events = module.calls, module.events
        classes = dynamic_shape.class_facts(module.classes)
        network = dynamic_shape.network_contexts(calls, shape_events, classes)  # forward and what it calls
        view = table.view(config.version, config.device)  # the target choice of this scan
        fixer = Fixer(text, tree, view, positions) if fixes else None
        diagnostics.extend(diagnose(calls, view, shape_events, network, fixer))
        # layers called with torch's forward keywords, where MindSpore's construct names them otherwise
        # and losses called with labels their MindSpore class takes in another dtype (the rules read once a file
        # calls a layer: a scan of other files starts without reading them)
        if module.layer_calls:
            from .training_rules import load_rules as load_training_rules  # here: most files call no layer

            casts = load_training_rules().label_casts
            diagnostics.extend(d for d in (checks.layer_call(c, view, positions, fixer, casts)
                                           for c in module.layer_calls) if d is not None)
        # attributes of layers that MindSpore's class names otherwise or lacks (`m.groups` on mindspore.nn.Conv2d)
        diagnostics.extend(d for d in (checks.layer_attribute(a.calls, a.store, view, fixer)
                                       for a in module.layer_attributes) if d is not None)
        scope = dynamic_shape.scope_facts(calls, shape_events, classes, module.imports, network,
                                          view)  # for the network scope across files
        scope = _with_dataflow(scope, module, text)  # for the data flow across files
        if readiness.wanted(config.enabled):  # migration-readiness checks (TMS3xx) over the same facts
            diagnostics.extend(readiness.readiness_diagnostics(tree, calls, text, view, positions))
        if "mindspore" in text and config.enabled("TMS407"):  # a port in progress: each torch name it uses
            diagnostics.extend(leftover.leftover_diagnostics(tree, positions, diagnostics, table.roots))
    except RecursionError:
        return file_error(path, "TMS904", "analysis error: expressions nested too deeply to analyse",
                          lines=lines_count)
    except Exception as exc:  # an internal error must not stop a project scan
        if isinstance(exc, MemoryError) and memory_limited():
            raise
        return file_error(path, "TMS904", f"analysis error: {type(exc).__name__}: {exc}", lines=lines_count)
    diagnostics.sort(key=Diagnostic.sort_key)
    return FileResult(path=path, diagnostics=tuple(diagnostics), lines=lines_count, scope=scope)
