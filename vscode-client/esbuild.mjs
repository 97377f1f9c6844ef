// Builds the extension bundle (dist/extension.js) or, with --tests, compiles
// the Node tests and the vscode-free module they load into out/.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
    const testFiles = readdirSync('test')
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `test/${name}`);
    await build({
        entryPoints: ['src/serverConfig.ts', ...testFiles],
        outdir: 'out',
        outbase: '.',
        bundle: false,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        sourcemap: 'inline',
        logLevel: 'warning',
    });
} else {
    await build({
        entryPoints: ['src/extension.ts'],
        outfile: 'dist/extension.js',
        bundle: true,
        external: ['vscode'],
        platform: 'node',
        format: 'cjs',
        // VS Code 1.82 runs extensions on Node 18.
        target: 'node18',
        minify: production,
        sourcemap: !production,
        logLevel: 'warning',
    });
}
