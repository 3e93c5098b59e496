// Lint: typescript-eslint's recommended rules plus the type-aware ones that catch real bugs
// (a promise nobody awaits or handles, an async function passed where a callback's result is ignored).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'data/**', '.bench-data/**', 'bin/**', 'scripts/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A `let` read by a closure before its assignment (the closure may run synchronously) must stay a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The type-check (npm run typecheck) takes src with test/ in one program, jest's types included; `npm run build`
    // compiles src without them. A test global in src would pass the first and break the second.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['describe', 'it', 'test', 'expect', 'jest', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach'].map((name) => ({
          name,
          message: "a test global: src is compiled without jest's types (tsconfig.build.json)",
        })),
      ],
    },
  },
  {
    // Tests and benchmarks read untyped JSON responses; `any` there is the honest type.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
