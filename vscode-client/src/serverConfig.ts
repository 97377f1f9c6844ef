/**
 * Everything the extension decides before it starts the torch2ms language
 * server: reading and normalising the `torch2ms.*` settings, turning them into
 * the server's initializationOptions, choosing the Python interpreter and
 * building the server's command line and environment.
 *
 * This module must not import 'vscode': the Node tests load it directly, and
 * the end-to-end test starts the real server with the command line built here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Configuration section shared by VS Code settings and the server. */
export const CONFIG_SECTION = 'torch2ms';

/** Commands the server registers through workspace/executeCommand. */
export const SCAN_WORKSPACE_COMMAND = 'torch2ms.scanWorkspace';
/** Arguments: document uri and 1-based line; the server's "Verify ..." code actions carry it. */
export const VERIFY_CALL_COMMAND = 'torch2ms.verifyCall';

/** Module and sub-command that start the server: `python -m torch2ms lsp`. */
export const SERVER_MODULE = 'torch2ms';
export const SERVER_SUBCOMMAND = 'lsp';

/** Folder, relative to the extension root, that `npm run bundle-libs` fills. */
export const BUNDLED_LIBS_DIR = path.join('bundled', 'libs');

/** File written by `npm run bundle-libs` next to the bundled packages. */
export const BUNDLE_INFO_FILE = 'torch2ms-bundle.json';

export type ImportStrategy = 'fromEnvironment' | 'useBundled';
export type TraceLevel = 'off' | 'messages' | 'verbose';

export interface Torch2msSettings {
    interpreter: string[];
    importStrategy: ImportStrategy;
    args: string[];
    select: string[];
    ignore: string[];
    targetVersion: string;
    debounce: number;
    traceServer: TraceLevel;
}

/** What the server receives as initializationOptions and as the `torch2ms` configuration section. */
export interface InitializationOptions {
    select: string[];
    ignore: string[];
    targetVersion: string;
    debounce: number;
    /** VS Code's client lists pulled and pushed diagnostics separately: ask for push only. */
    pullDiagnostics: false;
}

export const DEFAULT_SETTINGS: Readonly<Torch2msSettings> = Object.freeze({
    interpreter: [],
    importStrategy: 'fromEnvironment',
    args: [],
    select: [],
    ignore: [],
    targetVersion: '2.10',
    debounce: 300,
    traceServer: 'off',
});

/**
 * Setting keys (below `torch2ms.`) and the field of {@link Torch2msSettings}
 * each one fills. package.json declares exactly these keys.
 */
export const SETTING_KEYS: Readonly<Record<string, keyof Torch2msSettings>> = Object.freeze({
    interpreter: 'interpreter',
    importStrategy: 'importStrategy',
    args: 'args',
    select: 'select',
    ignore: 'ignore',
    targetVersion: 'targetVersion',
    debounce: 'debounce',
    'trace.server': 'traceServer',
});

/**
 * Settings that change which process is started: a change to one of them
 * restarts the server. The others reach the running server through
 * workspace/didChangeConfiguration (trace.server is applied by the client).
 */
export const RESTART_SETTING_KEYS: readonly string[] = Object.freeze(['interpreter', 'importStrategy', 'args']);

const MAX_DEBOUNCE_MS = 10_000;

function stringList(value: unknown, fallback: readonly string[]): string[] {
    if (!Array.isArray(value)) {
        return [...fallback];
    }
    return value
        .filter((item): item is string => typeof item === 'string')
        .map((item) => item.trim())
        .filter((item) => item.length > 0);
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
    return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function debounceValue(value: unknown, fallback: number): number {
    const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number)) {
        return fallback;
    }
    return Math.min(MAX_DEBOUNCE_MS, Math.max(0, Math.round(number)));
}

function targetVersionValue(value: unknown, fallback: string): string {
    if (typeof value !== 'string') {
        return fallback;
    }
    const trimmed = value.trim();
    return trimmed.length > 0 ? trimmed : fallback;
}

/**
 * Reads the `torch2ms.*` settings through `get` (a `WorkspaceConfiguration.get`
 * of the `torch2ms` section, or any stand-in) and replaces values of the wrong
 * type with the defaults, so that the server never receives garbage.
 */
export function readSettings(get: (key: string) => unknown): Torch2msSettings {
    return {
        interpreter: stringList(get('interpreter'), DEFAULT_SETTINGS.interpreter),
        importStrategy: oneOf(get('importStrategy'), ['fromEnvironment', 'useBundled'], DEFAULT_SETTINGS.importStrategy),
        args: stringList(get('args'), DEFAULT_SETTINGS.args),
        select: stringList(get('select'), DEFAULT_SETTINGS.select),
        ignore: stringList(get('ignore'), DEFAULT_SETTINGS.ignore),
        targetVersion: targetVersionValue(get('targetVersion'), DEFAULT_SETTINGS.targetVersion),
        debounce: debounceValue(get('debounce'), DEFAULT_SETTINGS.debounce),
        traceServer: oneOf(get('trace.server'), ['off', 'messages', 'verbose'], DEFAULT_SETTINGS.traceServer),
    };
}

/** The part of the settings the server itself reads. */
export function toInitializationOptions(settings: Torch2msSettings): InitializationOptions {
    return {
        select: [...settings.select],
        ignore: [...settings.ignore],
        targetVersion: settings.targetVersion,
        debounce: settings.debounce,
        pullDiagnostics: false,
    };
}

/**
 * True when a configuration change needs a new server process. `affects` is
 * `ConfigurationChangeEvent.affectsConfiguration` or a stand-in.
 */
export function restartRequired(affects: (section: string) => boolean): boolean {
    return RESTART_SETTING_KEYS.some((key) => affects(`${CONFIG_SECTION}.${key}`));
}

export interface ExpandContext {
    workspaceFolder?: string;
    home?: string;
    env?: NodeJS.ProcessEnv;
}

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`
 * in one interpreter or argument string. Unknown variables are left as they are.
 */
export function expandVariables(value: string, context: ExpandContext = {}): string {
    const home = context.home ?? os.homedir();
    const env = context.env ?? process.env;
    let result = value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
        if (name === 'workspaceFolder' || name === 'workspaceRoot') {
            return context.workspaceFolder ?? whole;
        }
        if (name === 'userHome') {
            return home;
        }
        if (name.startsWith('env:')) {
            return env[name.slice('env:'.length)] ?? '';
        }
        return whole;
    });
    if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
        result = home + result.slice(1);
    }
    return result;
}

/** The names tried on PATH, in order, when no interpreter is configured. */
export function pythonNamesForPlatform(platform: NodeJS.Platform = process.platform): string[] {
    return platform === 'win32' ? ['python', 'python3', 'py'] : ['python3', 'python'];
}

export interface PathLookupOptions {
    env?: NodeJS.ProcessEnv;
    platform?: NodeJS.Platform;
    /** Replaces the file-system check, for tests. */
    isExecutable?: (file: string) => boolean;
}

function isExecutableFile(file: string, platform: NodeJS.Platform): boolean {
    try {
        const stat = fs.statSync(file);
        if (!stat.isFile()) {
            return false;
        }
        if (platform === 'win32') {
            return true;
        }
        fs.accessSync(file, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** Looks `name` up on PATH the way a shell would; undefined when absent. */
export function findOnPath(name: string, options: PathLookupOptions = {}): string | undefined {
    const env = options.env ?? process.env;
    const platform = options.platform ?? process.platform;
    const pathApi = platform === 'win32' ? path.win32 : path.posix;
    const isExecutable = options.isExecutable ?? ((file: string) => isExecutableFile(file, platform));
    const pathValue = env.PATH ?? env.Path ?? '';
    const extensions =
        platform === 'win32' ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)] : [''];
    for (const dir of pathValue.split(pathApi.delimiter)) {
        if (!dir) {
            continue;
        }
        for (const extension of extensions) {
            const candidate = pathApi.join(dir, name + extension.toLowerCase());
            if (isExecutable(candidate)) {
                return candidate;
            }
        }
    }
    return undefined;
}

export type InterpreterSource = 'setting' | 'pythonExtension' | 'path';

export interface ResolvedInterpreter {
    /** Program and leading arguments, e.g. ["/venv/bin/python"] or ["py", "-3.11"]. */
    command: string[];
    source: InterpreterSource;
}

export interface InterpreterLookup {
    /** Value of `torch2ms.interpreter`. */
    setting: readonly string[];
    /** Asks the Python extension for its active interpreter; absent when it is not installed. */
    fromPythonExtension?: () => Promise<readonly string[] | undefined> | readonly string[] | undefined;
    /** PATH lookup; defaults to {@link findOnPath}. */
    findOnPath?: (name: string) => string | undefined;
    platform?: NodeJS.Platform;
    expand?: ExpandContext;
}

/**
 * Chooses the interpreter: the `torch2ms.interpreter` setting, then the Python
 * extension's active environment, then `python3` / `python` on PATH.
 * Returns undefined when none is found.
 */
export async function resolveInterpreter(lookup: InterpreterLookup): Promise<ResolvedInterpreter | undefined> {
    const configured = lookup.setting
        .map((part) => expandVariables(part, lookup.expand))
        .filter((part) => part.trim().length > 0);
    if (configured.length > 0) {
        return { command: configured, source: 'setting' };
    }
    if (lookup.fromPythonExtension) {
        let fromExtension: readonly string[] | undefined;
        try {
            fromExtension = await lookup.fromPythonExtension();
        } catch {
            fromExtension = undefined;
        }
        const command = (fromExtension ?? []).filter((part) => typeof part === 'string' && part.length > 0);
        if (command.length > 0) {
            return { command: [...command], source: 'pythonExtension' };
        }
    }
    const lookupOnPath = lookup.findOnPath ?? ((name: string) => findOnPath(name, { platform: lookup.platform }));
    for (const name of pythonNamesForPlatform(lookup.platform)) {
        const found = lookupOnPath(name);
        if (found) {
            return { command: [found], source: 'path' };
        }
    }
    return undefined;
}

export interface ServerLaunch {
    command: string;
    args: string[];
    env: NodeJS.ProcessEnv;
}

export interface LaunchOptions {
    interpreter: readonly string[];
    settings: Torch2msSettings;
    /** Absolute path of bundled/libs; used only with importStrategy useBundled. */
    bundledLibs?: string;
    /** Environment to start from; defaults to process.env. */
    env?: NodeJS.ProcessEnv;
    platform?: NodeJS.Platform;
    expand?: ExpandContext;
}

/**
 * Builds `<interpreter...> -m torch2ms lsp <torch2ms.args...>` and its
 * environment. With useBundled, bundled/libs goes first on PYTHONPATH.
 */
export function buildServerLaunch(options: LaunchOptions): ServerLaunch {
    if (options.interpreter.length === 0) {
        throw new Error('No Python interpreter given for the torch2ms server');
    }
    const [command, ...interpreterArgs] = options.interpreter;
    const extraArgs = options.settings.args.map((arg) => expandVariables(arg, options.expand));
    const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
    env.PYTHONUNBUFFERED = '1';
    if (options.settings.importStrategy === 'useBundled' && options.bundledLibs) {
        const delimiter = (options.platform ?? process.platform) === 'win32' ? ';' : ':';
        const current = env.PYTHONPATH;
        env.PYTHONPATH = current ? `${options.bundledLibs}${delimiter}${current}` : options.bundledLibs;
    }
    return {
        command,
        args: [...interpreterArgs, '-m', SERVER_MODULE, SERVER_SUBCOMMAND, ...extraArgs],
        env,
    };
}

/** Quotes a command line for the output channel. */
export function formatCommandLine(command: string, args: readonly string[]): string {
    return [command, ...args].map((part) => (/^[\w@%+=:,./\\-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

export interface BundleInfo {
    /** "major.minor" of the CPython the bundle was installed with. */
    pythonVersion: string;
    /** sys.platform of that interpreter. */
    platform?: string;
}

/**
 * Compares the interpreter's version with the one the bundle was built for and
 * returns a warning, or undefined when they match (or nothing is known).
 */
export function bundleCompatibilityWarning(
    bundle: BundleInfo | undefined,
    interpreterVersion: string | undefined,
): string | undefined {
    if (!bundle || !interpreterVersion) {
        return undefined;
    }
    const minor = (version: string) => version.trim().split('.').slice(0, 2).join('.');
    if (minor(bundle.pythonVersion) === minor(interpreterVersion)) {
        return undefined;
    }
    return (
        `The bundled torch2ms libraries were installed for Python ${minor(bundle.pythonVersion)}, ` +
        `but the interpreter is Python ${minor(interpreterVersion)}. Compiled dependencies may fail to import; ` +
        `pick a Python ${minor(bundle.pythonVersion)} interpreter or set torch2ms.importStrategy to fromEnvironment.`
    );
}

/** Parses bundled/libs/torch2ms-bundle.json; undefined when absent or malformed. */
export function readBundleInfo(bundledLibs: string): BundleInfo | undefined {
    try {
        const raw: unknown = JSON.parse(fs.readFileSync(path.join(bundledLibs, BUNDLE_INFO_FILE), 'utf8'));
        if (raw && typeof raw === 'object' && typeof (raw as BundleInfo).pythonVersion === 'string') {
            const info = raw as BundleInfo;
            return { pythonVersion: info.pythonVersion, platform: typeof info.platform === 'string' ? info.platform : undefined };
        }
    } catch {
        // No bundle info: nothing to compare.
    }
    return undefined;
}
