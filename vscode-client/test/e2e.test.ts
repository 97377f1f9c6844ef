// End-to-end test: starts the real torch2ms language server exactly as the
// extension does (command line, environment and initializationOptions all
// come from src/serverConfig.ts), speaks LSP to it with the protocol library
// that vscode-languageclient is built on, and checks the diagnostics.
//
// The interpreter is TORCH2MS_PYTHON, else the repository's .venv, else
// python3/python on PATH; it must have torch2ms with its LSP extra installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
    ConfigurationParams,
    ConfigurationRequest,
    Diagnostic,
    DidOpenTextDocumentNotification,
    ExecuteCommandRequest,
    ExitNotification,
    InitializedNotification,
    InitializeParams,
    InitializeRequest,
    MessageConnection,
    PublishDiagnosticsNotification,
    PublishDiagnosticsParams,
    ShutdownRequest,
    StreamMessageReader,
    StreamMessageWriter,
    createMessageConnection,
} from 'vscode-languageserver-protocol/node';
import {
    CONFIG_SECTION,
    SCAN_WORKSPACE_COMMAND,
    buildServerLaunch,
    formatCommandLine,
    readSettings,
    resolveInterpreter,
    toInitializationOptions,
} from '../src/serverConfig';
import { testInterpreterSetting } from './helpers';

const DIAGNOSTICS_TIMEOUT_MS = 60_000;
const OPENED_SOURCE = 'import torch\nx = torch.cat([a, b], dim=0)\n';
const SCANNED_SOURCE = 'import torch\n\ny = torch.zeros(2, 3)\nz = torch.cat([y, y], dim=0)\n';

function samePath(uri: string, file: string): boolean {
    if (!uri.startsWith('file:')) {
        return false;
    }
    try {
        return path.resolve(fileURLToPath(uri)) === path.resolve(file);
    } catch {
        return false;
    }
}

function isTorch2msDiagnostic(diagnostic: Diagnostic): boolean {
    return diagnostic.source === 'torch2ms' && /^TMS/.test(String(diagnostic.code ?? ''));
}

/** Keeps the latest diagnostics per document and lets a test wait for a condition on them. */
class DiagnosticsLog {
    private readonly latest = new Map<string, Diagnostic[]>();
    private readonly waiters: (() => void)[] = [];

    record(params: PublishDiagnosticsParams): void {
        this.latest.set(params.uri, params.diagnostics);
        for (const wake of this.waiters.splice(0)) {
            wake();
        }
    }

    forFile(file: string): Diagnostic[] | undefined {
        for (const [uri, diagnostics] of this.latest) {
            if (samePath(uri, file)) {
                return diagnostics;
            }
        }
        return undefined;
    }

    describe(): string {
        return JSON.stringify(Object.fromEntries(this.latest), null, 1);
    }

    async waitFor(file: string, accept: (diagnostics: Diagnostic[]) => boolean, timeoutMs: number): Promise<Diagnostic[]> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const current = this.forFile(file);
            if (current && accept(current)) {
                return current;
            }
            const left = deadline - Date.now();
            if (left <= 0) {
                throw new Error(`No matching diagnostics for ${file} within ${timeoutMs} ms; received: ${this.describe()}`);
            }
            await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, left);
                this.waiters.push(() => {
                    clearTimeout(timer);
                    resolve();
                });
            });
        }
    }
}

interface Session {
    child: ChildProcessWithoutNullStreams;
    connection: MessageConnection;
    diagnostics: DiagnosticsLog;
    stderr: () => string;
    exited: Promise<number | null>;
}

test('the real torch2ms server, started as the extension starts it, reports TMS diagnostics', { timeout: 180_000 }, async (t) => {
    // Settings as a user would have them: defaults, plus the interpreter.
    const interpreterSetting = testInterpreterSetting();
    const settings = readSettings((key) => (key === 'interpreter' ? interpreterSetting : undefined));
    const initializationOptions = toInitializationOptions(settings);
    const interpreter = await resolveInterpreter({ setting: settings.interpreter });
    assert.ok(interpreter, 'no Python interpreter: set TORCH2MS_PYTHON');
    const launch = buildServerLaunch({ interpreter: interpreter.command, settings });

    const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'torch2ms-e2e-')));
    const openedFile = path.join(workspace, 'model.py');
    const scannedFile = path.join(workspace, 'pkg', 'layers.py');
    fs.writeFileSync(openedFile, OPENED_SOURCE);
    fs.mkdirSync(path.dirname(scannedFile));
    fs.writeFileSync(scannedFile, SCANNED_SOURCE);
    const workspaceUri = pathToFileURL(workspace).href;

    const child = spawn(launch.command, launch.args, { env: launch.env, cwd: workspace, stdio: 'pipe' });
    let stderrText = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
        stderrText = (stderrText + chunk).slice(-20_000);
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const spawnError = new Promise<never>((_, reject) => child.on('error', reject));
    spawnError.catch(() => undefined);

    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const diagnostics = new DiagnosticsLog();
    const session: Session = { child, connection, diagnostics, stderr: () => stderrText, exited };
    const context = () =>
        `\ncommand: ${formatCommandLine(launch.command, launch.args)}\nserver stderr (tail):\n${session.stderr().slice(-4000)}`;

    connection.onNotification(PublishDiagnosticsNotification.type, (params) => diagnostics.record(params));
    connection.onRequest(ConfigurationRequest.type, (params: ConfigurationParams) =>
        params.items.map((item) => (item.section === CONFIG_SECTION ? initializationOptions : null)),
    );
    // Progress creation, capability registration, workspace folders, ...
    connection.onRequest((method: string) => {
        if (method === 'workspace/workspaceFolders') {
            return [{ uri: workspaceUri, name: path.basename(workspace) }];
        }
        return null;
    });
    connection.listen();

    t.after(async () => {
        connection.dispose();
        if (child.exitCode === null && child.signalCode === null) {
            child.kill();
        }
        fs.rmSync(workspace, { recursive: true, force: true });
    });

    const initializeParams: InitializeParams = {
        processId: process.pid,
        clientInfo: { name: 'torch2ms-e2e-test' },
        rootUri: workspaceUri,
        workspaceFolders: [{ uri: workspaceUri, name: path.basename(workspace) }],
        initializationOptions,
        capabilities: {
            textDocument: {
                synchronization: { dynamicRegistration: true, didSave: true },
                publishDiagnostics: { relatedInformation: true, codeDescriptionSupport: true, dataSupport: true },
            },
            workspace: {
                configuration: true,
                workspaceFolders: true,
                didChangeConfiguration: { dynamicRegistration: true },
                executeCommand: { dynamicRegistration: true },
            },
            window: { workDoneProgress: true },
        },
    };
    const exitedEarly = exited.then((code) => {
        throw new Error(`server exited with code ${code} before answering initialize${context()}`);
    });
    exitedEarly.catch(() => undefined);
    const initialized = await Promise.race([
        connection.sendRequest(InitializeRequest.type, initializeParams),
        spawnError,
        exitedEarly,
    ]);
    assert.ok(initialized.capabilities, `initialize returned no capabilities${context()}`);
    await connection.sendNotification(InitializedNotification.type, {});

    await t.test('didOpen: a TMS diagnostic on the torch.cat line', async () => {
        await connection.sendNotification(DidOpenTextDocumentNotification.type, {
            textDocument: { uri: pathToFileURL(openedFile).href, languageId: 'python', version: 1, text: OPENED_SOURCE },
        });
        let found: Diagnostic[];
        try {
            found = await diagnostics.waitFor(
                openedFile,
                (list) => list.some((d) => isTorch2msDiagnostic(d) && d.range.start.line === 1),
                DIAGNOSTICS_TIMEOUT_MS,
            );
        } catch (error) {
            assert.fail(`${(error as Error).message}${context()}`);
        }
        const onLine = found.filter((d) => isTorch2msDiagnostic(d) && d.range.start.line === 1);
        assert.ok(onLine.length >= 1);
        for (const diagnostic of onLine) {
            assert.ok(diagnostic.message.length > 0, 'diagnostics carry a message');
        }
        assert.ok(
            found.every((d) => d.range.start.line <= 2),
            `diagnostics beyond the end of the document: ${JSON.stringify(found)}`,
        );
    });

    await t.test('torch2ms.scanWorkspace publishes diagnostics for a file that is not open', async () => {
        const advertised = initialized.capabilities.executeCommandProvider?.commands ?? [];
        assert.ok(
            advertised.includes(SCAN_WORKSPACE_COMMAND),
            `server does not advertise ${SCAN_WORKSPACE_COMMAND}: ${JSON.stringify(advertised)}`,
        );
        await connection.sendRequest(ExecuteCommandRequest.type, { command: SCAN_WORKSPACE_COMMAND, arguments: [] });
        try {
            await diagnostics.waitFor(scannedFile, (list) => list.some(isTorch2msDiagnostic), DIAGNOSTICS_TIMEOUT_MS);
        } catch (error) {
            assert.fail(`${(error as Error).message}${context()}`);
        }
    });

    await t.test('shutdown and exit end the server cleanly', async () => {
        await connection.sendRequest(ShutdownRequest.type);
        await connection.sendNotification(ExitNotification.type);
        const code = await Promise.race([
            session.exited,
            new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000)),
        ]);
        assert.equal(code, 0, `server exit code after shutdown/exit${context()}`);
    });
});
