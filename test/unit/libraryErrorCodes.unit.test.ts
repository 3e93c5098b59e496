/**
 * A library user switches on a refusal's `code`; the README's library section said only that a MailboxError has one.
 * Which codes there are, and what each is about, was for the reader to collect from HTTP's and MCP's pages (one of
 * them, CONCURRENCY_CONFLICT, was written nowhere). The section names each code the ErrorCode union holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_STATUS } from '../../src/errors';

const ROOT = path.join(__dirname, '..', '..');

test("the README's library section names every error code a MailboxError can carry", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('<!-- section:library -->'), readme.indexOf('<!-- /section:library -->'));
  const unnamed = Object.keys(ERROR_STATUS).filter((code) => !section.includes(`\`${code}\``));
  expect(unnamed).toEqual([]);
});
