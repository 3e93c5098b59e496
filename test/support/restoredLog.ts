/**
 * A SQLite log restored from an older backup beside views on Redis that stand ahead of it: the backup was taken after
 * @a, @b and @c registered; the views also hold @d and @e, registered after it. What a heartbeat (or a server) started
 * on such a data dir must refuse.
 */
import fs from 'node:fs';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents } from './fixtures';

/** Makes the restored log in `dir` beside the views in `namespace` on `redisUrl`; returns the environment naming them. */
export async function restoredLogBesideRedisViews(
  dir: string,
  redisUrl: string,
  namespace: string,
): Promise<Record<string, string>> {
  const config = { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' as const, redisUrl, redisNamespace: namespace };
  const open = () => createMailbox(config, { logger: pino({ level: 'silent' }) });
  let mailbox = await open();
  await registerAgents(mailbox, ['@a', '@b', '@c']);
  await mailbox.close();
  fs.copyFileSync(`${dir}/events.sqlite`, `${dir}/backup.sqlite`);
  mailbox = await open();
  await registerAgents(mailbox, ['@d', '@e']);
  await mailbox.close();
  fs.copyFileSync(`${dir}/backup.sqlite`, `${dir}/events.sqlite`); // the log restored from the backup; the views stay
  return { MAILBOX_DATA_DIR: dir, MAILBOX_REDIS_URL: redisUrl, MAILBOX_REDIS_NAMESPACE: namespace };
}
