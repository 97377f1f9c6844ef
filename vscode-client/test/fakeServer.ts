// A stand-in language server for test/extension.test.ts, started by the
// extension in place of Python (the interpreter setting is
// [node, fakeServer.js], so this runs as `node fakeServer.js -m torch2ms lsp ...`).
// It records what it receives, one JSON object a line, in $TORCH2MS_FAKE_LOG.
import * as fs from 'node:fs';
import {
    ConfigurationRequest,
    DidChangeConfigurationNotification,
    DidOpenTextDocumentNotification,
    ExecuteCommandRequest,
    ExitNotification,
    InitializedNotification,
    InitializeRequest,
    InitializeResult,
    PublishDiagnosticsNotification,
    ShutdownRequest,
    StreamMessageReader,
    StreamMessageWriter,
    TextDocumentSyncKind,
    createProtocolConnection,
} from 'vscode-languageserver-protocol/node';

const logFile = process.env.TORCH2MS_FAKE_LOG;

function record(event: string, data: unknown): void {
    if (logFile) {
        fs.appendFileSync(logFile, JSON.stringify({ pid: process.pid, event, data }) + '\n');
    }
}

// Answer the extension's interpreter-version query (`python -c ...`) like a Python would.
if (process.argv[2] === '-c') {
    process.stdout.write('3.99\n');
    process.exit(0);
}

record('argv', process.argv.slice(2));
record('env', { PYTHONPATH: process.env.PYTHONPATH ?? null, PYTHONUNBUFFERED: process.env.PYTHONUNBUFFERED ?? null });

const connection = createProtocolConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));

connection.onRequest(InitializeRequest.type, (params): InitializeResult => {
    record('initialize', { initializationOptions: params.initializationOptions, rootUri: params.rootUri });
    return {
        capabilities: {
            textDocumentSync: TextDocumentSyncKind.Full,
            executeCommandProvider: { commands: ['torch2ms.scanWorkspace', 'torch2ms.verifyCall'] },
        },
        serverInfo: { name: 'fake-torch2ms' },
    };
});

connection.onNotification(InitializedNotification.type, async () => {
    const answer = await connection.sendRequest(ConfigurationRequest.type, { items: [{ section: 'torch2ms' }] });
    record('configuration', answer);
});

connection.onNotification(DidChangeConfigurationNotification.type, (params) => {
    record('didChangeConfiguration', params.settings);
});

connection.onNotification(DidOpenTextDocumentNotification.type, (params) => {
    record('didOpen', { uri: params.textDocument.uri, languageId: params.textDocument.languageId });
    void connection.sendNotification(PublishDiagnosticsNotification.type, {
        uri: params.textDocument.uri,
        diagnostics: [
            {
                range: { start: { line: 1, character: 4 }, end: { line: 1, character: 13 } },
                message: 'torch.cat maps to mindspore.ops.cat',
                source: 'torch2ms',
                code: 'TMS101',
                severity: 3,
            },
        ],
    });
});

connection.onRequest(ExecuteCommandRequest.type, (params) => {
    record('executeCommand', params);
    return { scanned: 0 };
});

connection.onRequest(ShutdownRequest.type, () => {
    record('shutdown', null);
    return null;
});

connection.onNotification(ExitNotification.type, () => {
    record('exit', null);
    process.exit(0);
});

connection.listen();
