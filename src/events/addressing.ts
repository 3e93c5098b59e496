/**
 * What a message's `to` says about its delivery (storedShapes.ts: addresseeV1). A direct message and
 * a list of identities name their recipients and are delivered by the MessageSent itself (one event,
 * however many are listed); a broadcast (AGENT:*) is delivered per recipient, one BroadcastDelivered each.
 */
import type { MessageSent } from './types';

export type Addressee = MessageSent['data']['to'];

export const BROADCAST_ADDRESS = 'AGENT:*';

/** The one recipient of a direct message; null for a broadcast or a list. */
export const directRecipient = (to: Addressee): string | null => (typeof to === 'string' && !to.startsWith('AGENT:') ? to : null);

export const isBroadcastAddress = (to: Addressee): boolean => typeof to === 'string' && to.startsWith('AGENT:');

/** The recipients `to` names: the one of a direct message, each of a list; none for a broadcast (its audience is the registry's). */
export const namedRecipients = (to: Addressee): readonly string[] =>
  typeof to === 'string' ? (to.startsWith('AGENT:') ? [] : [to]) : to;

/** `to` as one line of text (audit, CLI): a list's identities joined by ", ". */
export const addresseeText = (to: Addressee): string => (typeof to === 'string' ? to : to.join(', '));

/** Whether a message addressed to `to` is addressed to `identity` by name (a list or a direct message naming it). */
export const namesRecipient = (to: Addressee, identity: string): boolean =>
  typeof to === 'string' ? to === identity : to.includes(identity);
