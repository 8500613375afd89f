import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='shift']",
          message: 'Queues must be O(1): use LinkedQueue instead of Array#shift.',
        },
      ],
    },
  },
);
