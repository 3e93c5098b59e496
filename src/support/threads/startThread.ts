/**
 * Starts a worker thread on one of our modules, from compiled output (dist, a
 * .js file) or from the TypeScript sources (under ts-jest, a .ts file: the
 * thread is a plain Node thread that jest's transform does not reach). For
 * sources, the thread transpiles each of our .ts modules as it is required
 * (typescript's transpileModule: no type check, which `npm run typecheck`
 * does) and keeps the output in a cache keyed by the source's content, so a
 * test run pays for the compiler once, not once per thread.
 */
import path from 'node:path';
import os from 'node:os';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
const { entry, transpileCache } = workerData.__thread;
if (entry.endsWith('.ts')) {
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  const Module = require('node:module');
  let ts = null;
  fs.mkdirSync(transpileCache, { recursive: true });
  Module._extensions['.ts'] = (module, filename) => {
    const source = fs.readFileSync(filename, 'utf8');
    const key = crypto.createHash('sha1').update(filename).update('\\0').update(source).digest('hex');
    const cached = path.join(transpileCache, key + '.js');
    let output;
    try {
      output = fs.readFileSync(cached, 'utf8');
    } catch {
      ts ??= require('typescript');
      output = ts.transpileModule(source, {
        fileName: filename,
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: false,
          sourceMap: false,
        },
      }).outputText;
      const partial = cached + '.' + process.pid + '.' + require('node:worker_threads').threadId;
      fs.writeFileSync(partial, output);
      fs.renameSync(partial, cached);
    }
    module._compile(output, filename);
  };
}
require(entry);
`;

/**
 * A worker running `entry` (an absolute path without extension is completed with this module's own: .ts under
 * ts-jest, .js from dist). `workerData` reaches the module as worker_threads' workerData.
 */
export function startThread(entry: string, options: WorkerOptions = {}): Worker {
  const file = path.extname(entry) === '' ? entry + path.extname(__filename) : entry;
  const transpileCache = path.join(os.tmpdir(), 'agent-mailbox-ts-threads');
  return new Worker(BOOTSTRAP, {
    ...options,
    eval: true,
    workerData: { ...(options.workerData as object), __thread: { entry: file, transpileCache } },
  });
}
