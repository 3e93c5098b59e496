/**
 * GET /docs in a real browser: Debian's chromium driven by playwright-core
 * (no browser download). The page renders the operations from /openapi.json,
 * loads nothing from outside this server, and breaks no rule of its
 * Content-Security-Policy. Skipped, saying so, only when chromium is absent.
 */
import { chromium, type Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/httpServer';
import { CHROMIUM, CHROMIUM_ARGS, haveChromium } from '../support/chromium';

const maybe = haveChromium('docsPage.e2e') ? test : test.skip;

let server: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  // launch(), not a persistent context in a temp dir of ours: Chromium's helper processes could still write into that
  // profile after close(), and the suite's temp-dir cleanup then failed (ENOTEMPTY ... /Default) on a loaded machine.
  // Playwright's own profile is removed once the browser process has exited.
  await browser?.close();
  await server.close();
});

test('/docs is an HTML page with a strict Content-Security-Policy; the JSON stays at /openapi.json', async () => {
  const page = await server.call('GET', '/docs');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  expect(page.body).toContain('/docs/assets/swagger-ui-bundle.js');
  expect(page.body).not.toMatch(/https?:\/\//); // nothing from a CDN
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  const asset = await server.call('GET', '/docs/assets/swagger-ui-bundle.js');
  expect([asset.status, asset.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
  const unknown = await server.call('GET', '/docs/assets/..%2Fpackage.json');
  expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
  expect((await server.call('GET', '/openapi.json')).body.openapi).toBe('3.1.0');
});

maybe(
  'headless chromium renders the operations, loading only from this server, with no CSP violation',
  async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    const outside: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${server.url}/docs`);
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 20_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(
      expect.arrayContaining([
        '/v1/agents',
        '/v1/messages',
        '/v1/messages/{id}/read',
        '/v1/inbox/count',
        '/mcp',
        '/openapi.json',
      ]),
    );
    await expect(page.getByText('Send a direct message (@identity) or a broadcast (AGENT:*)').first().isVisible()).resolves.toBe(
      true,
    );
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  },
  60_000,
);
