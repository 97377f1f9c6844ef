"""End-to-end tests of `torch2ms lsp`: pytest-lsp starts the real server process over stdio.

Each test drives the server with the capabilities a real client sends (the
VS Code and Neovim presets pytest-lsp ships) and checks what comes back.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.verify.record import load_record

pytestmark = [pytest.mark.e2e]  # the language server as a process, through a client

SERVER = [sys.executable, "-m", "torch2ms", "lsp"]
PROFILES = ["visual-studio-code", "neovim@v0.7.0"]
OPTIONS = {"select": [], "ignore": [], "targetVersion": "2.10", "debounce": 20}

MODEL = """\
import torch
import torch.nn.functional as F


def f(x):
    y = torch.clamp(x, min=0.0)
    z = F.softmax(y, dim=1)
    return torch.nonzero(z)
"""
N_MODEL = len(scan_source(MODEL, "model.py").diagnostics)  # clamp, softmax (TMS101), dynamic shape (nonzero)
# The code of torch.clamp's finding, as the tables decide it (TMS102: MindSpore rejects bool input).
CLAMP = next(d.code for d in scan_source(MODEL, "model.py").diagnostics if d.span.start_line == 6)
# The dynamic-shape code of `torch.nonzero` outside network code (TMS2xx), as the scanner decides it.
DYN = next(d.code for d in scan_source(MODEL, "model.py").diagnostics if d.span.start_line == 8)


# ---------------------------------------------------------------- helpers
async def start(client: LanguageClient, profile: str, root: Path, options: dict[str, Any] | None = None,
                capabilities: lsp.ClientCapabilities | None = None) -> lsp.InitializeResult:
    client.set_configuration(dict(options or OPTIONS), section="torch2ms")
    return await client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities or client_capabilities(profile or "visual-studio-code"),
        root_uri=from_fs_path(str(root)),
        workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(str(root)), name="ws")],
        initialization_options=dict(options or OPTIONS),
    ))


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def wait_diags(client: LanguageClient, uri: str,
                     pred: Callable[[list[lsp.Diagnostic]], bool] = lambda d: True,
                     timeout: float = 15.0) -> list[lsp.Diagnostic]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        diags = client.diagnostics.get(uri)
        if diags is not None and pred(list(diags)):
            return list(diags)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no matching diagnostics for {uri}; last: {client.diagnostics.get(uri)}")


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def apply_text_edits(text: str, edits: list[lsp.TextEdit], encoding: str = "utf-16") -> str:
    """What an editor does with TextEdits (positions in the negotiated encoding)."""
    lines = text.split("\n")

    def offset(pos: lsp.Position) -> int:
        line = lines[pos.line]
        col = 0
        while col < len(line) and units(line[:col], encoding) < pos.character:
            col += 1
        return sum(len(x) + 1 for x in lines[:pos.line]) + col

    resolved = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in resolved:
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: lsp.CodeAction, uri: str) -> list[lsp.TextEdit]:
    assert action.edit is not None
    out: list[lsp.TextEdit] = []
    for change in action.edit.document_changes or []:
        assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == uri
        out.extend(change.edits)  # type: ignore[arg-type]
    for edits in (action.edit.changes or {}).values():
        out.extend(edits)
    return out


async def quick_fixes(client: LanguageClient, uri: str, diag: lsp.Diagnostic) -> Any:
    """The quick-fix code actions the server offers for one of its diagnostics."""
    return await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=lsp.CodeActionContext(diagnostics=[diag], only=[lsp.CodeActionKind.QuickFix])))


def read_code_actions(client: LanguageClient) -> None:
    """lsprotocol's client-side hook reads any object with a "command" key as a Command, although a
    CodeAction's "command" is an object and a Command's a string (editors tell them apart that way)."""
    converter = client.protocol._converter
    converter.register_structure_hook(
        lsp.Command | lsp.CodeAction,
        lambda obj, _: converter.structure(obj, lsp.Command if isinstance(obj.get("command"), str)
                                           else lsp.CodeAction))


def codes(diags: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PROFILES)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    yield
    await stop_server(lsp_client)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def vscode(lsp_client: LanguageClient):
    yield
    await stop_server(lsp_client)


async def stop_server(client: LanguageClient) -> None:
    """shutdown + exit; the server must be gone within a few seconds (it is killed otherwise, and that fails)."""
    process = client._server
    if client.capabilities is None and process is not None:  # never initialized: nothing to shut down
        process.kill()
        await process.wait()
        return
    try:
        await asyncio.wait_for(client.shutdown_session(), 10)
    finally:
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 5)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
                raise AssertionError("the server did not exit after shutdown/exit") from None


# ---------------------------------------------------------------- tests
@pytest.mark.asyncio
async def test_diagnostics_published_like_the_cli(client: LanguageClient, tmp_path: Path) -> None:
    result = await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    assert result.capabilities.code_action_provider is not None
    assert result.capabilities.hover_provider
    uri = open_doc(client, tmp_path / "model.py", MODEL)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    expected = scan_source(MODEL, "model.py").diagnostics
    assert codes(diags) == sorted(d.code for d in expected)
    by_code = {str(d.code): d for d in diags}
    dyn = by_code[DYN]
    assert dyn.source == "torch2ms"
    expected_dyn = next(d for d in expected if d.code == DYN)
    assert dyn.severity == {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
                            "info": lsp.DiagnosticSeverity.Information}[expected_dyn.severity.value]
    assert dyn.message == expected_dyn.message
    assert dyn.code_description is not None and dyn.code_description.href.startswith("https://")
    assert (dyn.range.start.line, dyn.range.start.character) == (7, 11)  # `torch.nonzero(z)`
    assert (dyn.range.end.line, dyn.range.end.character) == (7, 27)
    info = by_code["TMS101"]
    assert info.severity == lsp.DiagnosticSeverity.Information
    # pull diagnostics where the client declares them (VS Code), the same findings
    if client.capabilities and client.capabilities.text_document and client.capabilities.text_document.diagnostic:
        assert result.capabilities.diagnostic_provider is not None
        report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))
        assert codes(list(report.items)) == codes(diags)
    else:
        assert result.capabilities.diagnostic_provider is None


@pytest.mark.asyncio
async def test_a_mindspore_file_gets_the_port_check(vscode: LanguageClient, tmp_path: Path) -> None:
    text = "import mindspore\n\nx = mindspore.ops.randn(3).cuda()\n"
    await start(vscode, "", tmp_path)
    uri = open_doc(vscode, tmp_path / "port.py", text)
    diags = await wait_diags(vscode, uri, lambda d: len(d) > 0)
    assert codes(diags) == ["TMS403"]
    assert (diags[0].range.start.line, diags[0].range.start.character) == (2, 4)
    assert diags[0].severity == lsp.DiagnosticSeverity.Error


@pytest.mark.asyncio
async def test_pull_diagnostics_can_be_turned_off(vscode: LanguageClient, tmp_path: Path) -> None:
    result = await start(vscode, "", tmp_path, options=dict(OPTIONS, pullDiagnostics=False))
    assert result.capabilities.diagnostic_provider is None  # push only, even for a pull-capable client
    uri = open_doc(vscode, tmp_path / "model.py", MODEL)
    assert len(await wait_diags(vscode, uri, lambda d: len(d) > 0)) == N_MODEL


@pytest.mark.asyncio
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
async def test_positions_in_the_client_encoding(vscode: LanguageClient, tmp_path: Path, encoding: str) -> None:
    caps = client_capabilities("visual-studio-code")
    if encoding != "utf-16":
        caps.general = lsp.GeneralClientCapabilities(position_encodings=[encoding])
    result = await start(vscode, "", tmp_path, capabilities=caps)
    assert result.capabilities.position_encoding == encoding
    prefix = 's = "😀 中文 ✓"; y = '
    text = f"import torch\n{prefix}torch.nonzero(x)\n"
    uri = open_doc(vscode, tmp_path / "emoji.py", text)
    diags = await wait_diags(vscode, uri, lambda d: any(x.code == DYN for x in d))
    dyn = next(d for d in diags if d.code == DYN)
    start_units = units(prefix, encoding)
    assert dyn.range.start == lsp.Position(line=1, character=start_units)
    assert dyn.range.end == lsp.Position(line=1, character=start_units + len("torch.nonzero(x)"))
    # and hover at a position inside the call, given in the same encoding
    hover = await vscode.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=1, character=start_units + 7)))
    assert hover is not None and "torch.nonzero" in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_noqa_action_applied_and_rescanned_clean(client: LanguageClient, tmp_path: Path) -> None:
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    text = MODEL.replace("F.softmax(y, dim=1)", "F.softmax(y, dim=1)  # noqa: TMS999")
    uri = open_doc(client, tmp_path / "model.py", text)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    for code, line in ((DYN, 7), ("TMS101", 6)):
        target = next(d for d in diags if d.code == code and d.range.start.line == line)
        actions = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=target.range,
            context=lsp.CodeActionContext(diagnostics=[target])))
        noqa = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and "noqa" in a.title]
        assert len(noqa) == 1, actions
        text = apply_text_edits(text, edits_of(noqa[0], uri))
    assert f"return torch.nonzero(z)  # noqa: {DYN}\n" in text
    assert "F.softmax(y, dim=1)  # noqa: TMS999, TMS101\n" in text  # an existing list is extended
    change_doc(client, uri, text, 2)
    after = await wait_diags(client, uri, lambda d: not any(x.range.start.line in (6, 7) for x in d))
    assert codes(after) == [CLAMP]  # only torch.clamp on line 5 is left
    assert scan_source(text, "model.py").diagnostics[0].span.start_line == 6


@pytest.mark.asyncio
async def test_verify_code_action_runs_the_call_in_torch_and_mindspore(client: LanguageClient, tmp_path: Path) -> None:
    """The code action runs `torch2ms verify FILE:LINE` on the open text (unsaved edits included)."""
    from importlib.metadata import version

    read_code_actions(client)
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    text = MODEL.replace("min=0.0", "min=0.25")  # only in the editor: the file on disk does not exist
    uri = open_doc(client, tmp_path / "model.py", text)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    clamp = next(d for d in diags if d.range.start.line == 5)
    actions = await quick_fixes(client, uri, clamp)
    verify = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and a.kind == "quickfix.torch2ms.verify"]
    assert len(verify) == 1 and verify[0].command is not None, actions
    assert list(verify[0].command.arguments or ()) == [uri, 6]
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=verify[0].command.command, arguments=verify[0].command.arguments))
    assert result["status"] == "passed", result
    assert result["api"] == "torch.clamp" and "min=0.25" in result["torch"]
    assert "mindspore.mint.clamp(x, min=0.25)" in result["mindspore"]
    assert result["ran_on"]["mindspore_version"] == version("mindspore")
    said = [m.message for m in client.messages if "line 6" in m.message]
    assert said == [result["message"]] and said[0].startswith(
        "Verified, line 6: torch.clamp(x, min=0.25) and mindspore.mint.clamp(x, min=0.25) agree on torch ")
    assert "--" not in said[0] and "largest difference" in said[0]
    # a line without a mapped call: a clear answer, and the server goes on
    blank = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="torch2ms.verifyCall", arguments=[uri, 3]))
    assert blank["status"] == "error" and "line 3" in blank["reason"], blank
    assert blank["message"] == ("Could not verify line 3: no torch call with a MindSpore counterpart starts on "
                                "this line."), blank
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=clamp.range.start))
    assert hover is not None


@pytest.mark.asyncio
async def test_verify_action_only_where_verify_can_work(client: LanguageClient, tmp_path: Path) -> None:
    """Offered on a call with a rewrite that runs on its own (what `torch2ms verify FILE:LINE` needs),
    not on a base class that has a fix but is no call."""
    read_code_actions(client)
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    text = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        return torch.clamp(x, min=0.0)\n")
    uri = open_doc(client, tmp_path / "net.py", text)
    diags = await wait_diags(client, uri, lambda d: any(x.range.start.line == 6 for x in d))

    async def verify_titles(diag: lsp.Diagnostic) -> list[str]:
        actions = await quick_fixes(client, uri, diag)
        return [a.title for a in actions or [] if isinstance(a, lsp.CodeAction) and a.kind == "quickfix.torch2ms.verify"]

    module = next(d for d in diags if d.range.start.line == 4 and d.code == "TMS331")  # the class line's one finding
    found = scan_source(text, "net.py").diagnostics[0]
    assert found.code == "TMS331" and found.fix is not None  # it has a fix, yet verify cannot run it
    assert await verify_titles(module) == []
    clamp = next(d for d in diags if d.range.start.line == 6)
    assert await verify_titles(clamp) == ["Verify torch.clamp against its MindSpore rewrite (runs torch and MindSpore)"]
    # a call whose inputs' shapes cannot be told (only the command line can give them): not offered
    text = text.replace("torch.clamp(x, min=0.0)", "torch.clamp(x * b * c * d, min=0.0)")
    change_doc(client, uri, text, 2)
    diags = await wait_diags(client, uri, lambda d: any(x.range.start.line == 6 and x.range.end.character > 40
                                                        for x in d))
    assert await verify_titles(next(d for d in diags if d.range.start.line == 6)) == []


def test_verify_message_shows_the_whole_rewrite() -> None:
    from torch2ms.lsp.server import verify_message
    from torch2ms.verify.locate import unwrapped

    assert unwrapped("(mindspore.mint.cat((a, b)))") == "mindspore.mint.cat((a, b))"
    assert unwrapped("mindspore.mint.nn.Conv2d(3, 8, 3)(x)") == "mindspore.mint.nn.Conv2d(3, 8, 3)(x)"
    assert unwrapped("(a)(b)") == "(a)(b)"
    assert unwrapped("(torch.clamp(x))") == "torch.clamp(x)" and unwrapped("torch.clamp(x)") == "torch.clamp(x)"
    spec = {"torch": "(torch.cat((a, b), dim=1))", "mindspore": "(mindspore.mint.cat((a, b), dim=1))"}
    ran_on = {"torch_version": "2.13.0", "mindspore_version": "2.10.0", "device": "cpu"}
    assert verify_message(4, spec, {"status": "passed", "max_abs_err": 0.0, "max_rel_err": 0.0}, ran_on) == (
        "Verified, line 4: torch.cat((a, b), dim=1) and mindspore.mint.cat((a, b), dim=1) agree on torch 2.13.0 "
        "and MindSpore 2.10.0 (CPU); largest difference 0 (relative 0).")
    failed = verify_message(4, spec, {"status": "failed", "max_abs_err": 0.5, "max_rel_err": 1.0,
                                      "reason": "values differ (run with --verbose to see them)"}, ran_on)
    assert failed == ("Verify failed, line 4: torch.cat((a, b), dim=1) and mindspore.mint.cat((a, b), dim=1) "
                      "differ on torch 2.13.0 and MindSpore 2.10.0 (CPU): values differ.")
    skipped = verify_message(4, spec, {"status": "skipped", "reason": "shape unknown; give it with --shape a=2"}, {})
    assert skipped == ("Could not verify line 4: torch.cat((a, b), dim=1) against mindspore.mint.cat((a, b), dim=1): "
                       "shape unknown.")


@pytest.mark.asyncio
async def test_quick_fix_and_fix_all(client: LanguageClient, tmp_path: Path) -> None:
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    uri = open_doc(client, tmp_path / "model.py", MODEL)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    clamp = next(d for d in diags if d.range.start.line == 5)
    actions = await quick_fixes(client, uri, clamp)
    fixes = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and "noqa" not in a.title]
    assert fixes and "mindspore.mint.clamp" in fixes[0].title
    assert fixes[0].kind == lsp.CodeActionKind.QuickFix and fixes[0].diagnostics
    fixed = apply_text_edits(MODEL, edits_of(fixes[0], uri))
    assert "mindspore.mint.clamp(x, min=0.0)" in fixed
    change_doc(client, uri, fixed, 2)
    after = await wait_diags(client, uri, lambda d: not any(x.range.start.line == 5 for x in d))
    assert len(after) == len(diags) - 1
    # fix all: one action of kind source.fixAll.torch2ms, same result as the CLI's --fix
    from torch2ms.fix import fix_source

    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll"])))
    assert actions is not None and len(actions) == 1
    assert actions[0].kind == "source.fixAll.torch2ms"
    all_fixed = apply_text_edits(fixed, edits_of(actions[0], uri))
    assert all_fixed == fix_source(fixed, str(tmp_path / "model.py"))[0]
    change_doc(client, uri, all_fixed, 3)
    final = await wait_diags(client, uri, lambda d: not any(x.code == "TMS101" for x in d))
    assert codes(final) == sorted(d.code for d in scan_source(all_fixed, "model.py").diagnostics)


@pytest.mark.asyncio
async def test_device_setting_chooses_the_form_for_that_device(client: LanguageClient, tmp_path: Path) -> None:
    """`device` in the settings: the hover and the quick fix name the form for that device, and the
    verification line says that verify did not run there."""
    layer = "import torch\n\nconv = torch.nn.Conv2d(3, 8, 3)\n"
    entry = load_table().entries["torch.nn.Conv2d"]
    cpu, ascend = entry.target_for((2, 10), "cpu"), entry.target_for((2, 10), "ascend")
    assert cpu is not None and ascend is not None and cpu.api != ascend.api
    await start(client, client.profile, tmp_path, dict(OPTIONS, device="ascend"))  # type: ignore[attr-defined]
    uri = open_doc(client, tmp_path / "layer.py", layer)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    assert any(ascend.api in d.message for d in diags), [d.message for d in diags]
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=12)))
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert f"`{ascend.api}`" in value and f"`{cpu.api}`" not in value
    assert "Verification: not verified on Ascend" in value


@pytest.mark.asyncio
async def test_hover_shows_the_mapping_entry(client: LanguageClient, tmp_path: Path) -> None:
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    uri = open_doc(client, tmp_path / "model.py", MODEL)
    await wait_diags(client, uri, lambda d: len(d) > 0)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=6, character=12)))
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert hover.contents.kind == lsp.MarkupKind.Markdown  # type: ignore[union-attr]
    assert "`torch.nn.functional.softmax`" in value
    cpu_form = load_table().entries["torch.nn.functional.softmax"].target_for((2, 10), "cpu")
    assert cpu_form is not None and f"`{cpu_form.api}`" in value  # the form for the default device
    assert "](https://" in value and "Verification:" in value
    record = load_record()
    assert record is not None and record.get("torch.nn.functional.softmax", "cpu") is not None
    assert f"Verification: {record.label('torch.nn.functional.softmax', 'cpu')}" in value
    if record.status("torch.nn.functional.softmax", "cpu") == "passed":
        assert f"verified on MindSpore {record.mindspore_version}, CPU: {cpu_form.api} as the fix writes it" in value
    assert hover.range is not None and hover.range.start == lsp.Position(line=6, character=8)
    # nothing to say on a blank line
    none = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=3, character=0)))
    assert none is None


@pytest.mark.asyncio
async def test_configuration_change_updates_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torch2ms]\nignore = ["TMS2"]\n', encoding="utf-8")
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    uri = open_doc(client, tmp_path / "model.py", MODEL)
    diags = await wait_diags(client, uri, lambda d: len(d) > 0)
    assert codes(diags) == sorted([CLAMP, "TMS101"])  # pyproject.toml ignores TMS2xx

    async def reconfigure(**settings: Any) -> list[str]:
        client.set_configuration(dict(OPTIONS, **settings), section="torch2ms")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"torch2ms": dict(OPTIONS, **settings)}))
        config = Config(ignore=("TMS2",), select=tuple(settings.get("select", ()))).with_ignored(
            tuple(settings.get("ignore", ())))
        expected = sorted(d.code for d in scan_source(MODEL, "model.py", config).diagnostics)
        return codes(await wait_diags(client, uri, lambda d: codes(d) == expected, timeout=10))

    # the client's ignore list extends the pyproject's (as the CLI's --ignore does): nothing is left
    after = await reconfigure(ignore=["TMS2", CLAMP, "TMS101"])
    assert after == []
    # a longer select prefix than the pyproject's ignore wins (the longest match decides)
    only = await reconfigure(select=["TMS101"])
    assert only == ["TMS101"]
    nothing = await reconfigure(select=["TMS3"])
    assert nothing == []


@pytest.mark.asyncio
async def test_scan_workspace_reports_progress(client: LanguageClient, tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(5):
        (pkg / f"m{i}.py").write_text(MODEL, encoding="utf-8")
    (pkg / "clean.py").write_text("print('no torch here')\n", encoding="utf-8")
    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    open_uri = open_doc(client, pkg / "m0.py", MODEL.replace("torch.nonzero(z)", "z"))
    await wait_diags(client, open_uri, lambda d: len(d) > 0)
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="torch2ms.scanWorkspace"))
    assert result == {"files": 6, "findings": 4 * 3}
    for i in range(1, 5):
        assert codes(client.diagnostics[from_fs_path(str(pkg / f"m{i}.py"))]) == sorted([CLAMP, "TMS101", DYN])
    assert DYN not in codes(client.diagnostics[open_uri])  # the open buffer keeps its live findings
    assert from_fs_path(str(pkg / "clean.py")) not in client.diagnostics
    if client.capabilities and client.capabilities.window and client.capabilities.window.work_done_progress:
        (token, reports), = client.progress_reports.items()
        kinds = [r.kind for r in reports]
        assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
        assert "6 file(s)" in reports[-1].message


NET = """\
import torch
from .util import helper


class Net(torch.nn.Module):
    def forward(self, x):
        return helper(x)
"""
HELPER = "import torch\n\n\ndef helper(x: torch.Tensor):\n    return x[x > 0]\n"


@pytest.mark.asyncio
async def test_network_scope_follows_calls_across_the_workspace(client: LanguageClient, tmp_path: Path) -> None:
    """A helper that a forward in another file calls is graded as network code, as the CLI grades it; editing
    the caller re-grades the open helper, and closing the caller brings back what its file on disk says."""
    from torch2ms.api import scan_paths

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "model.py").write_text(NET, encoding="utf-8")
    (pkg / "util.py").write_text(HELPER, encoding="utf-8")
    cli = {Path(r.path).name: r for r in scan_paths([str(tmp_path)])}
    network_codes = codes(cli["util.py"].diagnostics)
    local_codes = codes(scan_source(HELPER, str(pkg / "util.py")).diagnostics)
    assert network_codes != local_codes  # the CLI re-grades the helper: the test below can tell them apart

    await start(client, client.profile, tmp_path)  # type: ignore[attr-defined]
    util = open_doc(client, pkg / "util.py", HELPER)
    diags = await wait_diags(client, util, lambda d: codes(d) == network_codes)
    assert all("Net.forward in pkg/model.py" in d.message for d in diags if d.code not in local_codes)
    model = open_doc(client, pkg / "model.py", NET)
    await wait_diags(client, model, lambda d: True)
    change_doc(client, model, NET.replace("return helper(x)", "return x"), 2)  # the call is gone
    await wait_diags(client, util, lambda d: codes(d) == local_codes)
    change_doc(client, model, NET, 3)
    await wait_diags(client, util, lambda d: codes(d) == network_codes)
    change_doc(client, model, NET.replace("return helper(x)", "return x"), 4)
    await wait_diags(client, util, lambda d: codes(d) == local_codes)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=model)))
    await wait_diags(client, util, lambda d: codes(d) == network_codes)  # the file on disk still calls it


@pytest.mark.asyncio
async def test_syntax_error_shows_one_parse_diagnostic(vscode: LanguageClient, tmp_path: Path) -> None:
    client = vscode
    await start(client, "", tmp_path)
    uri = open_doc(client, tmp_path / "model.py", MODEL)
    await wait_diags(client, uri, lambda d: len(d) == N_MODEL)
    broken = MODEL.replace("z = F.softmax(y, dim=1)", "z = F.softmax(y, dim=1")
    change_doc(client, uri, broken, 2)
    diags = await wait_diags(client, uri, lambda d: codes(d) == ["TMS901"])
    assert diags[0].severity == lsp.DiagnosticSeverity.Error
    assert "syntax error" in diags[0].message
    change_doc(client, uri, MODEL, 3)
    await wait_diags(client, uri, lambda d: len(d) == N_MODEL)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def raw_request(client: LanguageClient, msg_id: str, payload: bytes) -> Any:
    """Send bytes the typed client cannot produce; the reply (result or error) comes back through its protocol."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[msg_id] = future
    client._server.stdin.write(payload)  # type: ignore[union-attr]
    await client._server.stdin.drain()  # type: ignore[union-attr]
    return await asyncio.wait_for(future, 10)


@pytest.mark.asyncio
async def test_bad_requests_do_not_stop_the_server(vscode: LanguageClient, tmp_path: Path) -> None:
    await start(vscode, "", tmp_path)
    uri = open_doc(vscode, tmp_path / "model.py", MODEL)
    await wait_diags(vscode, uri, lambda d: len(d) > 0)
    with pytest.raises(JsonRpcException) as unknown:  # unknown request
        await vscode.protocol.send_request_async("torch2ms/noSuchMethod", {"x": 1})
    assert unknown.value.code == -32601
    vscode.protocol.notify("torch2ms/noSuchNotification", {"x": 1})  # unknown notification: ignored
    with pytest.raises(JsonRpcException) as malformed:  # params of the wrong shape
        await raw_request(vscode, "bad-1", frame({"jsonrpc": "2.0", "id": "bad-1", "method": "textDocument/hover",
                                                  "params": {"textDocument": 7, "position": "here"}}))
    assert malformed.value.code in (-32602, -32603)
    # a malformed notification and a body that is not JSON at all
    vscode._server.stdin.write(frame({"jsonrpc": "2.0", "method": "textDocument/didChange",  # type: ignore[union-attr]
                                      "params": {"textDocument": None}}))
    vscode._server.stdin.write(b"Content-Length: 9\r\n\r\n{not json")  # type: ignore[union-attr]
    with pytest.raises(JsonRpcException):
        await vscode.workspace_execute_command_async(lsp.ExecuteCommandParams(command="torch2ms.nope"))
    # requests about documents the server does not know
    ghost = lsp.TextDocumentIdentifier(uri=from_fs_path(str(tmp_path / "ghost.py")))
    assert await vscode.text_document_hover_async(lsp.HoverParams(
        text_document=ghost, position=lsp.Position(line=0, character=0))) is None
    # positions beyond the text are clamped, not errors
    await vscode.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=999, character=999)))
    # a document closed while its analysis runs: no crash, its diagnostics are cleared
    big = MODEL + "".join(f"\ndef g{i}(x):\n    return torch.nonzero(x) + torch.clamp(x, 0)\n" for i in range(3000))
    change_doc(vscode, uri, big, 2)
    await asyncio.sleep(0.05)
    vscode.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    await wait_diags(vscode, uri, lambda d: d == [])  # cleared on close, and not re-filled by the late result
    await asyncio.sleep(0.5)
    assert list(vscode.diagnostics[uri]) == []
    # still answering
    uri2 = open_doc(vscode, tmp_path / "other.py", MODEL)
    assert len(await wait_diags(vscode, uri2, lambda d: len(d) > 0)) == N_MODEL


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.asyncio
async def test_ten_thousand_rapid_edits(vscode: LanguageClient, tmp_path: Path) -> None:
    await start(vscode, "", tmp_path)
    uri = open_doc(vscode, tmp_path / "model.py", MODEL)
    await wait_diags(vscode, uri, lambda d: len(d) == N_MODEL)
    process = vscode._server
    assert process is not None and process.stdin is not None

    def keystrokes(first_version: int, count: int) -> bytes:
        # type "x" after `return ` on the last line, then delete it again, one edit per message
        out = []
        for i in range(count):
            pos = {"line": 7, "character": 11}
            end = pos if i % 2 == 0 else {"line": 7, "character": 12}
            out.append(frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": first_version + i + 1},
                "contentChanges": [{"range": {"start": pos, "end": end}, "text": "x" if i % 2 == 0 else ""}]}}))
        return b"".join(out)

    async def hover_clamp() -> str:
        hover = await asyncio.wait_for(vscode.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=5, character=12))), 60)
        assert hover is not None
        return hover.contents.value  # type: ignore[union-attr]

    process.stdin.write(keystrokes(1, 2000))
    await process.stdin.drain()
    assert "torch.clamp" in await hover_clamp()
    rss_before = _rss_kb(process.pid)
    process.stdin.write(keystrokes(2001, 10_000))
    await process.stdin.drain()
    vscode.diagnostics.pop(uri, None)
    assert "torch.clamp" in await hover_clamp()  # answers, about the final text
    diags = await wait_diags(vscode, uri, lambda d: len(d) == N_MODEL)  # an even number of edits: the original text
    assert max((d.range.start.line, d.range.start.character) for d in diags) == (7, 11)
    rss_after = _rss_kb(process.pid)
    assert rss_after - rss_before < 20_000, (rss_before, rss_after)  # flat: well under 20 MB of growth


# ---------------------------------------------------------------- the conversions, without a server
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_column_conversion_round_trips(encoding: str) -> None:
    from torch2ms.lsp.convert import Lines

    line = 'a = "😀中"; b = "𝔘" + torch.x'
    lines = Lines(f"import torch\n{line}\n", encoding)
    for col in range(len(line) + 1):
        pos = lines.to_client(2, col)
        assert pos.character == units(line[:col], encoding)
        assert lines.from_client(pos) == (2, col)
    assert lines.from_client(lsp.Position(line=40, character=3)) == (3, 0)  # clamped to the text


def test_noqa_edit_cases() -> None:
    from torch2ms.lsp.convert import Lines, noqa_edit
    from torch2ms.model import Category, Diagnostic, Severity, Span

    def diag(line: int, code: str = "TMS101") -> Diagnostic:
        return Diagnostic(code, Severity.INFO, Category.EQUIVALENT, Span(line, 0, line, 3), "m")

    text = "x = torch.a(1)   \ny = torch.b(2)  # noqa\nz = torch.c(3) + \\\n  1\nw = torch.d(4)  # NOQA:TMS2 trailing words\n"
    lines = Lines(text)
    first = noqa_edit(diag(1), lines)
    assert first is not None and apply_text_edits(text, [first]).startswith("x = torch.a(1)  # noqa: TMS101\n")
    assert noqa_edit(diag(2), lines) is None  # a bare noqa already covers it
    assert noqa_edit(diag(3), lines) is None  # after a line continuation a comment would be a syntax error
    last = noqa_edit(diag(5), lines)
    assert last is not None
    fixed = apply_text_edits(text, [last])
    # the scanner reads every word after "noqa:" as a code, so the code goes after the last one
    assert "w = torch.d(4)  # NOQA:TMS2 trailing words, TMS101\n" in fixed
    from torch2ms.engine import noqa_codes

    assert noqa_codes(fixed.splitlines()[4]) >= {"TMS2", "TMS101"}


def test_whole_document_edit_keeps_common_text() -> None:
    from torch2ms.lsp.convert import Lines, whole_document_edit

    old = "import torch\n\ns = '😀'; y = torch.clamp(x, min=0)\nprint(y)\n"
    new = "import mindspore\n\ns = '😀'; y = mindspore.mint.clamp(x, min=0)\nprint(y)\n"
    edit = whole_document_edit(old, new, Lines(old))
    assert apply_text_edits(old, [edit]) == new
    assert edit.range.end.line == 2 and "print" not in edit.new_text


def test_client_settings_are_checked_like_the_cli() -> None:
    from torch2ms.lsp.server import ClientSettings

    settings, problems = ClientSettings.parse({"select": ["tms1", "TMS999"], "ignore": ["FOO"], "targetVersion": "1.0"})
    assert settings.select == ("TMS1",) and settings.ignore == () and settings.target_version is None
    assert any("'select'" in p and "did you mean TMS905" in p for p in problems)
    assert any("'ignore'" in p and "'FOO'" in p for p in problems)
    assert any("targetVersion" in p and "did you mean 2.10" in p for p in problems)
