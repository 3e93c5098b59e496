/**
 * Recipient shapes (DESIGN section 2). Validation is by shape only, never by a
 * list of names, and never auto-corrects: a wrong shape is rejected with an
 * error that teaches the two valid forms.
 */
import { MailboxError } from '../errors';
import { closestIdentities } from './suggestions';
import { codePoint } from './printableText';

export const BROADCAST = 'AGENT:*';
export const IDENTITY_PATTERN = /^@[A-Za-z0-9_-]{1,64}$/;

export const VALID_RECIPIENT_SHAPES = [
  'AGENT:* (literal broadcast — the asterisk is required)',
  '@<identifier> (e.g. @neo-gpt; the @ prefix is mandatory)',
];

/** The most identities one `to` list may name (issue 13). */
export const MAX_LIST_RECIPIENTS = 100;

export const VALID_LIST_ENTRY_SHAPE = '@<identifier> (each entry of a list; AGENT:* is sent on its own)';

export type Recipient =
  | { kind: 'broadcast' }
  | { kind: 'direct'; identity: string }
  /** `identities`: each once, in the order given; `repeated`: entries that named an identity already listed. */
  | { kind: 'list'; identities: string[]; repeated: Array<{ index: number; identity: string }> };

export const isIdentity = (value: string): boolean => IDENTITY_PATTERN.test(value);

/**
 * The broadcast written otherwise: another case (agent:*), spaces in or around it (' AGENT:* ', 'AGENT *'), a letter or
 * its colon or asterisk missing or added (AGENTS:*, AGENT*, AGENT:, *, @*), or a word for everyone (AGENT:all, all,
 * everyone). Refused all the same (only the literal AGENT:* broadcasts), but told so, with AGENT:* suggested: the generic
 * message ("Use AGENT:* for a broadcast"), or "AGENT:<name> is not a valid form" for 'AGENT:* ', left a model to spot
 * the difference itself.
 */
export function meantBroadcast(to: string): boolean {
  const unwrapped = withoutWrapping(to);
  if (unwrapped !== null) return unwrapped === BROADCAST || meantBroadcast(unwrapped);
  const squeezed = to.replace(/[\s:@]/g, '').toUpperCase();
  if (['AGENT*', 'AGENTS*', 'AGENT**', '*', 'AGENT', 'AGENTS'].includes(squeezed)) return true;
  return readsLikeBroadcast(to.trim().replace(/^(AGENTS?:|@)/i, ''));
}

/** Pairs that wrap a value: quotes (a JSON-encoded string, a name as prose quotes it), backticks, brackets. */
const WRAPPING: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  '`': '`',
  '<': '>',
  '[': ']',
  '(': ')',
  '{': '}',
  '\u201c': '\u201d',
  '\u2018': '\u2019',
};

/**
 * What a value wrapped in quotes or brackets holds ('"@bob"', the JSON encoding of @bob; "'AGENT:*'", as a refusal
 * quotes it in its prose; '<@bob>', '`@bob`'), without them; null when nothing wraps it (whitespace alone is the
 * identity's own fault). Refused with the two shapes alone, a model saw its @bob and the shape agree, and could not
 * tell what was wrong. Suggested, never taken.
 */
export function withoutWrapping(text: string): string | null {
  let inner = text.trim();
  let unwrapped = false;
  while (inner.length >= 2 && WRAPPING[inner[0]!] === inner[inner.length - 1]) {
    inner = inner.slice(1, -1).trim();
    unwrapped = true;
  }
  return unwrapped ? inner : null;
}

const WRITTEN_ALONE = 'A recipient is written alone, without quotes or brackets around it.';

const BROADCAST_HINT =
  ` Did you mean ${BROADCAST}, the broadcast? It is written exactly so: AGENT in capitals, a colon, an asterisk, ` +
  'nothing before or after.';

/**
 * An identity written without its @ ('bob', ' bob'), or one a known identity is near ('bn' for @ben): "Did you mean
 * @bob?", and the identities meant. The refusal of 'bob' and of ['@bob', 'carol'] named the two valid shapes, and @bob only in its
 * `suggestions`: a model read the message, and guessed.
 */
function identityMeant(written: string, knownIdentities: readonly string[]): { hint: string; meant: string[] } {
  const unwrapped = withoutWrapping(written);
  if (unwrapped !== null && isIdentity(unwrapped))
    return { hint: ` Did you mean ${unwrapped}? ${WRITTEN_ALONE}`, meant: [unwrapped] };
  const near = closestIdentities(written, knownIdentities);
  const withAt = `@${written.trim()}`;
  const missingAt = !written.trim().startsWith('@') && isIdentity(withAt);
  // A registered identity near it first ('bn' for @ben); else the identity it would be with its @ ('dave': @dave).
  const meant = near.length > 0 ? near : missingAt ? [withAt] : [];
  if (meant.length === 0) return { hint: '', meant };
  const atMissing = missingAt && meant.includes(withAt) ? ' The @ is part of the identity.' : '';
  return { hint: ` Did you mean ${meant.join(' or ')}?${atMissing}`, meant };
}

/**
 * `@b,@c`, or `@b, c` with c registered: several identities in one string, some perhaps without their @ (a known
 * identity's); each as an identity, or null when it is not that.
 */
function severalMeant(to: string, knownIdentities: readonly string[]): string[] | null {
  const parts = splitSeveral(to).map((part) => (isIdentity(part) || !knownIdentities.includes(`@${part}`) ? part : `@${part}`));
  return parts.length > 1 && parts.every(isIdentity) ? parts : null;
}

/** The most characters of an identifier, after its @. */
export const MAX_IDENTIFIER_CHARS = 64;

const IDENTIFIER_CHARACTER = /[A-Za-z0-9_-]/;

const characterNamed = (character: string): string =>
  character === ' '
    ? 'a space'
    : /^[\x21-\x7e]$/.test(character)
      ? `'${character}'`
      : /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(character)
        ? `'${character}' (${codePoint(character)})`
        : codePoint(character);

/**
 * What is wrong with text that begins with its @ but is no identity, in one sentence: nothing after the @, too long
 * (with its length), or the first character an identifier does not take (with its index). The refusal named the form
 * alone ("1-64 of A-Z a-z 0-9 _ -"), and a model had to find by itself the '.' of '@bob.smith' or count the 70
 * characters of a long name. A clause ("it holds '.' at index 4, ..."), or '' when the text does not begin with @ (its
 * own hint says so) or is an identity.
 */
export function identityFault(text: string): string {
  if (!text.startsWith('@')) return '';
  const identifier = text.slice(1);
  const characters = [...identifier];
  if (characters.length === 0) return 'nothing follows the @: an identifier is 1-64 characters';
  const index = characters.findIndex((character) => !IDENTIFIER_CHARACTER.test(character));
  if (index >= 0) {
    const at = 1 + characters.slice(0, index).join('').length;
    return `it holds ${characterNamed(characters[index]!)} at index ${at}, which no identifier takes`;
  }
  if (characters.length > MAX_IDENTIFIER_CHARS) {
    return `it has ${characters.length} characters after the @; an identifier has at most ${MAX_IDENTIFIER_CHARS}`;
  }
  return '';
}

/** identityFault as a sentence of its own, after another: ' It holds ... takes.', or ''. */
const faultSentence = (value: unknown): string => {
  const fault = typeof value === 'string' ? identityFault(value) : '';
  return fault ? ` ${fault[0]!.toUpperCase()}${fault.slice(1)}.` : '';
};

/** Most characters of a refused recipient the message repeats ('to' holds it whole): a 100 KB one was said twice. */
const SHOWN_RECIPIENT_CHARS = 80;

/** `text` quoted (`quote`), cut to its first SHOWN_RECIPIENT_CHARS characters when longer, saying so. */
const shownRecipient = (text: string, quote: string): string =>
  text.length <= SHOWN_RECIPIENT_CHARS
    ? `${quote}${text}${quote}`
    : `${quote}${text.slice(0, SHOWN_RECIPIENT_CHARS)}...${quote} (${text.length} characters, the first ${SHOWN_RECIPIENT_CHARS} shown)`;

export function invalidRecipientShape(to: unknown, knownIdentities: readonly string[] = []): MailboxError {
  const shown = typeof to === 'string' ? to : (JSON.stringify(to) ?? String(to)); // undefined stringifies to undefined
  const broadcast = typeof to === 'string' && meantBroadcast(to);
  const several = typeof to === 'string' ? severalMeant(to, knownIdentities) : null;
  const identity = typeof to === 'string' && !broadcast && several === null ? identityMeant(to, knownIdentities) : null;
  const near = typeof to === 'string' ? closestIdentities(to, knownIdentities) : [];
  const suggestions = broadcast ? [BROADCAST, ...near] : (identity?.meant ?? near);
  const hint = broadcast
    ? BROADCAST_HINT
    : shown.startsWith('AGENT:')
      ? ' AGENT:<name> is not a valid form: only the literal AGENT:* broadcasts.'
      : several !== null
        ? ` To write to several identities, give 'to' as a list: ${JSON.stringify(several)} (text is never split).`
        : `${faultSentence(to)}${identity?.hint ?? ''}`;
  return new MailboxError(
    'INVALID_RECIPIENT_SHAPE',
    'Invalid recipient shape',
    `Recipient ${shownRecipient(shown, "'")} does not match either valid shape. Use AGENT:* for a broadcast or @<identifier> ` +
      `(1-64 of A-Z a-z 0-9 _ -) for a direct message.${hint}`,
    { to, valid_shapes: VALID_RECIPIENT_SHAPES, ...(suggestions.length ? { suggestions } : {}) },
  );
}

/** The parts of a recipient written as several (`@b,@c`, `@b, @c`, `@b @c`, `@b;@c`). */
export const splitSeveral = (to: string): string[] => to.split(/[\s,;]+/).filter(Boolean);

/** `@b,@c`, `@b, @c` or `@b @c`: several identities written as one string. */
export const readsLikeSeveral = (to: string): boolean => {
  const parts = splitSeveral(to);
  return parts.length > 1 && parts.every(isIdentity);
};

/**
 * A refused list entry as its error's `entry`: whole when its text (the string, or another value's JSON) is at most
 * SHOWN_RECIPIENT_CHARS characters; a longer one cut as the message cuts it, its first characters then '...', with
 * `entryLength` (`to` holds it whole at `index`). A 50,000-character entry was in the answer whole twice, `to` and `entry`.
 */
function entryField(entry: unknown): { entry: unknown; entryLength?: number } {
  const text = typeof entry === 'string' ? entry : (JSON.stringify(entry) ?? String(entry));
  return text.length <= SHOWN_RECIPIENT_CHARS
    ? { entry }
    : { entry: `${text.slice(0, SHOWN_RECIPIENT_CHARS)}...`, entryLength: text.length };
}

/** One entry of a list `to` that is not an identity: named by its index, with what a list entry may be. */
function invalidListEntry(list: readonly unknown[], index: number, knownIdentities: readonly string[]): MailboxError {
  const entry = list[index];
  const shown =
    typeof entry === 'string' ? shownRecipient(entry, "'") : shownRecipient(JSON.stringify(entry) ?? String(entry), '');
  const broadcast = typeof entry === 'string' && entry !== BROADCAST && meantBroadcast(entry);
  const identity = typeof entry === 'string' && !broadcast ? identityMeant(entry, knownIdentities) : null;
  const suggestions = broadcast ? [BROADCAST] : (identity?.meant ?? []);
  const why =
    entry === BROADCAST
      ? `AGENT:* cannot be one entry of a list: it already means every active agent. Send the broadcast on its own ` +
        `(to: 'AGENT:*'), or list only @<identifier> entries.`
      : `A list holds @<identifier> entries only (1-64 of A-Z a-z 0-9 _ -, e.g. @neo-gpt).` +
        (broadcast
          ? ` For every agent, send to: 'AGENT:*' on its own (not in a list): the broadcast is written exactly so.`
          : typeof entry === 'string' && entry.startsWith('AGENT:')
            ? ' AGENT:<name> is not a valid form.'
            : `${faultSentence(entry)}${identity?.hint ?? ''}`);
  return new MailboxError(
    'INVALID_RECIPIENT_SHAPE',
    'Invalid recipient shape',
    `Recipient to[${index}] is ${shown}, which is not a valid list entry. ${why} Nothing was sent.`,
    {
      to: list,
      index,
      ...entryField(entry),
      valid_shapes: [...VALID_RECIPIENT_SHAPES, VALID_LIST_ENTRY_SHAPE],
      ...(suggestions.length ? { suggestions } : {}),
    },
  );
}

function parseRecipientList(list: readonly unknown[], knownIdentities: () => readonly string[]): Recipient | MailboxError {
  if (list.length === 0 || list.length > MAX_LIST_RECIPIENTS) {
    return new MailboxError(
      'INVALID_RECIPIENT_SHAPE',
      'Invalid recipient shape',
      `A 'to' list names 1 to ${MAX_LIST_RECIPIENTS} identities; this one has ${list.length}. ` +
        (list.length === 0 ? 'Name at least one @<identifier>.' : 'Split it into several sends, or broadcast to AGENT:*.'),
      {
        to: list,
        count: list.length,
        limit: MAX_LIST_RECIPIENTS,
        valid_shapes: [...VALID_RECIPIENT_SHAPES, VALID_LIST_ENTRY_SHAPE],
      },
    );
  }
  const identities: string[] = [];
  const seen = new Set<string>();
  const repeated: Array<{ index: number; identity: string }> = [];
  for (let index = 0; index < list.length; index++) {
    const entry = list[index];
    if (typeof entry !== 'string' || !isIdentity(entry)) return invalidListEntry(list, index, knownIdentities());
    if (seen.has(entry)) repeated.push({ index, identity: entry });
    else {
      seen.add(entry);
      identities.push(entry);
    }
  }
  return { kind: 'list', identities, repeated };
}

/**
 * Parses `to` by shape: one identity, the literal broadcast, or a list of identities; the known
 * identities only feed suggestions, never acceptance, so they are asked for (lazily) only when a shape is wrong.
 */
export function parseRecipient(to: unknown, knownIdentities: () => readonly string[] = () => []): Recipient | MailboxError {
  if (to === BROADCAST) return { kind: 'broadcast' };
  if (typeof to === 'string' && isIdentity(to)) return { kind: 'direct', identity: to };
  if (Array.isArray(to)) return parseRecipientList(to, knownIdentities);
  return invalidRecipientShape(to, knownIdentities());
}

/** The identities a recipient names (none for the broadcast, whose audience is the registry's). */
export const namedIdentities = (recipient: Recipient): string[] =>
  recipient.kind === 'direct' ? [recipient.identity] : recipient.kind === 'list' ? recipient.identities : [];

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
  // The agents near it, in words: they were in `suggestions` alone, and a model that read the message (@bobb "is not a
  // registered agent: it will see this message only if an agent registers under that name") resent nothing to @bob.
  const end = nearMatches.length > 0 ? `; did you mean ${nearMatches.join(' or ')}?` : '.';
  if (known?.retiredAt) {
    return {
      code: 'RETIRED_RECIPIENT',
      suggestions: [...nearMatches],
      sentence:
        `${identity} was retired at ${known.retiredAt}${outcome === 'stored' ? ' and will never read it' : ''} (identities are never reused); ` +
        `list_agents (GET /v1/agents) lists the active agents${end}`,
    };
  }
  if (known) {
    return {
      code: 'UNREGISTERED_RECIPIENT',
      suggestions: [...nearMatches],
      sentence: `${identity} is registered as ${known.role === 'auditor' ? 'an auditor' : known.role}, not as an agent: it has no inbox; list_agents (GET /v1/agents) lists the agents${end}`,
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
      `list_agents (GET /v1/agents) lists the agents${end}`,
  };
}
