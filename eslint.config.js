import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Modules every request goes through. An object literal that spreads an object and has more
 * properties after it is moved to V8's old generation however short its life; on these paths that
 * garbage brought on major collections and the slowest answers (docs/decisions.md, D51): build
 * such objects whole, or with `withFields` (src/platform/objects.ts).
 */
const REQUEST_PATHS = ['src/http/**/*.ts', 'src/runtime/**/*.ts', 'src/graphql/route.ts', 'src/mcp/route.ts', 'src/mcp/run-tool.ts', 'src/tables/records.ts', 'src/tables/save-pipeline.ts'];

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: REQUEST_PATHS,
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement ~ *',
          message: 'On a request path, an object spread followed by more properties goes to the old generation at once (D51): build the object whole, or use withFields (src/platform/objects.ts).',
        },
      ],
    },
  },
  { files: ['**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  { files: ['src/cli/**', 'scripts/**', 'bench/**', 'bin/**', 'test/**'], rules: { 'no-console': 'off' } },
);
