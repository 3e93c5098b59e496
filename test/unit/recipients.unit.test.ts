/** Recipient shapes (DESIGN section 2) and near-match suggestions: by shape only, never auto-corrected. */
import { MailboxError } from '../../src/errors';
import { parseRecipient, VALID_RECIPIENT_SHAPES } from '../../src/commands/recipients';
import { closestIdentities, editDistance } from '../../src/commands/suggestions';

const REJECTED = [
  'AGENT:gpt',
  'BROADCAST:*',
  'neo-gpt',
  '@',
  '@a b',
  'agent:*',
  `@${'x'.repeat(65)}`,
  '',
  ' @neo-gpt',
  '@neo-gpt ',
  'AGENT:**',
  '@neo.gpt',
  '@neo/gpt',
  '@@neo',
  'Agent:*',
];

describe('parseRecipient', () => {
  it.each(['@neo-gpt', '@other-client-agent-foo_42', `@${'x'.repeat(64)}`, '@a', '@A_1-b'])('accepts the identity %j', (to) => {
    expect(parseRecipient(to)).toEqual({ kind: 'direct', identity: to });
  });

  it('accepts the literal broadcast AGENT:*', () => {
    expect(parseRecipient('AGENT:*')).toEqual({ kind: 'broadcast' });
  });

  it.each(REJECTED)('rejects %j with INVALID_RECIPIENT_SHAPE listing both valid shapes', (to) => {
    const result = parseRecipient(to, () => ['@neo-gpt']);
    expect(result).toBeInstanceOf(MailboxError);
    const { envelope, status } = result as MailboxError;
    expect(status).toBe(400);
    expect(envelope).toMatchObject({
      error: 'Invalid recipient shape',
      code: 'INVALID_RECIPIENT_SHAPE',
      to,
      valid_shapes: VALID_RECIPIENT_SHAPES,
    });
    expect(envelope.message).toContain(`'${to}'`);
    expect(envelope.message).toMatch(/AGENT:\*/);
  });

  // The broadcast spelled otherwise was told only "Use AGENT:* for a broadcast" (or, for 'AGENT:* ', that AGENT:<name>
  // is no valid form): it is still refused, never corrected, and now said to mean AGENT:*, which is suggested.
  it.each([
    'agent:*',
    'Agent:*',
    ' AGENT:* ',
    'AGENT:* ',
    'AGENT *',
    'AGENT: *',
    'AGENTS:*',
    'AGENT*',
    'AGENT:',
    'AGENT:**',
    '*',
    '@*',
    'AGENT:all',
    'AGENT:ALL',
    'all',
    'everyone',
  ])('rejects %j, the broadcast spelled otherwise, suggesting AGENT:*', (to) => {
    const { envelope } = parseRecipient(to, () => ['@neo-gpt', '@all-hands']) as MailboxError;
    expect(envelope).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to, suggestions: expect.arrayContaining(['AGENT:*']) });
    expect((envelope.suggestions as string[])[0]).toBe('AGENT:*');
    expect(envelope.message).toContain('Did you mean AGENT:*, the broadcast? It is written exactly so');
    expect(envelope.message).not.toContain('AGENT:<name>');
  });

  it.each(['AGENT:gpt', 'neo-gpt', 'agent:gpt', '@neo.gpt'])('does not take %j for the broadcast', (to) => {
    const { envelope } = parseRecipient(to, () => ['@neo-gpt']) as MailboxError;
    expect(envelope.message).not.toContain('Did you mean AGENT:*');
    expect(envelope.suggestions ?? []).not.toContain('AGENT:*');
  });

  it('rejects non-strings without crashing', () => {
    for (const to of [null, undefined, 42, [42], ['AGENT:*'], [], { identity: '@a' }]) {
      expect((parseRecipient(to) as MailboxError).code).toBe('INVALID_RECIPIENT_SHAPE');
    }
  });

  it('accepts a list of identities, each once, remembering the repeats', () => {
    expect(parseRecipient(['@b', '@c', '@b'])).toEqual({
      kind: 'list',
      identities: ['@b', '@c'],
      repeated: [{ index: 2, identity: '@b' }],
    });
  });

  it('never auto-corrects: AGENT:gpt is rejected even when @neo-gpt exists, and the error suggests it', () => {
    const result = parseRecipient('AGENT:gpt', () => ['@neo-gpt', '@claude']) as MailboxError;
    expect(result.envelope).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to: 'AGENT:gpt', suggestions: ['@neo-gpt'] });
    expect(result.message).toMatch(/only the literal AGENT:\* broadcasts/);
  });

  it('neo-gpt (missing @) suggests @neo-gpt but is still rejected', () => {
    const result = parseRecipient('neo-gpt', () => ['@neo-gpt']) as MailboxError;
    expect(result.envelope).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', suggestions: ['@neo-gpt'] });
  });

  it('validation is by shape: an unregistered but well-formed identity is accepted', () => {
    expect(parseRecipient('@nobody-registered-this', () => [])).toEqual({ kind: 'direct', identity: '@nobody-registered-this' });
  });
});

describe('closestIdentities', () => {
  const known = ['@neo-gpt', '@claude-opus', '@gemini', '@other-client-agent-foo_42'];

  it('AGENT:gpt with @neo-gpt registered suggests it (whole segment match)', () => {
    expect(closestIdentities('AGENT:gpt', known)).toEqual(['@neo-gpt']);
  });

  it('small typos are within edit distance', () => {
    expect(closestIdentities('@neo-gtp', known)).toEqual(['@neo-gpt']);
    expect(closestIdentities('@Gemini', known)).toEqual(['@gemini']);
    expect(closestIdentities('@claude', known)).toEqual(['@claude-opus']);
  });

  it('unrelated names and the broadcast get no suggestions', () => {
    expect(closestIdentities('@zebra-crossing', known)).toEqual([]);
    expect(closestIdentities('AGENT:*', known)).toEqual([]);
    expect(closestIdentities('@', known)).toEqual([]);
  });

  it('returns at most three, closest first', () => {
    const many = ['@bot-1', '@bot-2', '@bot-3', '@bot-4', '@bots'];
    expect(closestIdentities('@bot', many)).toHaveLength(3);
    expect(closestIdentities('@abcdefghi', ['@abcdefxyz', '@abcdefghx', '@abcdefgyz', '@zzzzzzzzz'])).toEqual([
      '@abcdefghx',
      '@abcdefgyz',
      '@abcdefxyz',
    ]);
  });

  it('editDistance is the optimal string alignment distance: a swap of adjacent letters is one edit', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('gpt', 'gpt')).toBe(0);
    // Levenshtein counted each of these swaps as two edits.
    expect(editDistance('alcie', 'alice')).toBe(1);
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('abcd', 'badc')).toBe(2);
    // Optimal string alignment edits no substring twice: 'ca' -> 'abc' is 3 (true Damerau would say 2).
    expect(editDistance('ca', 'abc')).toBe(3);
  });

  it('a transposed identity (@alcie) suggests the registered one (@alice)', () => {
    expect(closestIdentities('@alcie', ['@alice', '@bob', '@carol'])).toEqual(['@alice']);
    expect(closestIdentities('@bbo', ['@alice', '@bob', '@carol'])).toEqual(['@bob']);
  });
});
