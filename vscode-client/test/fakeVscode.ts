// A small in-memory stand-in for the 'vscode' module: just enough of the API
// for the extension and vscode-languageclient to start a server, sync
// documents and show diagnostics, with a `harness` to drive and observe it.
// A real VS Code cannot be downloaded where these tests run.
import { fileURLToPath, pathToFileURL } from 'node:url';

type Listener<T> = (event: T) => unknown;

export class Disposable {
    private callback: (() => void) | undefined;
    constructor(callback?: () => void) {
        this.callback = callback;
    }
    static from(...disposables: { dispose(): unknown }[]): Disposable {
        return new Disposable(() => disposables.forEach((d) => d?.dispose()));
    }
    dispose(): void {
        const callback = this.callback;
        this.callback = undefined;
        callback?.();
    }
}

export class EventEmitter<T> {
    private readonly listeners = new Set<Listener<T>>();
    readonly event = (listener: Listener<T>, thisArg?: unknown, disposables?: Disposable[]): Disposable => {
        const bound: Listener<T> = (event) => listener.call(thisArg, event);
        this.listeners.add(bound);
        const disposable = new Disposable(() => this.listeners.delete(bound));
        disposables?.push(disposable);
        return disposable;
    };
    fire(event: T): void {
        for (const listener of [...this.listeners]) {
            listener(event);
        }
    }
    get size(): number {
        return this.listeners.size;
    }
    dispose(): void {
        this.listeners.clear();
    }
}

export class CancellationError extends Error {}

export class CancellationTokenSource {
    private readonly emitter = new EventEmitter<void>();
    readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
    cancel(): void {
        this.token.isCancellationRequested = true;
        this.emitter.fire();
    }
    dispose(): void {
        this.emitter.dispose();
    }
}

export class Uri {
    private constructor(
        readonly scheme: string,
        readonly authority: string,
        readonly path: string,
        readonly query: string,
        readonly fragment: string,
    ) {}
    static parse(value: string): Uri {
        const url = new URL(value);
        return new Uri(url.protocol.replace(/:$/, ''), url.host, decodeURIComponent(url.pathname), url.search.replace(/^\?/, ''), url.hash.replace(/^#/, ''));
    }
    static file(fsPath: string): Uri {
        return new Uri('file', '', pathToFileURL(fsPath).pathname.split('/').map(decodeURIComponent).join('/'), '', '');
    }
    get fsPath(): string {
        return this.scheme === 'file' ? fileURLToPath(this.toString()) : this.path;
    }
    with(change: { scheme?: string; path?: string }): Uri {
        return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, this.query, this.fragment);
    }
    toString(): string {
        if (this.scheme === 'file') {
            return pathToFileURL(this.path).href;
        }
        return `${this.scheme}:${this.authority ? `//${this.authority}` : ''}${this.path}`;
    }
    toJSON(): unknown {
        return { scheme: this.scheme, path: this.path, external: this.toString() };
    }
}

export class Position {
    constructor(
        readonly line: number,
        readonly character: number,
    ) {}
}

export class Range {
    readonly start: Position;
    readonly end: Position;
    constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
        if (typeof a === 'number' && typeof b === 'number') {
            this.start = new Position(a, b);
            this.end = new Position(c ?? a, d ?? b);
        } else {
            this.start = a as Position;
            this.end = b as Position;
        }
    }
}

export enum DiagnosticSeverity {
    Error = 0,
    Warning = 1,
    Information = 2,
    Hint = 3,
}

export enum DiagnosticTag {
    Unnecessary = 1,
    Deprecated = 2,
}

export class Diagnostic {
    code: unknown;
    source: string | undefined;
    tags: DiagnosticTag[] | undefined;
    relatedInformation: unknown;
    constructor(
        readonly range: Range,
        readonly message: string,
        readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
    ) {}
}

/** Base classes that vscode-languageclient extends; only constructed, never used here. */
class Constructed {
    readonly args: unknown[];
    constructor(...args: unknown[]) {
        this.args = args;
    }
}
export class CallHierarchyItem extends Constructed {}
export class TypeHierarchyItem extends Constructed {}
export class CodeLens extends Constructed {}
export class CodeAction extends Constructed {}
export class CompletionItem extends Constructed {}
export class DocumentLink extends Constructed {}
export class InlayHint extends Constructed {}
export class SymbolInformation extends Constructed {}

export class CodeActionKind {
    static readonly Empty = new CodeActionKind('');
    static readonly QuickFix = new CodeActionKind('quickfix');
    static readonly Refactor = new CodeActionKind('refactor');
    static readonly RefactorExtract = new CodeActionKind('refactor.extract');
    static readonly RefactorInline = new CodeActionKind('refactor.inline');
    static readonly RefactorRewrite = new CodeActionKind('refactor.rewrite');
    static readonly Source = new CodeActionKind('source');
    static readonly SourceOrganizeImports = new CodeActionKind('source.organizeImports');
    static readonly SourceFixAll = new CodeActionKind('source.fixAll');
    constructor(readonly value: string) {}
    append(part: string): CodeActionKind {
        return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
    }
}

export class ThemeColor {
    constructor(readonly id: string) {}
}

export class RelativePattern {
    constructor(
        readonly base: unknown,
        readonly pattern: string,
    ) {}
}

export enum StatusBarAlignment {
    Left = 1,
    Right = 2,
}

export enum ProgressLocation {
    SourceControl = 1,
    Window = 10,
    Notification = 15,
}

export enum TextDocumentSaveReason {
    Manual = 1,
    AfterDelay = 2,
    FocusOut = 3,
}

export enum FileType {
    Unknown = 0,
    File = 1,
    Directory = 2,
    SymbolicLink = 64,
}

export enum LogLevel {
    Off = 0,
    Trace = 1,
    Debug = 2,
    Info = 3,
    Warning = 4,
    Error = 5,
}

export const version = '1.82.0';

export interface FakeTextDocument {
    uri: Uri;
    fileName: string;
    languageId: string;
    version: number;
    isClosed: boolean;
    isDirty: boolean;
    isUntitled: boolean;
    lineCount: number;
    eol: number;
    getText(): string;
}

interface StatusBarItem {
    id: string;
    text: string;
    tooltip: string | undefined;
    name: string | undefined;
    command: string | undefined;
    backgroundColor: ThemeColor | undefined;
    visible: boolean;
    show(): void;
    hide(): void;
    dispose(): void;
}

interface DocumentFilter {
    scheme?: string;
    language?: string;
    pattern?: string;
}

/** State the tests read and events they fire. */
export const harness = {
    configuration: {} as Record<string, unknown>,
    messages: [] as { kind: 'error' | 'warning' | 'info'; text: string }[],
    logLines: [] as string[],
    commands: new Map<string, (...args: unknown[]) => unknown>(),
    statusBarItems: [] as StatusBarItem[],
    diagnostics: new Map<string, Map<string, Diagnostic[]>>(),
    textDocuments: [] as FakeTextDocument[],
    workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
    onDidChangeConfiguration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
    onDidOpenTextDocument: new EventEmitter<FakeTextDocument>(),
    onDidCloseTextDocument: new EventEmitter<FakeTextDocument>(),

    /** Sets `torch2ms.<key>` values and fires the change event VS Code would. */
    changeConfiguration(values: Record<string, unknown>): void {
        Object.assign(this.configuration, values);
        const changed = Object.keys(values).map((key) => `torch2ms.${key}`);
        this.onDidChangeConfiguration.fire({
            affectsConfiguration: (section: string) =>
                changed.some((key) => key === section || key.startsWith(`${section}.`) || section.startsWith(`${key}.`)),
        });
    },

    openDocument(fsPath: string, languageId: string, text: string): FakeTextDocument {
        const document: FakeTextDocument = {
            uri: Uri.file(fsPath),
            fileName: fsPath,
            languageId,
            version: 1,
            isClosed: false,
            isDirty: false,
            isUntitled: false,
            lineCount: text.split('\n').length,
            eol: 1,
            getText: () => text,
        };
        this.textDocuments.push(document);
        this.onDidOpenTextDocument.fire(document);
        return document;
    },

    diagnosticsFor(fsPath: string): Diagnostic[] {
        const key = Uri.file(fsPath).toString();
        for (const collection of this.diagnostics.values()) {
            const found = collection.get(key);
            if (found) {
                return found;
            }
        }
        return [];
    },
};

function matches(selector: unknown, document: FakeTextDocument): boolean {
    const filters = (Array.isArray(selector) ? selector : [selector]) as (DocumentFilter | string)[];
    return filters.some((filter) => {
        if (typeof filter === 'string') {
            return filter === document.languageId;
        }
        return (
            (filter.language === undefined || filter.language === document.languageId) &&
            (filter.scheme === undefined || filter.scheme === document.uri.scheme) &&
            filter.pattern === undefined
        );
    });
}

function logChannel(name: string) {
    const write = (level: string) => (message: unknown) => harness.logLines.push(`[${level}] ${String(message)}`);
    return {
        name,
        logLevel: LogLevel.Info,
        onDidChangeLogLevel: new EventEmitter<LogLevel>().event,
        trace: write('trace'),
        debug: write('debug'),
        info: write('info'),
        warn: write('warn'),
        error: write('error'),
        append: write('append'),
        appendLine: write('line'),
        replace: write('replace'),
        clear: () => undefined,
        show: () => undefined,
        hide: () => undefined,
        dispose: () => undefined,
    };
}

const noopEvent = new EventEmitter<unknown>().event;

export const window = {
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups: { all: [], onDidChangeTabs: noopEvent, onDidChangeTabGroups: noopEvent },
    onDidChangeActiveTextEditor: noopEvent,
    onDidChangeVisibleTextEditors: noopEvent,
    onDidChangeVisibleNotebookEditors: noopEvent,
    createOutputChannel: (name: string) => logChannel(name),
    createStatusBarItem: (id: string, _alignment?: StatusBarAlignment, _priority?: number): StatusBarItem => {
        const item: StatusBarItem = {
            id,
            text: '',
            tooltip: undefined,
            name: undefined,
            command: undefined,
            backgroundColor: undefined,
            visible: false,
            show() {
                this.visible = true;
            },
            hide() {
                this.visible = false;
            },
            dispose() {
                this.visible = false;
            },
        };
        harness.statusBarItems.push(item);
        return item;
    },
    showErrorMessage: async (text: string) => {
        harness.messages.push({ kind: 'error', text });
        return undefined;
    },
    showWarningMessage: async (text: string) => {
        harness.messages.push({ kind: 'warning', text });
        return undefined;
    },
    showInformationMessage: async (text: string) => {
        harness.messages.push({ kind: 'info', text });
        return undefined;
    },
    setStatusBarMessage: (text: string) => {
        harness.messages.push({ kind: 'info', text });
        return new Disposable();
    },
    withProgress: async (_options: unknown, task: (progress: unknown, token: unknown) => Promise<unknown>) =>
        task({ report: () => undefined }, new CancellationTokenSource().token),
};

export const workspace = {
    get workspaceFolders() {
        return harness.workspaceFolders;
    },
    get textDocuments() {
        return harness.textDocuments;
    },
    notebookDocuments: [],
    isTrusted: true,
    getConfiguration: (section?: string) => ({
        get: (key: string, fallback?: unknown) => {
            const full = section ? `${section}.${key}` : key;
            const value = full.startsWith('torch2ms.') ? harness.configuration[full.slice('torch2ms.'.length)] : undefined;
            return value === undefined ? fallback : value;
        },
        has: () => false,
        inspect: () => undefined,
        update: async () => undefined,
    }),
    onDidChangeConfiguration: harness.onDidChangeConfiguration.event,
    onDidOpenTextDocument: harness.onDidOpenTextDocument.event,
    onDidCloseTextDocument: harness.onDidCloseTextDocument.event,
    onDidChangeTextDocument: noopEvent,
    onDidSaveTextDocument: noopEvent,
    onWillSaveTextDocument: noopEvent,
    onDidChangeWorkspaceFolders: noopEvent,
    onDidGrantWorkspaceTrust: noopEvent,
    onDidOpenNotebookDocument: noopEvent,
    onDidCloseNotebookDocument: noopEvent,
    onDidChangeNotebookDocument: noopEvent,
    onDidSaveNotebookDocument: noopEvent,
    onDidCreateFiles: noopEvent,
    onDidRenameFiles: noopEvent,
    onDidDeleteFiles: noopEvent,
    onWillCreateFiles: noopEvent,
    onWillRenameFiles: noopEvent,
    onWillDeleteFiles: noopEvent,
    createFileSystemWatcher: () => ({
        onDidCreate: noopEvent,
        onDidChange: noopEvent,
        onDidDelete: noopEvent,
        dispose: () => undefined,
    }),
    applyEdit: async () => false,
};

export const languages = {
    match: (selector: unknown, document: FakeTextDocument) => (matches(selector, document) ? 10 : 0),
    createDiagnosticCollection: (name = 'default') => {
        const store = new Map<string, Diagnostic[]>();
        harness.diagnostics.set(name, store);
        return {
            name,
            set: (uri: Uri | [Uri, Diagnostic[]][], diagnostics?: Diagnostic[]) => {
                if (Array.isArray(uri)) {
                    for (const [entryUri, entryDiagnostics] of uri) {
                        store.set(entryUri.toString(), entryDiagnostics);
                    }
                } else {
                    store.set(uri.toString(), diagnostics ?? []);
                }
            },
            get: (uri: Uri) => store.get(uri.toString()),
            delete: (uri: Uri) => store.delete(uri.toString()),
            has: (uri: Uri) => store.has(uri.toString()),
            clear: () => store.clear(),
            forEach: (callback: (uri: Uri, diagnostics: Diagnostic[]) => void) =>
                store.forEach((value, key) => callback(Uri.parse(key), value)),
            dispose: () => {
                store.clear();
                harness.diagnostics.delete(name);
            },
        };
    },
};

export const commands = {
    registerCommand: (id: string, callback: (...args: unknown[]) => unknown) => {
        // As in VS Code: a second registration of the same id is an error.
        if (harness.commands.has(id)) {
            throw new Error(`command '${id}' already exists`);
        }
        harness.commands.set(id, callback);
        return new Disposable(() => harness.commands.delete(id));
    },
    executeCommand: async (id: string, ...args: unknown[]) => {
        const command = harness.commands.get(id);
        if (!command) {
            throw new Error(`command '${id}' not found`);
        }
        return command(...args);
    },
};

export const extensions = {
    getExtension: () => undefined,
    onDidChange: noopEvent,
    all: [],
};

export const env = {
    language: 'en',
    appName: 'Fake VS Code',
    machineId: 'fake',
    sessionId: 'fake',
    uiKind: 1,
    openExternal: async () => true,
};
