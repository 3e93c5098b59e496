/**
 * Debian's chromium for browser tests (driven by playwright-core; never a browser
 * download), with the flags CI runs it with: headless, no sandbox (root in CI),
 * and nothing that reaches out on its own (updates, sync, background networking).
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { MailboxConfigInput } from '../../src/config';
import type { ContainerOverrides } from '../../src/compositionRoot';
import { startTestServer, type TestServer } from './httpServer';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** True when chromium is installed; otherwise says on stderr that `what` is skipped and how to install it. */
export function haveChromium(what: string): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  process.stderr.write(`${what}: SKIPPED: ${CHROMIUM} is absent (Debian: apt-get install -y chromium; .ci/run installs it)\n`);
  return false;
}

/** One console test file's server and browser: see useConsoleBrowser. */
export interface ConsoleBrowser {
  /** The file's server, started before its tests (closed after them). */
  readonly server: TestServer;
  /** The file's chromium, launched before its tests (closed after them, before the server). */
  readonly browser: Browser;
  /** `test`, or `test.skip` when chromium is absent (haveChromium has said so). */
  readonly maybe: jest.It;
  /**
   * Opens /console in `page` and signs in with `token` (the sign-in's answer is the caller's to wait for); at `url`, the
   * server's by default (a relay in front of it).
   */
  signIn(page: Page, token: string, url?: string): Promise<void>;
  /** A new page signed in with `token`, returned once the live flow (the first panel) says it is live. */
  openLive(token: string): Promise<Page>;
  /** Runs `close` after the browser is closed and before the server is (a relay, a second listener on the mailbox). */
  closing(close: () => unknown): void;
}

/**
 * The set-up every console test file shares: registers a beforeAll that starts a test server (`config`, `overrides` as
 * startTestServer takes them) and launches chromium (only when it is installed; the server starts either way), and an
 * afterAll that closes the browser, then what `closing` was given, then the server. Call it at the top of the file.
 */
export function useConsoleBrowser(
  what: string,
  config: MailboxConfigInput = {},
  overrides: ContainerOverrides = {},
): ConsoleBrowser {
  const present = haveChromium(what);
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  const closings: Array<() => unknown> = [];
  beforeAll(async () => {
    server = await startTestServer(config, overrides);
    if (present) browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    for (const close of closings) await close();
    await server?.close();
  });
  const fixture: ConsoleBrowser = {
    get server() {
      if (!server) throw new Error(`${what}: the server is started in beforeAll; read it inside a test`);
      return server;
    },
    get browser() {
      if (!browser) throw new Error(`${what}: chromium is launched in beforeAll, and only when ${CHROMIUM} is present`);
      return browser;
    },
    maybe: present ? test : test.skip,
    async signIn(page, token, url = fixture.server.url) {
      await page.goto(`${url}/console`);
      await page.getByLabel('Admin or auditor token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
    },
    async openLive(token) {
      const page = await fixture.browser.newPage();
      await fixture.signIn(page, token);
      await page.getByTestId('flow-status').getByText('Stream: live').waitFor();
      return page;
    },
    closing(close) {
      closings.push(close);
    },
  };
  return fixture;
}
