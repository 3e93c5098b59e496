/**
 * The stored form of an inbox entry (the recipient's copy) and of a sent
 * message's summary (the sender's outbox entry, in its `sent` hash):
 *
 *   <position>|<priority>|<sentAt>|<from>|<to>|<threadId>|<tags>|<json>
 *
 * The head carries everything the scripts read or filter on, so that no script
 * ever decodes user JSON (a deeply nested task once made every tags= listing
 * fail: issue 10, defect 4) and no invariant depends on JSON key order.
 * from, to, threadId and each tag are escaped (`%` `|` `,` as %25 %7C %2C), so
 * they never contain the separators; tags are each followed by a comma
 * (`ops,review,`; none: empty). A `to` that is a list of identities is stored
 * the same way (`@b,@c,`), so that a `to` holding a comma is a list: one
 * identity and AGENT:* never hold one. A script compares escaped forms: equal escaped
 * strings are equal strings. Position, priority and sentAt never hold `|`.
 */
const HEAD_FIELDS = 7;

export const escapeField = (text: string): string =>
  /[%|,]/.test(text) ? text.replace(/%/g, '%25').replace(/\|/g, '%7C').replace(/,/g, '%2C') : text;

export interface StoredHead {
  priority: string;
  sentAt: string;
  from: string;
  to: string | readonly string[];
  threadId: string;
  tags: readonly string[];
}

export function storedValue(position: string, head: StoredHead, json: string): string {
  let tags = '';
  for (const tag of head.tags) tags += `${escapeField(tag)},`;
  let to = '';
  if (typeof head.to === 'string') to = escapeField(head.to);
  else for (const identity of head.to) to += `${escapeField(identity)},`;
  return (
    `${position}|${head.priority}|${head.sentAt}|${escapeField(head.from)}|${to}|` +
    `${escapeField(head.threadId)}|${tags}|${json}`
  );
}

/** The position and the JSON of a stored value (the head's fields are in the JSON too). */
export function parseStoredValue(value: string): { position: bigint; json: string } {
  const first = value.indexOf('|');
  let bar = first;
  for (let n = 1; n < HEAD_FIELDS; n++) bar = value.indexOf('|', bar + 1);
  return { position: BigInt(value.slice(0, first)), json: value.slice(bar + 1) };
}
