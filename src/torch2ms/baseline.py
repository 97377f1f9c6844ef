"""`torch2ms scan --baseline REPORT.json`: report only the findings that are not in an earlier report.

A finding is matched by its file, code, torch API, context (the enclosing function
or class, e.g. "Net.forward") and the text of its first line with spaces collapsed
and a trailing comment dropped; line numbers are not part of the match, so findings
keep matching when code above them moves. Each finding of the baseline matches at
most one current finding (two identical lines in one function are two findings).

The JSON report (schema 4 and later) carries each finding's `context` and
`fingerprint` (a digest of the normalised line), so a report written with
`--output-format json` is a baseline.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .jsonfile import Schema, read_json
from .model import FileResult
from .strings import display_path
from .source import split_lines

MIN_SCHEMA = 4  # the first JSON report schema with context and fingerprint
_COMMENT = re.compile(r"#[^'\"]*$")
_SPACE = re.compile(r"\s+")

Key = tuple[str, str, str, str, str]  # path, code, torch API, context, fingerprint


class BaselineError(Exception):
    """The baseline file cannot be used; the message names it and says why."""


def context_index(text: str) -> Callable[[int], str]:
    """line -> the qualified name of the innermost function or class around it ("" at module level)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return lambda _line: ""
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                spans.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    spans.sort()
    starts = [s[0] for s in spans]

    def at(line: int) -> str:
        index = bisect.bisect_right(starts, line) - 1
        while index >= 0:  # the latest def starting before the line that still contains it is the innermost
            start, end, name = spans[index]
            if end >= line:
                return name
            index -= 1
        return ""

    return at


def normalise(line: str) -> str:
    """A line's code with runs of spaces collapsed and a trailing comment (one without quotes) dropped."""
    return _SPACE.sub(" ", _COMMENT.sub("", line)).strip()


def fingerprint(line: str) -> str:
    return hashlib.sha256(normalise(line).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def finding_facts(result: FileResult, text: str | None) -> list[tuple[str, str]]:
    """(context, fingerprint) of each of the result's findings, in order; empty texts without source."""
    if text is None:
        return [("", "") for _ in result.diagnostics]
    lines = split_lines(text)
    context = context_index(text) if result.diagnostics else (lambda _line: "")
    out = []
    for diag in result.diagnostics:
        number = diag.span.start_line
        line = lines[number - 1] if 1 <= number <= len(lines) else ""
        out.append((context(number), fingerprint(line)))
    return out


def read_report(path: str) -> dict[str, Any]:
    """An earlier JSON report (schema MIN_SCHEMA or later); BaselineError naming the file and the reason."""
    doc = read_json(path, "report", BaselineError)
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise BaselineError(f"{path}: not a torch2ms JSON report (write one with --output-format json)")
    version = doc.get("schema_version")
    if not isinstance(version, int) or version < MIN_SCHEMA:
        raise BaselineError(f"{path}: a JSON report of schema {version} has no finding fingerprints; write it "
                            f"again with this torch2ms (--output-format json)")
    _check_report(doc, Schema(path, BaselineError))
    return doc


def _check_report(doc: dict[str, Any], schema: Schema) -> None:
    """What --baseline and --compare read of a report, checked before use; a failure names the key."""
    for at, file in schema.items(doc["files"], "files"):
        file = schema.object(file, at)
        schema.string(file.get("path"), f"{at}.path")
        for where, diag in schema.items(file.get("diagnostics"), f"{at}.diagnostics"):
            diag = schema.object(diag, where)
            for key in ("code", "context", "fingerprint"):
                schema.string(diag.get(key), f"{where}.{key}")
            for key in ("torch_api", "category"):
                schema.string(diag.get(key), f"{where}.{key}", optional=True)
    summary = schema.object(doc.get("summary", {}), "summary")
    effort = summary.get("by_effort")
    if effort is not None:
        for at, count in schema.items(schema.object(effort, "summary.by_effort"), "summary.by_effort"):
            schema.integer(count, at, 0)
    readiness = schema.object(summary.get("readiness", {}), "summary.readiness")
    percent = readiness.get("percent")
    if percent is not None and (not isinstance(percent, (int, float)) or isinstance(percent, bool)):
        raise schema.fail("summary.readiness.percent", "expected a number")
    schema.string(schema.object(doc.get("project", {}), "project").get("date"), "project.date", optional=True)


@dataclass
class Baseline:
    keys: Counter[Key]
    path: str

    @classmethod
    def load(cls, path: str) -> Baseline:
        return cls.from_document(read_report(path), path)

    @classmethod
    def from_document(cls, doc: dict[str, Any], path: str) -> Baseline:
        keys: Counter[Key] = Counter()
        try:
            for file in doc["files"]:
                for diag in file["diagnostics"]:
                    keys[(file["path"], diag["code"], diag["torch_api"] or "", diag["context"],
                          diag["fingerprint"])] += 1
        except (KeyError, TypeError) as exc:
            raise BaselineError(f"{path}: not a torch2ms JSON report: missing {exc}") from None
        return cls(keys, path)

    def filter(self, results: Iterable[FileResult], read: Callable[[str], str | None],
               root: str | None = None) -> tuple[list[FileResult], int]:
        """The results without the findings the baseline holds, and how many were dropped."""
        left = Counter(self.keys)
        kept: list[FileResult] = []
        hidden = 0
        for result in results:
            if not result.diagnostics:
                kept.append(result)
                continue
            path = display_path(result.path, root)
            facts = finding_facts(result, read(result.path))
            new = []
            for diag, (context, print_) in zip(result.diagnostics, facts):
                key = (path, diag.code, diag.torch_api or "", context, print_)
                if left[key] > 0:
                    left[key] -= 1
                    hidden += 1
                else:
                    new.append(diag)
            kept.append(result if len(new) == len(result.diagnostics) else
                        FileResult(result.path, tuple(new), result.lines, result.scope))
        return kept, hidden
