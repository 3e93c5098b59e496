/**
 * Lets a child process `require` the TypeScript sources directly, with no build
 * step and no extra download: each .ts file is transpiled on load with the
 * compiler already installed (typescript.transpileModule, no type check).
 * Usage: node -r ./test/support/tsRequireHook.js script.ts
 *
 * Transpiled files are kept in node_modules/.cache/ts-require-hook, keyed by a hash of the file's path and source,
 * the compiler's version and these options, so an edited file is transpiled again and nothing stale is ever run.
 * Why: a child on the sources loads ~300 modules; transpiling them all took ~4 s of each spawn (the CLI's refusal
 * 4.8 s on the sources, 0.6 s built), and suites spawn dozens of children (crash and heartbeat tests), twice in CI
 * (Node 20 and 22). With the cache only the first spawn pays, and the compiler is not even loaded on a hit.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const compilerOptions = {
  module: 'CommonJS',
  target: 'ES2022',
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: false,
  inlineSourceMap: true,
};

const root = path.resolve(__dirname, '../..');
const cacheDir = path.join(root, 'node_modules', '.cache', 'ts-require-hook');
const compilerVersion = require('typescript/package.json').version;
const salt = `${compilerVersion}\0${JSON.stringify(compilerOptions)}\0`;

let ts = null; // loaded at the first miss only (~0.4 s)
function transpile(source, filename) {
  ts ??= require('typescript');
  const options = {
    ...compilerOptions,
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
  };
  return ts.transpileModule(source, { compilerOptions: options, fileName: filename }).outputText;
}

function cached(source, filename) {
  const key = crypto.createHash('sha256').update(salt).update(filename).update('\0').update(source).digest('hex');
  const file = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // a miss (or an unreadable entry): transpile, and keep it for the next child
  }
  const output = transpile(source, filename);
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written whole under a unique name, then renamed: children started in parallel never read half a file.
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(partial, output);
    fs.renameSync(partial, file);
  } catch {
    // a read-only tree: run without the cache
  }
  return output;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(cached(fs.readFileSync(filename, 'utf8'), filename), filename);
};

require('reflect-metadata');
