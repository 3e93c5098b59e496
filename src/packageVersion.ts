/** This package's version, found from source (ts) and from dist/ alike. */
import fs from 'node:fs';
import path from 'node:path';

export function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'agent-mailbox' && pkg.version) return pkg.version;
  }
  return '0.0.0';
}
