/**
 * GET /console: the operator console, a static single-page app built by
 * `npm run build` (Vite, from web/) into dist/console and served from there.
 * No token on this route: the page holds none; it signs in with the API's own
 * bearer tokens, from session storage. A strict Content-Security-Policy keeps
 * every script, style and request on this origin and forbids inline script.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { MailboxError } from '../../../errors';
import { DOCS_CSP } from './docsRoutes';

/** The /docs page's policy: only same-origin scripts, styles, images and fetches; no inline script, no framing, no form posts. */
export const CONSOLE_CSP = DOCS_CSP;

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** dist/console beside the package.json above this module (src/... under ts-jest, dist/src/... when built). */
export function consoleDir(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'console');
    if (path.dirname(dir) === dir) return path.join(from, 'console');
  }
}

const notBuilt = (dir: string) =>
  new MailboxError(
    'UNAVAILABLE',
    'Console not built',
    `The console's files are not at ${dir}; run \`npm run build\` (it builds web/ with Vite), then restart the server.`,
    { dir },
  );

/** What a browser at / is shown when the console is not built: where the API is, its reference, liveness. */
const ROOT_PAGE =
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>agent-mailbox</title></head><body>\n' +
  '<h1>agent-mailbox</h1>\n' +
  '<p>This is the HTTP API of an agent-mailbox server: its routes are under <code>/v1</code>.</p>\n<ul>\n' +
  '<li><a href="/docs">/docs</a>: the API reference, every route (<a href="/openapi.json">/openapi.json</a>: the OpenAPI document)</li>\n' +
  '<li><a href="/healthz">/healthz</a>: whether the server is up (<a href="/readyz">/readyz</a>: whether it is ready to serve)</li>\n' +
  '</ul>\n<p>The operator console (/console) is not built on this server: run <code>npm run build</code>, then restart ' +
  'the server.</p>\n</body></html>\n';

export function consoleRoutes(app: FastifyInstance, dir = consoleDir()): void {
  const secured = {
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
  let page: Buffer | null = null;
  const sendPage = async (_request: unknown, reply: FastifyReply) => {
    const file = path.join(dir, 'index.html');
    if (!page) {
      if (!fs.existsSync(file)) throw notBuilt(dir);
      page = fs.readFileSync(file);
    }
    return reply
      .headers({ ...secured, 'cache-control': 'no-cache' })
      .type('text/html; charset=utf-8')
      .send(page);
  };
  app.get('/console', sendPage);
  app.get('/console/', sendPage);

  // GET / from a browser (Accept: text/html) had the API's JSON 404: the console when it is built, else a short page
  // naming where to go. Any other client keeps the JSON 404 (routeNotFound names the same places). Not a route: the
  // API has none at /, and POST / stays a 404.
  app.addHook('onRequest', async (request, reply) => {
    // Every request passes here: compared without allocating (no split of the URL) before the Accept header is read.
    const atRoot = request.url === '/' || request.url.startsWith('/?');
    if (request.method !== 'GET' || !atRoot || !/\btext\/html\b/i.test(request.headers.accept ?? '')) return;
    if (fs.existsSync(path.join(dir, 'index.html'))) return reply.redirect('/console', 302);
    return reply
      .headers({ ...secured, 'cache-control': 'no-cache' })
      .type('text/html; charset=utf-8')
      .send(ROOT_PAGE);
  });

  const assets = new Map<string, Buffer>();
  app.get<{ Params: { file: string } }>('/console/assets/:file', async (request, reply) => {
    const { file } = request.params;
    const type = TYPES[path.extname(file)];
    // Built file names only (name-hash.ext): nothing else under dist/ is reachable, whatever the URL.
    if (!type || !/^[\w.-]+$/.test(file) || file.startsWith('.')) {
      throw new MailboxError('NOT_FOUND', 'Not found', `There is no console asset '${file}'; open /console.`, { file });
    }
    let content = assets.get(file);
    if (!content) {
      const full = path.join(dir, 'assets', file);
      if (!fs.existsSync(full))
        throw new MailboxError('NOT_FOUND', 'Not found', `There is no console asset '${file}'; open /console.`, { file });
      assets.set(file, (content = fs.readFileSync(full)));
    }
    // Names carry a content hash: a changed file is a new name, so the browser may keep these for good.
    return reply
      .headers({ ...secured, 'cache-control': 'public, max-age=31536000, immutable' })
      .type(type)
      .send(content);
  });
}
