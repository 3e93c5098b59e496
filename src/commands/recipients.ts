/**
 * Recipient shapes (DESIGN section 2). Validation is by shape only, never by a
 * list of names, and never auto-corrects: a wrong shape is rejected with an
 * error that teaches the two valid forms.
 */
import { MailboxError } from '../errors';
import { closestIdentities } from './suggestions';

export const BROADCAST = 'AGENT:*';
export const IDENTITY_PATTERN = /^@[A-Za-z0-9_-]{1,64}$/;

export const VALID_RECIPIENT_SHAPES = [
  'AGENT:* (literal broadcast — the asterisk is required)',
  '@<identifier> (e.g. @neo-gpt; the @ prefix is mandatory)',
];

export type Recipient = { kind: 'broadcast' } | { kind: 'direct'; identity: string };

export const isIdentity = (value: string): boolean => IDENTITY_PATTERN.test(value);

export function invalidRecipientShape(to: unknown, knownIdentities: readonly string[] = []): MailboxError {
  const shown = typeof to === 'string' ? to : (JSON.stringify(to) ?? String(to)); // undefined stringifies to undefined
  const suggestions = typeof to === 'string' ? closestIdentities(to, knownIdentities) : [];
  const hint = shown.startsWith('AGENT:') ? ' AGENT:<name> is not a valid form: only the literal AGENT:* broadcasts.' : '';
  return new MailboxError(
    'INVALID_RECIPIENT_SHAPE',
    'Invalid recipient shape',
    `Recipient '${shown}' does not match either valid shape. Use AGENT:* for a broadcast or @<identifier> ` +
      `(1-64 of A-Z a-z 0-9 _ -) for a direct message.${hint}`,
    { to, valid_shapes: VALID_RECIPIENT_SHAPES, ...(suggestions.length ? { suggestions } : {}) },
  );
}

/**
 * Parses `to` by shape; the known identities only feed suggestions, never
 * acceptance, so they are asked for (lazily) only when the shape is wrong.
 */
export function parseRecipient(to: unknown, knownIdentities: () => readonly string[] = () => []): Recipient | MailboxError {
  if (to === BROADCAST) return { kind: 'broadcast' };
  if (typeof to === 'string' && isIdentity(to)) return { kind: 'direct', identity: to };
  return invalidRecipientShape(to, knownIdentities());
}

/** Names people use for "everyone"; sent to one of them, the caller most likely meant the broadcast. */
const BROADCAST_LIKE_NAMES = new Set([
  'all',
  'everyone',
  'everybody',
  'channel',
  'here',
  'broadcast',
  'agents',
  'allagents',
  'team',
  'anyone',
  'world',
]);

export const readsLikeBroadcast = (identity: string): boolean =>
  BROADCAST_LIKE_NAMES.has(identity.replace(/^@/, '').replace(/[-_]/g, '').toLowerCase());

/** Why a shape-valid direct recipient is not an active agent, in one sentence that says what to do instead. */
export type InactiveRecipient = { code: 'RETIRED_RECIPIENT' | 'UNREGISTERED_RECIPIENT'; sentence: string; suggestions: string[] };

export function inactiveRecipient(
  identity: string,
  known: { role: string; retiredAt: string | null } | undefined,
  nearMatches: readonly string[],
  outcome: 'stored' | 'refused',
): InactiveRecipient {
  if (known?.retiredAt) {
    return {
      code: 'RETIRED_RECIPIENT',
      suggestions: [...nearMatches],
      sentence:
        `${identity} was retired at ${known.retiredAt}${outcome === 'stored' ? ' and will never read it' : ''} (identities are never reused); ` +
        'GET /v1/agents lists the active agents.',
    };
  }
  if (known) {
    return {
      code: 'UNREGISTERED_RECIPIENT',
      suggestions: [...nearMatches],
      sentence: `${identity} is registered as ${known.role === 'auditor' ? 'an auditor' : known.role}, not as an agent: it has no inbox; GET /v1/agents lists the agents.`,
    };
  }
  if (readsLikeBroadcast(identity)) {
    return {
      code: 'UNREGISTERED_RECIPIENT',
      suggestions: [BROADCAST, ...nearMatches],
      sentence: `${identity} is not a registered agent, and not a broadcast: to write to every agent, send to ${BROADCAST} (quote it in a shell: '${BROADCAST}').`,
    };
  }
  return {
    code: 'UNREGISTERED_RECIPIENT',
    suggestions: [...nearMatches],
    sentence:
      `${identity} is not a registered agent${outcome === 'stored' ? ': it will see this message only if an agent registers under that name' : ''}; ` +
      'GET /v1/agents lists the agents.',
  };
}
