/**
 * GET / in a browser (Accept: text/html) was answered the API's JSON 404 ("There is no route GET /; did you mean GET
 * /healthz or ..."): a person opening the server's address saw raw JSON. Now a browser is sent to the console (302
 * to /console) when it is built, else shown a short page naming the API base (/v1), /docs, /openapi.json and /healthz.
 * Any other client keeps a JSON 404, which now says where the API is (/v1) and where its reference and liveness are,
 * not "did you mean". Nothing is written to the log either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import { consoleDir, consoleRoutes } from '../../src/adapters/http/routes/consoleRoutes';
import { startTestServer, type TestServer } from '../support/httpServer';
import { tempDir } from '../support/fixtures';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

test('a browser at / is sent to the console (built: npm run build)', async () => {
  expect(fs.existsSync(path.join(consoleDir(), 'index.html'))).toBe(true);
  const events = await server.eventCount();
  const root = await fetch(`${server.url}/`, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
  expect([root.status, root.headers.get('location')]).toEqual([302, '/console']);
  const followed = await fetch(`${server.url}/`, { headers: { accept: BROWSER_ACCEPT } });
  expect([followed.status, followed.url, followed.headers.get('content-type')]).toEqual([
    200,
    `${server.url}/console`,
    'text/html; charset=utf-8',
  ]);
  expect(await server.eventCount()).toBe(events);
});

test.each([[undefined], ['application/json'], ['*/*']])(
  'a client that asks no HTML at / (Accept: %s): a JSON 404 naming the API base, /docs, /openapi.json and /healthz',
  async (accept) => {
    const events = await server.eventCount();
    const root = await fetch(`${server.url}/`, accept === undefined ? {} : { headers: { accept } });
    expect([root.status, root.headers.get('content-type')]).toEqual([404, 'application/json; charset=utf-8']);
    expect(await root.json()).toEqual({
      error: 'Not found',
      code: 'NOT_FOUND',
      message:
        "There is no route GET /: this server's API is under /v1. GET /docs lists every route (GET /openapi.json " +
        'describes them), GET /healthz says whether the server is up; GET /console is the operator console, in a browser.',
      method: 'GET',
      path: '/',
      api: '/v1',
      suggestions: ['GET /docs', 'GET /openapi.json', 'GET /healthz', 'GET /console'],
    });
    expect(await server.eventCount()).toBe(events);
  },
);

test('a browser at / where the console is not built: a short page naming /v1, /docs, /openapi.json, /healthz and the remedy', async () => {
  const app = Fastify();
  consoleRoutes(app, tempDir('mailbox-no-console-')); // no index.html there
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const page = await fetch(`${url}/`, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = await page.text();
    const text = body.replace(/<[^>]+>/g, '');
    expect(text).toContain('This is the HTTP API of an agent-mailbox server: its routes are under /v1.');
    for (const link of ['/docs', '/openapi.json', '/healthz']) expect(body).toContain(`<a href="${link}">${link}</a>`);
    expect(text).toContain(
      'The operator console (/console) is not built on this server: run npm run build, then restart the server.',
    );
    // Another client, or another method, is left to the routes (here: none).
    expect((await fetch(`${url}/`, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await fetch(`${url}/`, { method: 'POST', headers: { accept: BROWSER_ACCEPT } })).status).toBe(404);
  } finally {
    await app.close();
  }
});
