// ESLint flat config: the recommended JavaScript and TypeScript rules plus a
// few that catch mistakes easily made in an extension (floating promises are
// left to review: they need type information, which slows the lint down).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
    {
        ignores: ['dist/**', 'out/**', 'node_modules/**', 'bundled/**', '*.vsix'],
    },
    js.configs.recommended,
    tseslint.configs.recommended,
    {
        files: ['**/*.ts'],
        rules: {
            eqeqeq: ['error', 'always'],
            curly: ['error', 'all'],
            'no-console': 'error',
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
        },
    },
    {
        files: ['**/*.mjs'],
        languageOptions: {
            globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
        },
    },
);
