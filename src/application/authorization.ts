/** Least privilege: each operation names the roles it allows. */
import { MailboxError } from '../errors';
import type { Actor, Role } from '../commands/roles';

export function requireRole(actor: Actor, allowed: readonly Role[], action: string): void {
  if (allowed.includes(actor.role)) return;
  const yours = actor.role === 'admin' ? 'the admin token' : `${actor.role} ${actor.identity}`;
  const next = nextStep(actor.role, allowed);
  throw new MailboxError(
    'FORBIDDEN',
    'Forbidden',
    `${action} needs the ${allowed.join(' or ')} role; your token is ${yours}.${next ? ` ${next}` : ''}`,
    { requiredRoles: allowed, role: actor.role },
  );
}

/**
 * What the caller's role does instead, and which token does this: the refusal named the role needed and the one held,
 * and left an auditor that tried to send, an agent that asked for the log, or the admin that acted as an agent to
 * guess the rest; an agent refused an admin's command (POST /v1/agents) was not told that the admin token does it, nor
 * where that token is. (The CLI also says where the token it sent came from: asAdmin.)
 */
function nextStep(role: Role, allowed: readonly Role[]): string | null {
  if (role === 'auditor')
    return (
      'An auditor reads everything and changes nothing: the log (GET /v1/audit/events, mailbox audit replay), any ' +
      'message (GET /v1/messages/{id}) and its delivery (GET /v1/messages/{id}/delivery). ' +
      (allowed.includes('agent') ? 'This is done with the token of the agent it is for.' : 'This is done with the admin token.')
    );
  if (role === 'agent' && allowed.includes('auditor'))
    return (
      "An agent reads its own mail; the log and the mailbox's views are read with an auditor's token (the admin " +
      'registers one: POST /v1/agents {"identity": "@ops", "role": "auditor"}, or mailbox agent add @ops --role ' +
      'auditor) or the admin token.'
    );
  if (role === 'agent' && !allowed.includes('agent'))
    return (
      "No agent's token does this: it is done with the admin token, which whoever runs the mailbox holds (their " +
      'MAILBOX_ADMIN_TOKEN, or the one the server generated at its first start, printed once and kept in its data ' +
      'directory as admin.token: $MAILBOX_DATA_DIR/admin.token, ./data/admin.token by default). Ask them to do it.'
    );
  if (role === 'admin' && allowed.includes('agent'))
    return (
      'The admin token acts as no agent: this is done with the token of the agent it is for (shown once when it was ' +
      'registered; POST /v1/agents/{identity}/token issues a new one).'
    );
  return null;
}
