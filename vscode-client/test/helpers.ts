// Paths shared by the Node tests, found from the test file's own location so
// that the tests run from any checkout.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The vscode-client folder (the one holding the extension's package.json). */
export function clientRoot(): string {
    let dir = __dirname;
    for (;;) {
        const manifest = path.join(dir, 'package.json');
        if (fs.existsSync(manifest)) {
            const parsed = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string; contributes?: unknown };
            if (parsed.name === 'torch2ms' && parsed.contributes) {
                return dir;
            }
        }
        const parent = path.dirname(dir);
        if (parent === dir) {
            throw new Error(`No torch2ms extension package.json above ${__dirname}`);
        }
        dir = parent;
    }
}

/** The repository root, which holds vscode-client/. */
export function repoRoot(): string {
    return path.dirname(clientRoot());
}

/**
 * The interpreter the end-to-end test gives as the torch2ms.interpreter
 * setting: TORCH2MS_PYTHON, else the repository's .venv, else none (the
 * extension's own PATH lookup then decides).
 */
export function testInterpreterSetting(): string[] {
    const fromEnv = process.env.TORCH2MS_PYTHON;
    if (fromEnv && fromEnv.trim()) {
        return [fromEnv.trim()];
    }
    const venv =
        process.platform === 'win32'
            ? path.join(repoRoot(), '.venv', 'Scripts', 'python.exe')
            : path.join(repoRoot(), '.venv', 'bin', 'python');
    return fs.existsSync(venv) ? [venv] : [];
}
