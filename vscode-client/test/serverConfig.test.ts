// Unit tests of the vscode-free logic: settings, initializationOptions,
// interpreter resolution and the server command line.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
    BUNDLE_INFO_FILE,
    DEFAULT_SETTINGS,
    RESTART_SETTING_KEYS,
    SETTING_KEYS,
    Torch2msSettings,
    bundleCompatibilityWarning,
    buildServerLaunch,
    expandVariables,
    findOnPath,
    formatCommandLine,
    readBundleInfo,
    readSettings,
    resolveInterpreter,
    restartRequired,
    toInitializationOptions,
} from '../src/serverConfig';
import { clientRoot } from './helpers';

interface ManifestProperty {
    default?: unknown;
    type?: string;
    enum?: string[];
}

interface Manifest {
    main: string;
    activationEvents: string[];
    contributes: {
        commands: { command: string }[];
        configuration: { properties: Record<string, ManifestProperty> };
    };
}

const manifest = JSON.parse(fs.readFileSync(path.join(clientRoot(), 'package.json'), 'utf8')) as Manifest;

function settingsWith(overrides: Partial<Torch2msSettings>): Torch2msSettings {
    return { ...readSettings(() => undefined), ...overrides };
}

describe('settings', () => {
    test('unset settings read as the defaults', () => {
        assert.deepEqual(readSettings(() => undefined), { ...DEFAULT_SETTINGS });
    });

    test('package.json declares exactly the known settings, with the same defaults', () => {
        const declared = Object.keys(manifest.contributes.configuration.properties).sort();
        const known = Object.keys(SETTING_KEYS)
            .map((key) => `torch2ms.${key}`)
            .sort();
        assert.deepEqual(declared, known);
        for (const [key, field] of Object.entries(SETTING_KEYS)) {
            const property = manifest.contributes.configuration.properties[`torch2ms.${key}`];
            assert.deepEqual(property.default, DEFAULT_SETTINGS[field], `default of torch2ms.${key}`);
        }
        assert.deepEqual(manifest.contributes.configuration.properties['torch2ms.importStrategy'].enum?.sort(), [
            'fromEnvironment',
            'useBundled',
        ]);
        assert.deepEqual(manifest.contributes.configuration.properties['torch2ms.trace.server'].enum, [
            'off',
            'messages',
            'verbose',
        ]);
    });

    test('package.json settings read through readSettings give the defaults', () => {
        const properties = manifest.contributes.configuration.properties;
        const fromManifest = readSettings((key) => properties[`torch2ms.${key}`]?.default);
        assert.deepEqual(fromManifest, { ...DEFAULT_SETTINGS });
    });

    test('values are read and normalised', () => {
        const values: Record<string, unknown> = {
            interpreter: [' /opt/py/bin/python ', '', 42, '-X', 'utf8'],
            importStrategy: 'useBundled',
            args: ['--log-level', 'debug'],
            select: ['TMS1', ' TMS201 '],
            ignore: ['TMS105'],
            targetVersion: ' 2.9 ',
            debounce: 120.6,
            'trace.server': 'verbose',
        };
        assert.deepEqual(
            readSettings((key) => values[key]),
            {
                interpreter: ['/opt/py/bin/python', '-X', 'utf8'],
                importStrategy: 'useBundled',
                args: ['--log-level', 'debug'],
                select: ['TMS1', 'TMS201'],
                ignore: ['TMS105'],
                targetVersion: '2.9',
                debounce: 121,
                traceServer: 'verbose',
            },
        );
    });

    test('values of the wrong type fall back to the defaults', () => {
        const values: Record<string, unknown> = {
            interpreter: '/usr/bin/python3',
            importStrategy: 'fromSomewhere',
            args: null,
            select: 'TMS1',
            ignore: { TMS105: true },
            targetVersion: 2.1,
            debounce: 'soon',
            'trace.server': true,
        };
        assert.deepEqual(readSettings((key) => values[key]), { ...DEFAULT_SETTINGS });
    });

    test('debounce is clamped and accepts numeric strings', () => {
        assert.equal(readSettings((key) => (key === 'debounce' ? -5 : undefined)).debounce, 0);
        assert.equal(readSettings((key) => (key === 'debounce' ? 99_999 : undefined)).debounce, 10_000);
        assert.equal(readSettings((key) => (key === 'debounce' ? '450' : undefined)).debounce, 450);
        assert.equal(readSettings((key) => (key === 'debounce' ? Number.NaN : undefined)).debounce, 300);
    });
});

describe('initializationOptions', () => {
    test('carry exactly select, ignore, targetVersion, debounce and push-only diagnostics', () => {
        const options = toInitializationOptions(
            settingsWith({
                interpreter: ['/x/python'],
                args: ['--verbose'],
                select: ['TMS1'],
                ignore: ['TMS105'],
                targetVersion: '2.9',
                debounce: 50,
                traceServer: 'messages',
            }),
        );
        assert.deepEqual(options, { select: ['TMS1'], ignore: ['TMS105'], targetVersion: '2.9', debounce: 50, pullDiagnostics: false });
    });

    test('defaults give the documented contract values', () => {
        assert.deepEqual(toInitializationOptions(readSettings(() => undefined)), {
            select: [],
            ignore: [],
            targetVersion: '2.10',
            debounce: 300,
            pullDiagnostics: false,
        });
    });

    test('are copies, not views of the settings', () => {
        const settings = settingsWith({ select: ['TMS1'] });
        const options = toInitializationOptions(settings);
        options.select.push('TMS2');
        assert.deepEqual(settings.select, ['TMS1']);
    });
});

describe('restartRequired', () => {
    const changed = (...keys: string[]) => (section: string) =>
        keys.some((key) => key === section || key.startsWith(`${section}.`));

    for (const key of RESTART_SETTING_KEYS) {
        test(`a change of torch2ms.${key} restarts the server`, () => {
            assert.equal(restartRequired(changed(`torch2ms.${key}`)), true);
        });
    }

    test('server-read settings and trace do not restart it', () => {
        for (const key of ['select', 'ignore', 'targetVersion', 'debounce', 'trace.server']) {
            assert.equal(restartRequired(changed(`torch2ms.${key}`)), false, key);
        }
        assert.equal(restartRequired(changed('python.defaultInterpreterPath')), false);
    });
});

describe('expandVariables', () => {
    const context = { workspaceFolder: '/ws', home: '/home/u', env: { VENV: '/venvs/a' } };

    test('expands the supported variables', () => {
        assert.equal(expandVariables('${workspaceFolder}/.venv/bin/python', context), '/ws/.venv/bin/python');
        assert.equal(expandVariables('${userHome}/py', context), '/home/u/py');
        assert.equal(expandVariables('${env:VENV}/bin/python', context), '/venvs/a/bin/python');
        assert.equal(expandVariables('${env:MISSING}x', context), 'x');
        assert.equal(expandVariables('~/envs/t/bin/python', context), '/home/u/envs/t/bin/python');
    });

    test('leaves other text alone', () => {
        assert.equal(expandVariables('${command:python.interpreterPath}', context), '${command:python.interpreterPath}');
        assert.equal(expandVariables('a~b', context), 'a~b');
        assert.equal(expandVariables('${workspaceFolder}', { home: '/h', env: {} }), '${workspaceFolder}');
    });
});

describe('findOnPath', () => {
    test('finds an executable file and skips non-executable ones', (t) => {
        if (process.platform === 'win32') {
            t.skip('POSIX permissions');
            return;
        }
        const first = fs.mkdtempSync(path.join(os.tmpdir(), 'torch2ms-path-a-'));
        const second = fs.mkdtempSync(path.join(os.tmpdir(), 'torch2ms-path-b-'));
        try {
            fs.writeFileSync(path.join(first, 'python3'), '#!/bin/sh\n', { mode: 0o644 });
            fs.writeFileSync(path.join(second, 'python3'), '#!/bin/sh\n', { mode: 0o755 });
            const env = { PATH: [first, second].join(path.delimiter) };
            assert.equal(findOnPath('python3', { env }), path.join(second, 'python3'));
            assert.equal(findOnPath('python', { env }), undefined);
        } finally {
            fs.rmSync(first, { recursive: true, force: true });
            fs.rmSync(second, { recursive: true, force: true });
        }
    });

    test('uses PATHEXT on Windows', () => {
        const existing = new Set(['C:\\Py311\\python.exe']);
        const found = findOnPath('python', {
            platform: 'win32',
            env: { Path: 'C:\\Windows;C:\\Py311', PATHEXT: '.COM;.EXE' },
            isExecutable: (file) => existing.has(file),
        });
        assert.equal(found, 'C:\\Py311\\python.exe');
    });
});

describe('resolveInterpreter', () => {
    const onPath =
        (...names: string[]) =>
        (name: string) =>
            names.includes(name) ? `/usr/bin/${name}` : undefined;

    test('the setting comes first, with variables expanded', async () => {
        let asked = false;
        const resolved = await resolveInterpreter({
            setting: ['${workspaceFolder}/.venv/bin/python', '-X', 'utf8'],
            fromPythonExtension: () => {
                asked = true;
                return ['/ext/python'];
            },
            findOnPath: onPath('python3'),
            expand: { workspaceFolder: '/ws' },
        });
        assert.deepEqual(resolved, { command: ['/ws/.venv/bin/python', '-X', 'utf8'], source: 'setting' });
        assert.equal(asked, false);
    });

    test('then the Python extension', async () => {
        const resolved = await resolveInterpreter({
            setting: [],
            fromPythonExtension: async () => ['/home/u/.venv/bin/python'],
            findOnPath: onPath('python3'),
        });
        assert.deepEqual(resolved, { command: ['/home/u/.venv/bin/python'], source: 'pythonExtension' });
    });

    test('then python3, then python on PATH', async () => {
        const noExtension = async () => undefined;
        assert.deepEqual(
            await resolveInterpreter({ setting: [''], fromPythonExtension: noExtension, findOnPath: onPath('python', 'python3') }),
            { command: ['/usr/bin/python3'], source: 'path' },
        );
        assert.deepEqual(
            await resolveInterpreter({ setting: [], findOnPath: onPath('python'), platform: 'linux' }),
            { command: ['/usr/bin/python'], source: 'path' },
        );
    });

    test('a failing or empty Python extension answer falls through to PATH', async () => {
        for (const fromPythonExtension of [
            async () => {
                throw new Error('not ready');
            },
            () => [] as string[],
            () => [''],
        ]) {
            const resolved = await resolveInterpreter({ setting: [], fromPythonExtension, findOnPath: onPath('python3') });
            assert.deepEqual(resolved, { command: ['/usr/bin/python3'], source: 'path' });
        }
    });

    test('undefined when nothing is found', async () => {
        assert.equal(await resolveInterpreter({ setting: [], findOnPath: () => undefined }), undefined);
    });
});

describe('buildServerLaunch', () => {
    test('runs python -m torch2ms lsp with the extra args last', () => {
        const launch = buildServerLaunch({
            interpreter: ['py', '-3.11'],
            settings: settingsWith({ args: ['--log-file', '${workspaceFolder}/lsp.log'] }),
            env: { PATH: '/bin' },
            expand: { workspaceFolder: '/ws' },
        });
        assert.equal(launch.command, 'py');
        assert.deepEqual(launch.args, ['-3.11', '-m', 'torch2ms', 'lsp', '--log-file', '/ws/lsp.log']);
        assert.equal(launch.env.PATH, '/bin');
        assert.equal(launch.env.PYTHONUNBUFFERED, '1');
    });

    test('fromEnvironment leaves PYTHONPATH alone even when a bundle exists', () => {
        const launch = buildServerLaunch({
            interpreter: ['/usr/bin/python3'],
            settings: settingsWith({ importStrategy: 'fromEnvironment' }),
            bundledLibs: '/ext/bundled/libs',
            env: { PYTHONPATH: '/mine' },
        });
        assert.equal(launch.env.PYTHONPATH, '/mine');
        const bare = buildServerLaunch({
            interpreter: ['/usr/bin/python3'],
            settings: settingsWith({}),
            bundledLibs: '/ext/bundled/libs',
            env: {},
        });
        assert.equal(bare.env.PYTHONPATH, undefined);
    });

    test('useBundled puts bundled/libs first on PYTHONPATH', () => {
        const env = { PYTHONPATH: '/mine' };
        const launch = buildServerLaunch({
            interpreter: ['/usr/bin/python3'],
            settings: settingsWith({ importStrategy: 'useBundled' }),
            bundledLibs: '/ext/bundled/libs',
            env,
            platform: 'linux',
        });
        assert.equal(launch.env.PYTHONPATH, '/ext/bundled/libs:/mine');
        assert.deepEqual(env, { PYTHONPATH: '/mine' }, 'the given environment is not modified');

        const windows = buildServerLaunch({
            interpreter: ['python'],
            settings: settingsWith({ importStrategy: 'useBundled' }),
            bundledLibs: 'C:\\ext\\bundled\\libs',
            env: { PYTHONPATH: 'C:\\mine' },
            platform: 'win32',
        });
        assert.equal(windows.env.PYTHONPATH, 'C:\\ext\\bundled\\libs;C:\\mine');

        const alone = buildServerLaunch({
            interpreter: ['python3'],
            settings: settingsWith({ importStrategy: 'useBundled' }),
            bundledLibs: '/ext/bundled/libs',
            env: {},
        });
        assert.equal(alone.env.PYTHONPATH, '/ext/bundled/libs');
    });

    test('an empty interpreter is refused', () => {
        assert.throws(() => buildServerLaunch({ interpreter: [], settings: settingsWith({}) }), /No Python interpreter/);
    });

    test('formatCommandLine quotes what a shell would split', () => {
        assert.equal(
            formatCommandLine('/opt/my env/python', ['-m', 'torch2ms', 'lsp']),
            '"/opt/my env/python" -m torch2ms lsp',
        );
    });
});

describe('bundle compatibility', () => {
    test('warns only when the minor versions differ', () => {
        assert.equal(bundleCompatibilityWarning({ pythonVersion: '3.11' }, '3.11'), undefined);
        assert.equal(bundleCompatibilityWarning({ pythonVersion: '3.11.7' }, '3.11'), undefined);
        assert.equal(bundleCompatibilityWarning(undefined, '3.12'), undefined);
        assert.equal(bundleCompatibilityWarning({ pythonVersion: '3.11' }, undefined), undefined);
        const warning = bundleCompatibilityWarning({ pythonVersion: '3.11' }, '3.12');
        assert.match(warning ?? '', /Python 3\.11.*Python 3\.12/);
    });

    test('reads the bundle info written by bundle-libs', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torch2ms-bundle-'));
        try {
            assert.equal(readBundleInfo(dir), undefined);
            fs.writeFileSync(path.join(dir, BUNDLE_INFO_FILE), '{"pythonVersion": "3.11", "platform": "linux"}');
            assert.deepEqual(readBundleInfo(dir), { pythonVersion: '3.11', platform: 'linux' });
            fs.writeFileSync(path.join(dir, BUNDLE_INFO_FILE), '{not json');
            assert.equal(readBundleInfo(dir), undefined);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe('manifest', () => {
    test('activates on Python files and on every contributed command', () => {
        assert.ok(manifest.activationEvents.includes('onLanguage:python'));
        const commands = manifest.contributes.commands.map((c) => c.command).sort();
        assert.deepEqual(commands, ['torch2ms.restart', 'torch2ms.scanWorkspace', 'torch2ms.showOutput']);
        for (const command of commands) {
            assert.ok(manifest.activationEvents.includes(`onCommand:${command}`), command);
        }
        assert.equal(manifest.main, './dist/extension.js');
    });
});
