/** Least privilege: each operation names the roles it allows. */
import { MailboxError } from '../errors';
import type { Actor, Role } from '../commands/roles';

export function requireRole(actor: Actor, allowed: readonly Role[], action: string): void {
  if (allowed.includes(actor.role)) return;
  throw new MailboxError(
    'FORBIDDEN',
    'Forbidden',
    `${action} needs the ${allowed.join(' or ')} role; your token is ${actor.role === 'admin' ? 'the admin token' : `${actor.role} ${actor.identity}`}.`,
    { requiredRoles: allowed, role: actor.role },
  );
}
