import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Top-level folders of the daemon; each is one concept whose `index.ts` is its public face.
 * Read from the directory, so that a new folder is under the rule the day it is made.
 */
const DAEMON_FOLDERS = readdirSync(new URL('./packages/daemon/src/', import.meta.url), {
  withFileTypes: true,
})
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .join('|');

/** Refuses imports of a file inside another daemon folder, reached by the path prefix `up`. */
function throughIndex(up) {
  return {
    regex: `^${up}(${DAEMON_FOLDERS})/(?!index\\.js$)`,
    message: 'Import another folder through its index.ts.',
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'setTimeout',
          'clearTimeout',
          'setImmediate',
          'URL',
          'performance',
          'AbortController',
          'AbortSignal',
          'Buffer',
          'structuredClone',
          'fetch',
          'TextEncoder',
          'TextDecoder',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='shift']",
          message: 'Queues must be O(1): use LinkedQueue instead of Array#shift.',
        },
      ],
    },
  },
  {
    // Small files with one idea each, short functions. A table of handlers may opt out of the
    // function limit with an eslint-disable comment that says why.
    files: ['packages/*/src/**/*.ts', 'packages/daemon/web/**/*.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    // One daemon folder reaches another only through that folder's index.ts (docs/architecture.md)…
    files: ['packages/daemon/src/**/*.ts'],
    ignores: ['packages/daemon/src/acp/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [throughIndex('(\\.\\./)+')] }] },
  },
  {
    // …the files at the root of src/ (daemon.ts, index.ts, …) too…
    files: ['packages/daemon/src/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [throughIndex('\\./')] }] },
  },
  {
    // …and ACP speaks to sessions, not to the HTTP layer: what both transports share is in wire/.
    files: ['packages/daemon/src/acp/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            throughIndex('(\\.\\./)+'),
            { regex: '^(\\.\\./)+http/', message: 'acp/ must not import http/: shared code lives in wire/.' },
          ],
        },
      ],
    },
  },
  {
    // The store contract (docs/decisions/028) is what the SQLite, PostgreSQL and in-memory stores
    // share: it depends on the wire contract alone, never on a store, a database client or the
    // model runtime.
    files: ['packages/store/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@sluice/(?!protocol$)|better-sqlite3|postgres|ioredis)',
              message: '@sluice/store depends on @sluice/protocol only.',
            },
          ],
        },
      ],
    },
  },
);
