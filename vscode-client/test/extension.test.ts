// Loads the packaged bundle (dist/extension.js) against the in-memory 'vscode'
// stand-in of fakeVscode.ts and drives it: activation, the server's command
// line and initializationOptions, document sync and diagnostics, the
// commands, configuration changes, restarts, bundled mode and failures.
// The server is test/fakeServer.ts, given as the interpreter setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as fakeVscode from './fakeVscode';
import { clientRoot } from './helpers';

const { harness } = fakeVscode;

interface LogEntry {
    pid: number;
    event: string;
    data: unknown;
}

// Make require('vscode') inside the bundle return the stand-in.
const moduleInternals = Module as unknown as {
    _resolveFilename: (request: string, ...rest: unknown[]) => string;
};
const originalResolve = moduleInternals._resolveFilename;
moduleInternals._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? 'vscode' : originalResolve.call(this, request, ...rest);
};
// Members the stand-in lacks are noted, to explain a failure.
const missingMembers = new Set<string>();
const vscodeExports = new Proxy(fakeVscode, {
    get(target, property, receiver) {
        if (typeof property === 'string' && !(property in target) && property !== 'then' && property !== '__esModule') {
            missingMembers.add(property);
        }
        return Reflect.get(target, property, receiver);
    },
});
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscodeExports } as unknown as NodeJS.Module;

function readLog(file: string): LogEntry[] {
    if (!fs.existsSync(file)) {
        return [];
    }
    return fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as LogEntry);
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = probe();
        if (value !== undefined && value !== false) {
            return value;
        }
        if (Date.now() > deadline) {
            throw new Error(
                `timed out waiting for ${what}; vscode members the stand-in lacks: ${[...missingMembers].join(', ') || 'none'}; ` +
                    `extension log:\n${harness.logLines.slice(-40).join('\n')}`,
            );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

function statusText(): string {
    const item = harness.statusBarItems.find((candidate) => candidate.id === 'torch2ms.status');
    assert.ok(item, 'the extension created its status bar item');
    return item.text;
}

test('the extension bundle drives the server as specified', { timeout: 120_000 }, async (t) => {
    const bundle = path.join(clientRoot(), 'dist', 'extension.js');
    assert.ok(fs.existsSync(bundle), 'run `npm run build` first');
    const fakeServer = path.join(__dirname, 'fakeServer.js');

    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'torch2ms-ext-')));
    const workspace = path.join(scratch, 'workspace');
    const extensionDir = path.join(scratch, 'extension');
    fs.mkdirSync(workspace);
    fs.mkdirSync(extensionDir);
    const log = path.join(scratch, 'server-log.jsonl');
    process.env.TORCH2MS_FAKE_LOG = log;
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));

    harness.workspaceFolders = [{ uri: fakeVscode.Uri.file(workspace), name: 'workspace', index: 0 }];
    Object.assign(harness.configuration, {
        interpreter: [process.execPath, fakeServer],
        args: ['--flag'],
        select: ['TMS1'],
        ignore: ['TMS105'],
        targetVersion: '2.9',
        debounce: 50,
    });

    // The bundle is CommonJS and is loaded the way VS Code loads it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const extension = require(bundle) as { activate(context: unknown): Promise<void>; deactivate(): Promise<void> };
    const context = {
        subscriptions: [] as { dispose(): unknown }[],
        extensionPath: extensionDir,
        asAbsolutePath: (relative: string) => path.join(extensionDir, relative),
    };
    await extension.activate(context);

    const events = (name: string, pid?: number) =>
        readLog(log).filter((entry) => entry.event === name && (pid === undefined || entry.pid === pid));
    const serverPids = () => [...new Set(events('argv').map((entry) => entry.pid))];
    const firstPid = events('argv')[0]?.pid;

    await t.test('starts `<interpreter> -m torch2ms lsp <args>` with the settings as initializationOptions', () => {
        assert.ok(firstPid, `no server started; extension log:\n${harness.logLines.join('\n')}`);
        assert.deepEqual(events('argv', firstPid)[0].data, ['-m', 'torch2ms', 'lsp', '--flag']);
        const initialize = events('initialize', firstPid)[0]?.data as { initializationOptions: unknown; rootUri: string };
        assert.deepEqual(initialize.initializationOptions, {
            select: ['TMS1'],
            ignore: ['TMS105'],
            targetVersion: '2.9',
            debounce: 50,
            pullDiagnostics: false,
        });
        assert.equal(initialize.rootUri, fakeVscode.Uri.file(workspace).toString());
        // fromEnvironment passes PYTHONPATH through untouched.
        assert.deepEqual(events('env', firstPid)[0].data, {
            PYTHONPATH: process.env.PYTHONPATH ?? null,
            PYTHONUNBUFFERED: '1',
        });
        assert.match(statusText(), /\$\(check\) torch2ms/);
    });

    await t.test("registers its commands even though the server advertises torch2ms.scanWorkspace", () => {
        for (const command of ['torch2ms.restart', 'torch2ms.scanWorkspace', 'torch2ms.verifyCall', 'torch2ms.showOutput']) {
            assert.ok(harness.commands.has(command), command);
        }
    });

    await t.test('answers workspace/configuration for torch2ms with the normalised options', async () => {
        const answer = await waitFor('configuration answer', () => events('configuration', firstPid)[0]);
        assert.deepEqual(answer.data, [{ select: ['TMS1'], ignore: ['TMS105'], targetVersion: '2.9', debounce: 50, pullDiagnostics: false }]);
    });

    await t.test('syncs Python documents only, and shows their diagnostics', async () => {
        const pythonFile = path.join(workspace, 'model.py');
        const textFile = path.join(workspace, 'notes.txt');
        harness.openDocument(textFile, 'plaintext', 'torch.cat\n');
        harness.openDocument(pythonFile, 'python', 'import torch\nx = torch.cat([a, b], dim=0)\n');
        const diagnostics = await waitFor('diagnostics for model.py', () => {
            const found = harness.diagnosticsFor(pythonFile);
            return found.length > 0 ? found : undefined;
        });
        assert.equal(diagnostics[0].source, 'torch2ms');
        const code = diagnostics[0].code as string | { value: string };
        assert.equal(typeof code === 'string' ? code : code.value, 'TMS101');
        assert.equal(diagnostics[0].range.start.line, 1);
        const opened = events('didOpen', firstPid).map((entry) => (entry.data as { languageId: string }).languageId);
        assert.deepEqual(opened, ['python']);
    });

    await t.test('torch2ms.scanWorkspace sends workspace/executeCommand to the server', async () => {
        await fakeVscode.commands.executeCommand('torch2ms.scanWorkspace');
        const sent = await waitFor('executeCommand', () => events('executeCommand', firstPid)[0]);
        assert.deepEqual(sent.data, { command: 'torch2ms.scanWorkspace', arguments: [] });
        assert.ok(!harness.messages.some((message) => message.kind === 'error'), JSON.stringify(harness.messages));
    });

    await t.test("torch2ms.verifyCall (the server's code action) sends its arguments to the server", async () => {
        const uri = fakeVscode.Uri.file(path.join(workspace, 'model.py')).toString();
        await fakeVscode.commands.executeCommand('torch2ms.verifyCall', uri, 2);
        const sent = await waitFor('executeCommand verifyCall', () =>
            events('executeCommand', firstPid).find((entry) => (entry.data as { command: string }).command === 'torch2ms.verifyCall'));
        assert.deepEqual(sent.data, { command: 'torch2ms.verifyCall', arguments: [uri, 2] });
        assert.ok(!harness.messages.some((message) => message.kind === 'error'), JSON.stringify(harness.messages));
    });

    await t.test('select/ignore/targetVersion/debounce changes reach the running server without a restart', async () => {
        harness.changeConfiguration({ ignore: ['TMS105', 'TMS2'], debounce: 'x' });
        const change = await waitFor('didChangeConfiguration with the new ignore list', () =>
            events('didChangeConfiguration', firstPid).find((entry) =>
                JSON.stringify(entry.data).includes('TMS2'),
            ),
        );
        assert.deepEqual(change.data, {
            torch2ms: { select: ['TMS1'], ignore: ['TMS105', 'TMS2'], targetVersion: '2.9', debounce: 300, pullDiagnostics: false },
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.deepEqual(serverPids(), [firstPid]);
        assert.equal(events('shutdown', firstPid).length, 0);
    });

    let secondPid: number | undefined;
    await t.test('a change of torch2ms.args restarts the server with the new command line', async () => {
        harness.changeConfiguration({ args: ['--other'] });
        secondPid = await waitFor('a second server', () => serverPids().find((pid) => pid !== firstPid));
        assert.deepEqual(events('argv', secondPid)[0].data, ['-m', 'torch2ms', 'lsp', '--other']);
        assert.equal(events('shutdown', firstPid).length, 1, 'the old server was shut down');
        assert.equal(events('exit', firstPid).length, 1, 'the old server was told to exit');
        await waitFor('running state', () => /\$\(check\)/.test(statusText()));
    });

    await t.test('torch2ms.restart starts a new server process', async () => {
        await fakeVscode.commands.executeCommand('torch2ms.restart');
        const thirdPid = await waitFor('a third server', () =>
            serverPids().find((pid) => pid !== firstPid && pid !== secondPid),
        );
        assert.equal(events('exit', secondPid).length, 1);
        assert.ok(events('initialize', thirdPid).length === 1);
    });

    await t.test('useBundled puts bundled/libs on PYTHONPATH and warns about a Python version mismatch', async () => {
        const libs = path.join(extensionDir, 'bundled', 'libs');
        fs.mkdirSync(libs, { recursive: true });
        fs.writeFileSync(path.join(libs, 'torch2ms-bundle.json'), JSON.stringify({ pythonVersion: '3.11', platform: 'linux' }));
        const before = new Set(serverPids());
        harness.changeConfiguration({ importStrategy: 'useBundled' });
        const pid = await waitFor('a bundled-mode server', () => serverPids().find((candidate) => !before.has(candidate)));
        const env = events('env', pid)[0].data as { PYTHONPATH: string };
        assert.equal(env.PYTHONPATH.split(path.delimiter)[0], libs);
        // fakeServer.js answers the version query with 3.99.
        await waitFor('a version warning', () =>
            harness.messages.find((message) => message.kind === 'warning' && /3\.11.*3\.99/.test(message.text)),
        );
    });

    await t.test('a missing interpreter leaves the server in the error state with a message', async () => {
        const errorsBefore = harness.messages.filter((message) => message.kind === 'error').length;
        harness.changeConfiguration({ importStrategy: 'fromEnvironment', interpreter: [path.join(scratch, 'no-such-python')] });
        await waitFor('error state', () => /\$\(error\)/.test(statusText()));
        await waitFor('an error message', () =>
            harness.messages.filter((message) => message.kind === 'error').length > errorsBefore ? true : undefined,
        );
    });

    await t.test('deactivate shuts the server down', async () => {
        const before = new Set(serverPids());
        harness.changeConfiguration({ interpreter: [process.execPath, fakeServer] });
        const pid = await waitFor('a server again', () => serverPids().find((candidate) => !before.has(candidate)));
        await waitFor('running state', () => /\$\(check\)/.test(statusText()));
        await extension.deactivate();
        await waitFor('exit of the last server', () => events('exit', pid)[0]);
        assert.equal(events('shutdown', pid).length, 1);
        assert.ok(!harness.commands.has('torch2ms.restart'), 'commands are disposed');
    });
});
