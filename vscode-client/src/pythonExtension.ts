/**
 * Optional use of the Python extension (ms-python.python): which interpreter
 * it has selected, and when that selection changes. Only the few members used
 * here are typed, so the extension needs no package of the Python extension.
 */
import * as vscode from 'vscode';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface ResolvedEnvironment {
    readonly executable?: { readonly uri?: vscode.Uri };
}

interface EnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

/** The older, deprecated part of the API, still offered by current releases. */
interface SettingsApi {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    readonly onDidChangeExecutionDetails: vscode.Event<vscode.Uri | undefined>;
}

interface PythonExtensionApi {
    readonly environments?: EnvironmentsApi;
    readonly settings?: SettingsApi;
}

export class PythonExtensionBridge implements vscode.Disposable {
    private readonly changeEmitter = new vscode.EventEmitter<void>();
    private readonly disposables: vscode.Disposable[] = [this.changeEmitter];
    private apiPromise: Promise<PythonExtensionApi | undefined> | undefined;
    private subscribed = false;

    /** Fires when the Python extension's active interpreter changes. */
    readonly onDidChangeInterpreter = this.changeEmitter.event;

    constructor(private readonly log: vscode.LogOutputChannel) {
        // The Python extension can be installed or enabled after torch2ms started.
        this.disposables.push(
            vscode.extensions.onDidChange(() => {
                if (!this.subscribed && vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
                    this.apiPromise = undefined;
                    void this.api().then((api) => {
                        if (api) {
                            this.changeEmitter.fire();
                        }
                    });
                }
            }),
        );
    }

    get installed(): boolean {
        return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
    }

    private api(): Promise<PythonExtensionApi | undefined> {
        if (!this.apiPromise) {
            this.apiPromise = this.loadApi();
        }
        return this.apiPromise;
    }

    private async loadApi(): Promise<PythonExtensionApi | undefined> {
        const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
        if (!extension) {
            return undefined;
        }
        try {
            const api = extension.isActive ? extension.exports : await extension.activate();
            this.subscribe(api);
            return api;
        } catch (error) {
            this.log.warn(`Could not activate the Python extension: ${String(error)}`);
            return undefined;
        }
    }

    private subscribe(api: PythonExtensionApi | undefined): void {
        if (!api || this.subscribed) {
            return;
        }
        const fire = () => this.changeEmitter.fire();
        if (api.environments?.onDidChangeActiveEnvironmentPath) {
            this.disposables.push(api.environments.onDidChangeActiveEnvironmentPath(fire));
            this.subscribed = true;
        } else if (api.settings?.onDidChangeExecutionDetails) {
            this.disposables.push(api.settings.onDidChangeExecutionDetails(fire));
            this.subscribed = true;
        }
    }

    /** Interpreter command selected in the Python extension, or undefined. */
    async activeInterpreter(resource: vscode.Uri | undefined): Promise<string[] | undefined> {
        const api = await this.api();
        if (!api) {
            return undefined;
        }
        if (api.environments) {
            try {
                const active = api.environments.getActiveEnvironmentPath(resource);
                const resolved = await api.environments.resolveEnvironment(active);
                const executable = resolved?.executable?.uri?.fsPath;
                if (executable) {
                    return [executable];
                }
            } catch (error) {
                this.log.warn(`The Python extension could not resolve its active environment: ${String(error)}`);
            }
        }
        if (api.settings) {
            try {
                const command = api.settings.getExecutionDetails(resource).execCommand;
                if (command && command.length > 0) {
                    return command;
                }
            } catch (error) {
                this.log.warn(`The Python extension gave no execution details: ${String(error)}`);
            }
        }
        return undefined;
    }

    dispose(): void {
        for (const disposable of this.disposables.splice(0)) {
            disposable.dispose();
        }
    }
}
