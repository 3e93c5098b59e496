/**
 * A Redis user with `nopass` (the default user of a server without requirepass) accepts any password: an operator who
 * gave the mailbox one (MAILBOX_REDIS_PASSWORD, or redis://:password@host) believed the views protected, and anyone who
 * can reach the port could read and change them. Found without extra rights and without touching the connection's own
 * login: AUTH as the same user with a password nobody has. Redis answers OK only when the user takes any password; a
 * failed AUTH leaves the connection as it was (and adds one 'auth' entry to the server's ACL LOG). A server without
 * ACLs (before Redis 6) answers an error: nothing is said then.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from './redisConnection';

/** Whether `username` (default: 'default') logs in with a password that is surely not its own. */
export async function acceptsAnyPassword(client: RedisClient, username: string | undefined): Promise<boolean> {
  const wrong = `not-the-password-${randomBytes(16).toString('hex')}`;
  const reply = await client.call('AUTH', username || 'default', wrong).catch(() => null);
  return reply === 'OK';
}

/** The warning's words: which Redis, which user, and how to protect it. */
export function anyPasswordWarning(where: string, username: string | undefined): string {
  const user = username || 'default';
  return (
    `${where} accepts any password for its user '${user}' (the user has nopass: ` +
    `${user === 'default' ? 'no requirepass is set' : 'ACL nopass'}): the password the mailbox gives protects ` +
    `nothing, and anyone who reaches the port can read and change the views. Protect it: ` +
    `${user === 'default' ? 'requirepass <password> in redis.conf, or ' : ''}ACL SETUSER ${user} resetpass ><password> ` +
    '(the password the mailbox is given).'
  );
}
