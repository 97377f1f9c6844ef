// Fills bundled/libs with torch2ms and its pure-Python runtime dependencies
// (pyyaml, jsonschema, jinja2, pygls, lsprotocol and what they need), for
// torch2ms.importStrategy = useBundled. Optional: `npm run package` works
// without it, and the extension then imports torch2ms from the environment.
//
//   npm run bundle-libs                      # uses $TORCH2MS_PYTHON or python3
//   npm run bundle-libs -- --python /path/to/python3.11
//
// The interpreter's minor version and platform are recorded in
// bundled/libs/torch2ms-bundle.json: compiled wheels (pyyaml's optional
// extension, rpds-py) only load in a CPython of that version and platform.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(clientDir, '..');
const target = path.join(clientDir, 'bundled', 'libs');

const flag = process.argv.indexOf('--python');
const python = flag >= 0 ? process.argv[flag + 1] : process.env.TORCH2MS_PYTHON || (process.platform === 'win32' ? 'python' : 'python3');

function run(command, args, options = {}) {
    const result = spawnSync(command, args, { stdio: 'inherit', ...options });
    if (result.error) {
        throw result.error;
    }
    if (result.status !== 0) {
        throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
    }
    return result;
}

if (!existsSync(path.join(repoRoot, 'pyproject.toml'))) {
    throw new Error(`no pyproject.toml in ${repoRoot}`);
}

rmSync(target, { recursive: true, force: true });
// The [lsp] extra adds pygls and lsprotocol; torch and mindspore belong to
// the separate [verify] extra and are not installed.
run(python, [
    '-m', 'pip', 'install',
    '--disable-pip-version-check',
    '--no-compile',
    '--target', target,
    `${repoRoot}[lsp]`,
]);

// Console scripts carry this machine's interpreter path: not for shipping.
rmSync(path.join(target, 'bin'), { recursive: true, force: true });
for (const name of readdirSync(target)) {
    if (name === '__pycache__') {
        rmSync(path.join(target, name), { recursive: true, force: true });
    }
}

const info = spawnSync(
    python,
    ['-c', 'import json, platform, sys; print(json.dumps({"pythonVersion": "%d.%d" % sys.version_info[:2], "platform": sys.platform, "implementation": platform.python_implementation()}))'],
    { encoding: 'utf8' },
);
if (info.status !== 0) {
    throw new Error(`could not query ${python}: ${info.stderr}`);
}
writeFileSync(path.join(target, 'torch2ms-bundle.json'), info.stdout.trim() + '\n');

// The bundle must import on its own, without the environment's packages.
run(python, ['-S', '-c', 'import torch2ms, torch2ms.lsp, pygls, lsprotocol, yaml, jsonschema, jinja2'], {
    env: { ...process.env, PYTHONPATH: target, PYTHONNOUSERSITE: '1' },
    cwd: target,
});
console.log(`bundled/libs ready for Python ${JSON.parse(info.stdout).pythonVersion} (${JSON.parse(info.stdout).platform})`);
