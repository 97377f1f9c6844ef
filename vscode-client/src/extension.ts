/**
 * torch2ms VS Code extension: starts the torch2ms language server
 * (`python -m torch2ms lsp`) for Python files and keeps it in step with the
 * settings and the selected interpreter.
 */
import * as fs from 'node:fs';
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
    State,
    StaticFeature,
    DynamicFeature,
} from 'vscode-languageclient/node';
import {
    BUNDLED_LIBS_DIR,
    CONFIG_SECTION,
    SCAN_WORKSPACE_COMMAND,
    VERIFY_CALL_COMMAND,
    Torch2msSettings,
    bundleCompatibilityWarning,
    buildServerLaunch,
    formatCommandLine,
    readBundleInfo,
    readSettings,
    resolveInterpreter,
    restartRequired,
    toInitializationOptions,
} from './serverConfig';
import { PythonExtensionBridge } from './pythonExtension';

const CLIENT_ID = 'torch2ms';
const CLIENT_NAME = 'torch2ms';

type ServerState = 'starting' | 'running' | 'stopped' | 'error';

/**
 * The server registers `torch2ms.scanWorkspace` and `torch2ms.verifyCall` as
 * executeCommand providers. The stock client would register VS Code commands
 * of the same names, which clash with the commands this extension registers
 * (and keeps while the server is down), so the executeCommand feature is left
 * out; the extension's commands send the request themselves.
 */
class Torch2msLanguageClient extends LanguageClient {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches the base signature
    public override registerFeature(feature: StaticFeature | DynamicFeature<any>): void {
        const registration = (feature as Partial<DynamicFeature<unknown>>).registrationType;
        if (registration?.method === ExecuteCommandRequest.type.method) {
            return;
        }
        super.registerFeature(feature);
    }
}

class Torch2msExtension implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private readonly output: vscode.LogOutputChannel;
    private readonly status: vscode.StatusBarItem;
    private readonly python: PythonExtensionBridge;
    private readonly disposables: vscode.Disposable[] = [];
    /** Start and stop run one after another, never interleaved. */
    private queue: Promise<void> = Promise.resolve();
    private disposed = false;

    constructor(private readonly context: vscode.ExtensionContext) {
        this.output = vscode.window.createOutputChannel('torch2ms', { log: true });
        this.status = vscode.window.createStatusBarItem('torch2ms.status', vscode.StatusBarAlignment.Left, 0);
        this.status.name = 'torch2ms';
        this.status.command = 'torch2ms.showOutput';
        this.python = new PythonExtensionBridge(this.output);
        this.disposables.push(this.output, this.status, this.python);

        this.disposables.push(
            vscode.commands.registerCommand('torch2ms.restart', () => this.restart('restart command')),
            vscode.commands.registerCommand('torch2ms.scanWorkspace', () => this.scanWorkspace()),
            vscode.commands.registerCommand(VERIFY_CALL_COMMAND, (uri: unknown, line: unknown) => this.verifyCall(uri, line)),
            vscode.commands.registerCommand('torch2ms.showOutput', () => this.output.show()),
            vscode.workspace.onDidChangeConfiguration((event) => {
                if (restartRequired((section) => event.affectsConfiguration(section))) {
                    void this.restart('settings changed');
                }
            }),
            vscode.workspace.onDidGrantWorkspaceTrust(() => this.restart('workspace trusted')),
            this.python.onDidChangeInterpreter(() => {
                if (this.settings().interpreter.length === 0) {
                    void this.restart('Python extension interpreter changed');
                }
            }),
        );
        this.setState('stopped');
        this.status.show();
    }

    private scope(): vscode.Uri | undefined {
        return vscode.workspace.workspaceFolders?.[0]?.uri;
    }

    private settings(): Torch2msSettings {
        const config = vscode.workspace.getConfiguration(CONFIG_SECTION, this.scope());
        return readSettings((key) => config.get(key));
    }

    private setState(state: ServerState, detail?: string): void {
        const icons: Record<ServerState, string> = {
            starting: '$(sync~spin)',
            running: '$(check)',
            stopped: '$(circle-slash)',
            error: '$(error)',
        };
        this.status.text = `${icons[state]} torch2ms`;
        this.status.tooltip = `torch2ms server: ${state}${detail ? ` — ${detail}` : ''}\nClick to show the output.`;
        this.status.backgroundColor =
            state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    }

    private enqueue(task: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(task).catch((error: unknown) => {
            this.output.error(`Unexpected error: ${errorText(error)}`);
            this.setState('error', errorText(error));
        });
        return this.queue;
    }

    start(): Promise<void> {
        return this.enqueue(() => this.doStart());
    }

    restart(reason: string): Promise<void> {
        return this.enqueue(async () => {
            this.output.info(`Restarting the server (${reason}).`);
            await this.doStop();
            await this.doStart();
        });
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.doStop());
    }

    private async doStart(): Promise<void> {
        if (this.disposed) {
            return;
        }
        this.setState('starting');
        const settings = this.settings();
        const folder = vscode.workspace.workspaceFolders?.[0];
        const expand = { workspaceFolder: folder?.uri.fsPath };
        const interpreter = await resolveInterpreter({
            setting: settings.interpreter,
            fromPythonExtension: this.python.installed ? () => this.python.activeInterpreter(this.scope()) : undefined,
            expand,
        });
        if (!interpreter) {
            const message =
                'torch2ms: no Python interpreter found. Set "torch2ms.interpreter", select one in the Python extension, or put python3 on PATH.';
            this.output.error(message);
            this.setState('error', 'no Python interpreter');
            void showErrorWithActions(message, this.output);
            return;
        }
        this.output.info(`Interpreter (${interpreter.source}): ${formatCommandLine(interpreter.command[0], interpreter.command.slice(1))}`);

        let bundledLibs: string | undefined;
        if (settings.importStrategy === 'useBundled') {
            bundledLibs = this.context.asAbsolutePath(BUNDLED_LIBS_DIR);
            if (!fs.existsSync(bundledLibs)) {
                this.output.warn(
                    `importStrategy is useBundled, but this build of the extension has no ${BUNDLED_LIBS_DIR}; importing torch2ms from the environment instead.`,
                );
                bundledLibs = undefined;
            } else {
                const version = await pythonVersion(interpreter.command);
                const warning = bundleCompatibilityWarning(readBundleInfo(bundledLibs), version);
                if (warning) {
                    this.output.warn(warning);
                    void vscode.window.showWarningMessage(`torch2ms: ${warning}`);
                }
            }
        }

        const launch = buildServerLaunch({ interpreter: interpreter.command, settings, bundledLibs, expand });
        this.output.info(`Starting: ${formatCommandLine(launch.command, launch.args)}`);
        if (bundledLibs) {
            this.output.info(`PYTHONPATH=${launch.env.PYTHONPATH ?? ''}`);
        }

        const serverOptions: ServerOptions = {
            command: launch.command,
            args: launch.args,
            options: { env: launch.env, cwd: folder?.uri.fsPath },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [
                { scheme: 'file', language: 'python' },
                { scheme: 'untitled', language: 'python' },
            ],
            outputChannel: this.output,
            traceOutputChannel: this.output,
            initializationOptions: toInitializationOptions(settings),
            synchronize: { configurationSection: CONFIG_SECTION },
            middleware: {
                workspace: {
                    // Answer the server's workspace/configuration requests for the
                    // torch2ms section with the same shape as initializationOptions.
                    configuration: async (params, token, next) => {
                        const answers = await next(params, token);
                        if (!Array.isArray(answers)) {
                            return answers;
                        }
                        return params.items.map((item, index) =>
                            item.section === CONFIG_SECTION ? toInitializationOptions(this.settings()) : answers[index],
                        );
                    },
                    // Push the normalised options rather than the raw settings object.
                    didChangeConfiguration: async () => {
                        const client = this.client;
                        if (client) {
                            await client.sendNotification(DidChangeConfigurationNotification.type, {
                                settings: { [CONFIG_SECTION]: toInitializationOptions(this.settings()) },
                            });
                        }
                    },
                },
            },
        };

        const client = new Torch2msLanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
        this.client = client;
        client.onDidChangeState((event) => {
            if (this.client !== client) {
                return;
            }
            if (event.newState === State.Running) {
                this.setState('running');
            } else if (event.newState === State.Starting) {
                this.setState('starting');
            } else {
                this.setState('stopped');
            }
        });
        try {
            await client.start();
            this.setState('running');
            this.output.info('Server running.');
        } catch (error) {
            this.client = undefined;
            const text = errorText(error);
            this.output.error(`The server did not start: ${text}`);
            this.output.error(
                'Check that the interpreter has torch2ms with its LSP extra installed (pip install "torch2ms[lsp]"), or set torch2ms.importStrategy to useBundled.',
            );
            this.setState('error', text);
            void showErrorWithActions(`torch2ms server did not start: ${text}`, this.output);
            try {
                await client.dispose();
            } catch {
                // Already down.
            }
        }
    }

    private async doStop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.dispose(2000);
            } catch (error) {
                this.output.warn(`Stopping the server: ${errorText(error)}`);
            }
        }
        this.setState('stopped');
    }

    private async scanWorkspace(): Promise<void> {
        const client = this.client;
        if (!client || !client.isRunning()) {
            const choice = await vscode.window.showWarningMessage('torch2ms: the server is not running.', 'Restart Server');
            if (choice === 'Restart Server') {
                await this.restart('scan requested');
            }
            return;
        }
        try {
            await client.sendRequest(ExecuteCommandRequest.type, { command: SCAN_WORKSPACE_COMMAND, arguments: [] });
            vscode.window.setStatusBarMessage('torch2ms: workspace scan finished', 5000);
        } catch (error) {
            this.output.error(`Workspace scan failed: ${errorText(error)}`);
            void showErrorWithActions(`torch2ms: workspace scan failed: ${errorText(error)}`, this.output);
        }
    }

    /** The server's "Verify ..." code action: runs the call in torch and MindSpore; the server shows the outcome. */
    private async verifyCall(uri: unknown, line: unknown): Promise<void> {
        const client = this.client;
        if (!client || !client.isRunning()) {
            void vscode.window.showWarningMessage('torch2ms: the server is not running.');
            return;
        }
        try {
            await vscode.window.withProgress(
                { location: vscode.ProgressLocation.Notification, title: 'torch2ms: running the call in torch and MindSpore' },
                () => client.sendRequest(ExecuteCommandRequest.type, { command: VERIFY_CALL_COMMAND, arguments: [uri, line] }),
            );
        } catch (error) {
            this.output.error(`Verify failed: ${errorText(error)}`);
            void showErrorWithActions(`torch2ms: verify failed: ${errorText(error)}`, this.output);
        }
    }

    async dispose(): Promise<void> {
        this.disposed = true;
        await this.stop();
        for (const disposable of this.disposables.splice(0)) {
            disposable.dispose();
        }
    }
}

function errorText(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

async function showErrorWithActions(message: string, output: vscode.LogOutputChannel): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Show Output', 'Open Settings');
    if (choice === 'Show Output') {
        output.show();
    } else if (choice === 'Open Settings') {
        await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:torch2ms.torch2ms');
    }
}

/** "major.minor" of the interpreter, or undefined when it cannot be run. */
function pythonVersion(command: readonly string[]): Promise<string | undefined> {
    return new Promise((resolve) => {
        execFile(
            command[0],
            [...command.slice(1), '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
            { timeout: 15_000 },
            (error, stdout) => resolve(error ? undefined : stdout.trim()),
        );
    });
}

let extension: Torch2msExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    extension = new Torch2msExtension(context);
    await extension.start();
}

export async function deactivate(): Promise<void> {
    const current = extension;
    extension = undefined;
    await current?.dispose();
}
