/**
 * The package as `npm pack` makes it, installed into a project of its own, as a library user gets it. package.json
 * named no files: a pack shipped everything in the checkout, the tests, the benches, the sources, web/ and the
 * deployment files beside the built library (3,357 files, 17 MB unpacked), and no `exports` said which of its modules
 * are its API. It ships what the Docker image runs (bin/, dist/src/, dist/console/) and is imported by its name only.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ensureBuilt, ROOT } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

const npm = (args: string[], cwd = ROOT): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } });

beforeAll(() => ensureBuilt(), 180_000);

test('a pack holds the built library, its CLI and console, and package.json; no tests, benches, sources or web/', () => {
  const [{ files }] = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'])) as Array<{
    files: Array<{ path: string }>;
  }>;
  const paths = files.map((file) => file.path);
  const outside = paths.filter(
    (file) => !/^(bin\/|dist\/src\/|dist\/console\/)/.test(file) && !['package.json', 'README.md'].includes(file),
  );
  expect(outside).toEqual([]);
  expect(paths).toEqual(expect.arrayContaining(['bin/mailbox.js', 'dist/src/index.js', 'dist/src/index.d.ts']));
  expect(paths).toContain('dist/src/cli/main.js');
  if (fs.existsSync(path.join(ROOT, 'dist/console/index.html'))) expect(paths).toContain('dist/console/index.html');
}, 120_000);

/** The README's library example, as its reader copies it. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('<!-- section:library -->'), readme.indexOf('<!-- /section:library -->'));
  const code = /```ts\n([^]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('README.md: no ts example in the library section');
  return code;
}

test("the packed package, installed: imported by its name it opens a mailbox and sends; the README's example compiles; its modules are not imported one by one", () => {
  const project = tempDir('mailbox-packed-');
  const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', project])) as Array<{
    filename: string;
  }>;
  fs.mkdirSync(path.join(project, 'node_modules'));
  execFileSync('tar', ['-xzf', path.join(project, packed[0].filename), '-C', path.join(project, 'node_modules')]);
  const installed = path.join(project, 'node_modules', 'agent-mailbox');
  fs.renameSync(path.join(project, 'node_modules', 'package'), installed);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(installed, 'node_modules'), 'dir'); // its dependencies

  const run = `
    const { createMailbox, MailboxError } = require('agent-mailbox');
    (async () => {
      const admin = 'packed-admin-token-0123456789abcdef';
      const mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: admin, logLevel: 'silent' });
      const root = await mailbox.as(admin);
      const tokens = {};
      for (const identity of ['@a', '@b', '@c']) tokens[identity] = (await root.registerAgent({ identity })).token;
      const a = await mailbox.as(tokens['@a']);
      await a.send({ to: ['@b', '@c'], subject: 'packed', body: 'x' });
      const c = await mailbox.as(tokens['@c']);
      const unread = (await c.listMessages({ status: 'unread' })).messages.map((m) => m.subject);
      const refused = await mailbox.as('not-a-token').catch((error) => error);
      let deep = 'loaded';
      try { require('agent-mailbox/dist/src/server'); } catch (error) { deep = error.code; }
      await mailbox.close();
      console.log(JSON.stringify({ unread, refused: refused instanceof MailboxError && refused.code, deep,
        version: require('agent-mailbox/package.json').version }));
    })();`;
  const out = execFileSync(process.execPath, ['-e', run], { cwd: project, encoding: 'utf8' });
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(JSON.parse(out)).toEqual({
    unread: ['packed'],
    refused: 'UNAUTHENTICATED',
    deep: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    version: manifest.version,
  });

  const file = path.join(project, 'readme.mts');
  fs.writeFileSync(file, readmeExample());
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
  });
  const resolved = program.getSourceFiles().map((source) => source.fileName);
  expect(resolved).toContain(path.join(installed, 'dist/src/index.d.ts'));
  expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '))).toEqual([]);
}, 180_000);
