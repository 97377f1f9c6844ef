"""Turning the scanner's findings into LSP values, and back.

Everything here is translation: spans (1-based lines, 0-based code-point
columns) to LSP ranges in the client's position encoding, `Diagnostic` to
`lsp.Diagnostic`, `Fix` to `TextEdit`s, a mapping entry to hover markdown and
the "# noqa: CODE" edit. No analysis happens here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lsprotocol import types as lsp

from torch2ms import noqa
from torch2ms.source import Encoding, SourceText
from torch2ms.mappings import MappingTable, doc_url
from torch2ms.model import Category, Diagnostic, Edit, Severity, Span

SOURCE = "torch2ms"
FIX_ALL_KIND = "source.fixAll.torch2ms"

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


_ENCODINGS = {
    lsp.PositionEncodingKind.Utf8.value: Encoding.UTF8,
    lsp.PositionEncodingKind.Utf16.value: Encoding.UTF16,
    lsp.PositionEncodingKind.Utf32.value: Encoding.UTF32,
}


class Lines:
    """A snapshot of a document with LSP positions in one encoding (the position model is
    `torch2ms.source`: lines as Python's tokenizer counts them, so a span's line number indexes them)."""

    def __init__(self, text: str, encoding: str = lsp.PositionEncodingKind.Utf16) -> None:
        self.source = SourceText(text)
        key = encoding.value if isinstance(encoding, lsp.PositionEncodingKind) else str(encoding)
        self.encoding = _ENCODINGS.get(key, Encoding.UTF16)

    def line(self, index: int) -> str:
        """The text of the 0-based line `index` ("" outside the document)."""
        return self.source.line(index + 1)

    def to_client(self, line1: int, col: int) -> lsp.Position:
        """Scanner position (1-based line, code-point column) -> LSP position."""
        count = len(self.source)
        if line1 > count:
            return self.end()
        line1 = max(line1, 1)
        return lsp.Position(line=line1 - 1, character=self.source.to_units(line1, col, self.encoding))

    def from_client(self, position: lsp.Position) -> tuple[int, int]:
        """LSP position -> scanner position (1-based line, code-point column), clamped to the text."""
        line1 = min(max(position.line, 0), len(self.source) - 1) + 1
        return line1, self.source.from_units(line1, position.character, self.encoding)

    def range(self, span: Span) -> lsp.Range:
        start = self.to_client(span.start_line, span.start_col)
        end = self.to_client(span.end_line, span.end_col)
        return lsp.Range(start=start, end=end)

    def end(self) -> lsp.Position:
        last = len(self.source)
        return lsp.Position(line=last - 1, character=self.source.to_units(last, len(self.source.line(last)),
                                                                          self.encoding))


def visible_span(diag: Diagnostic, lines: Lines) -> Span:
    """An empty span (a file error at a point) widened to one character so editors show it."""
    span = diag.span
    if (span.start_line, span.start_col) != (span.end_line, span.end_col):
        return span
    text = lines.line(span.start_line - 1)
    if span.start_col < len(text):
        return Span(span.start_line, span.start_col, span.start_line, span.start_col + 1)
    if span.start_col > 0 and span.start_col == len(text):
        return Span(span.start_line, span.start_col - 1, span.start_line, span.start_col)
    return span


def to_lsp(diag: Diagnostic, lines: Lines) -> lsp.Diagnostic:
    description = lsp.CodeDescription(href=diag.doc_url) if diag.doc_url else None
    return lsp.Diagnostic(
        range=lines.range(visible_span(diag, lines)),
        message=diag.message,
        severity=_SEVERITY[diag.severity],
        code=diag.code,
        code_description=description,
        source=SOURCE,
        data={"api": diag.torch_api} if diag.torch_api else None,
    )


def to_lsp_all(diags: Iterable[Diagnostic], lines: Lines) -> list[lsp.Diagnostic]:
    return [to_lsp(d, lines) for d in diags]


_SEVERITY_NUMBER = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}


def to_json(diag: Diagnostic, lines: Lines) -> dict[str, object]:
    """The same as `to_lsp`, as the JSON object itself (publishing thousands skips cattrs this way)."""
    rng = lines.range(visible_span(diag, lines))
    out: dict[str, object] = {
        "range": {"start": {"line": rng.start.line, "character": rng.start.character},
                  "end": {"line": rng.end.line, "character": rng.end.character}},
        "message": diag.message,
        "severity": _SEVERITY_NUMBER[diag.severity],
        "code": diag.code,
        "source": SOURCE,
    }
    if diag.torch_api:
        out["data"] = {"api": diag.torch_api}
    if diag.doc_url:
        out["codeDescription"] = {"href": diag.doc_url}
    return out


def text_edits(edits: Sequence[Edit], lines: Lines) -> list[lsp.TextEdit]:
    return [lsp.TextEdit(range=lines.range(e.span), new_text=e.text) for e in edits]


def whole_document_edit(old: str, new: str, lines: Lines) -> lsp.TextEdit:
    """One edit replacing the changed middle of the document (common prefix and suffix kept)."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return lsp.TextEdit(range=lsp.Range(start=_offset_position(old, start, lines),
                                        end=_offset_position(old, end_old, lines)),
                        new_text=new[start:end_new])


def _offset_position(text: str, offset: int, lines: Lines) -> lsp.Position:
    # Back the offset out of a \r\n pair so it never points between \r and \n.
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1
    source = lines.source if lines.source.text == text else SourceText(text)
    return lines.to_client(*source.position(offset))


def spans_overlap(span: Span, line1: int, col: int, end_line1: int, end_col: int) -> bool:
    """True when `span` touches the (inclusive) range given in scanner positions."""
    return (span.start_line, span.start_col) <= (end_line1, end_col) and (line1, col) <= (span.end_line, span.end_col)


# ---------------------------------------------------------------- noqa
def noqa_edit(diag: Diagnostic, lines: Lines) -> lsp.TextEdit | None:
    """The edit that adds `diag.code` to a `# noqa` comment on its first line; None if it cannot."""
    if diag.category is Category.FILE_ERROR:
        return None
    found = noqa.insertion(lines.line(diag.span.start_line - 1), [diag.code])
    if found is None:
        return None
    start, end, text = found
    return lsp.TextEdit(range=lsp.Range(start=lines.to_client(diag.span.start_line, start),
                                        end=lines.to_client(diag.span.start_line, end)), new_text=text)


# ---------------------------------------------------------------- hover
def hover_markdown(diag: Diagnostic, table: MappingTable, version: tuple[int, ...],
                   verification: dict[str, tuple[str, str]], device: str | None) -> str:
    """Markdown for a finding: its mapping entry (the form for the device), parameter facts, note,
    docs, and the verification record's line for that form and device."""
    api = diag.torch_api
    entry = table.lookup(api) if api else None
    out: list[str] = []
    title = f"`{api}`" if api else diag.code
    if entry is None:
        out.append(f"**{title}** — {diag.code}: {diag.message}")
        if diag.doc_url:
            out.append(f"[Documentation]({diag.doc_url})")
        return "\n\n".join(out)
    choice = entry.choose(version, device)
    target = choice.target
    category = entry.category_for(version, device)
    if target is not None:
        out.append(f"**{title}** → `{target.api}` ({category.value.replace('_', ' ')})")
    else:
        out.append(f"**{title}** → no MindSpore equivalent at the target version ({category.value.replace('_', ' ')})")
    out.append(f"{diag.code}: {diag.message}")
    where = choice.device_note()
    if where:
        out.append(f"Device: {where}.")
    if target is not None and target.params:
        out.append("Parameters:\n" + "\n".join(f"- {fact.describe()}" for fact in target.params))
    if entry.note:
        out.append(entry.note)
    link = doc_url(entry, target) or diag.doc_url
    if link:
        out.append(f"[MindSpore documentation]({link})")
    record = verification.get(entry.api)
    out.append(f"Verification: {record[1]}" if record else "Verification: not verified")
    return "\n\n".join(out)
