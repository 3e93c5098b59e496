/**
 * GET /docs: the API reference as a web page (Swagger UI). Its scripts and
 * styles come from the swagger-ui-dist package and are served by this server,
 * nothing from a CDN; a strict Content-Security-Policy keeps it that way.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MailboxError } from '../../../errors';
import { noExtraInput } from './routeInput';

/** Only same-origin scripts, styles, images and fetches; no inline script, no framing, no form posts. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>agent-mailbox API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <noscript>This page needs JavaScript; the OpenAPI document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an outside validator for its badge.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout',
});
`;

const PACKAGE_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

function packageDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

export function docsRoutes(app: FastifyInstance): void {
  const cache = new Map<string, Buffer>();
  const asset = (file: string): Buffer => {
    let content = cache.get(file);
    if (!content) cache.set(file, (content = fs.readFileSync(path.join(packageDir(), file))));
    return content;
  };
  const secured = { 'content-security-policy': DOCS_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

  app.get('/docs', async (request, reply) => {
    noExtraInput(request.query, 'GET /docs');
    return reply.headers(secured).type('text/html; charset=utf-8').send(PAGE);
  });

  app.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => {
    const { file } = request.params;
    reply.headers({ ...secured, 'cache-control': 'public, max-age=3600' });
    if (file === 'init.js') return reply.type('text/javascript; charset=utf-8').send(INIT);
    const type = PACKAGE_FILES[file];
    if (!type) {
      throw new MailboxError('NOT_FOUND', 'Not found', `There is no documentation asset '${file}'; open /docs.`, { file });
    }
    return reply.type(type).send(asset(file));
  });
}
