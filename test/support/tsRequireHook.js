/**
 * Lets a child process `require` the TypeScript sources directly, with no build
 * step and no extra download: each .ts file is transpiled on load with the
 * compiler already installed (typescript.transpileModule, no type check).
 * Usage: node -r ./test/support/tsRequireHook.js script.ts
 */
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};

require('reflect-metadata');
