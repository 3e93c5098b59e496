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
  const hint = shown.startsWith('AGENT:')
    ? ' AGENT:<name> is not a valid form: only the literal AGENT:* broadcasts.'
    : '';
  return new MailboxError('INVALID_RECIPIENT_SHAPE', 'Invalid recipient shape',
    `Recipient '${shown}' does not match either valid shape. Use AGENT:* for a broadcast or @<identifier> ` +
    `(1-64 of A-Z a-z 0-9 _ -) for a direct message.${hint}`,
    { to, valid_shapes: VALID_RECIPIENT_SHAPES, ...(suggestions.length ? { suggestions } : {}) });
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
