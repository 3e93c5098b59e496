/**
 * Key layout of the Redis projections.
 *
 *   <ns>:{<ns>}:active               the active generation's prefix (blue/green pointer)
 *   <ns>:{<ns>}:generation           counter for new generation numbers
 *   <ns>:{<ns>}:fence                a rebuild about to switch holds live appliers briefly (expires)
 *   <ns>:{<ns>}:writer               the log whose projector is live on these views (expires unless renewed)
 *   <ns>:{<ns>}:building             generations a rebuild began and did not finish (switched to or dropped), or
 *                                    switched away from and is to delete
 *   <ns>:{<ns>}:building:<prefix>    a rebuild is building that generation now (expires unless renewed)
 *   <ns>:{<ns>}:dropping:<prefix>    a rebuild deletes that generation, switched away from, after its grace (expires)
 *   <ns>:v<N>:{<ns>}:checkpoint      generation N: global checkpoint (20-digit, zero-padded)
 *   <ns>:v<N>:{<ns>}:log             the identity of the log generation N was built from (set once)
 *   <ns>:v<N>:{<ns>}:rules           the version of the rules that built generation N (set once; absent: 1)
 *   <ns>:v<N>:{<ns>}:agents|retired|identities   registry views and every identity with views
 *   <ns>:v<N>:{@b}:inbox|unread|outbox   lex-ordered sets of `<position>:<messageId>`
 *   <ns>:v<N>:{@b}:entries|read|archived|seen  @b's inbox entries, receipts, archive and seen marks by message id
 *   <ns>:v<N>:{@b}:sent                  summaries of the messages @b sent (its outbox entries too)
 *   <ns>:v<N>:{@b}:counts                unread by priority, unseen and last activity
 *   <ns>:v<N>:{@b}:applied               Cluster only: the last position whose changes were applied to @b's keys
 *   <ns>:wake:@b                     pub/sub channel of @b's wake events (not versioned)
 *   <ns>:rate:{@b}                   @b's request token bucket, shared by every API node (not versioned)
 *   <ns>:streams:{@b}                @b's open wake streams on every API node, by lease expiry (not versioned)
 *
 * Redis Cluster: a key's slot is the hash of its first {...}. Every agent's keys
 * share the tag {@b}; the pointer, counter and every generation's global keys share
 * {<ns>}. An event that touches several agents (sender and recipient) is one
 * script on a single node (the default: the whole chunk and its checkpoint
 * commit together). For Cluster the same script is called once per hash tag, so
 * each call stays within one slot, and the global tag (with the checkpoint) is
 * called last (see redisApplyPlan.ts). Each agent's keys keep the last position
 * applied to them (`applied`), and an agent's call changes nothing at or below
 * it: a crash between the calls re-applies the chunk, which changes nothing
 * twice, and a deposed writer's late call cannot re-apply an archive or an
 * unarchive over a later one (most changes are idempotent on their own: an entry
 * or receipt is written only if absent, counters move only when a message really
 * enters or leaves the unread set, activity only ever moves forward; those two
 * are not). Pub/sub channels are not keys: PUBLISH from
 * a script reaches subscribers on every node.
 */

export const POSITION_WIDTH = 20; // 2^64 - 1 has 20 digits

/** Positions travel and compare as fixed-width strings: exact beyond 2^53, ordered bytewise. */
export function padPosition(position: bigint): string {
  if (position < 0n) throw new Error(`Log position ${position} is negative`);
  const text = position.toString();
  if (text.length > POSITION_WIDTH) throw new Error(`Log position ${text} is wider than ${POSITION_WIDTH} digits`);
  return text.padStart(POSITION_WIDTH, '0');
}

export const parsePosition = (padded: string | null | undefined): bigint | null =>
  padded === null || padded === undefined || padded === '' ? null : BigInt(padded);

const NAMESPACE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** An agent's keys (the apply script derives the same names from the inbox key). */
export type AgentKeyName =
  'inbox' | 'unread' | 'outbox' | 'entries' | 'read' | 'archived' | 'seen' | 'counts' | 'sent' | 'applied';

export class RedisKeys {
  constructor(readonly namespace: string) {
    if (!NAMESPACE_PATTERN.test(namespace)) {
      throw new Error(`Redis key namespace '${namespace}' must be 1..64 of [A-Za-z0-9_-]`);
    }
  }

  get globalTag(): string {
    return `{${this.namespace}}`;
  }

  get active(): string {
    return `${this.namespace}:${this.globalTag}:active`;
  }

  /** While it exists, live appliers wait: a rebuild is meeting their checkpoint to switch (expires by itself). */
  get fence(): string {
    return `${this.namespace}:${this.globalTag}:fence`;
  }

  /** The log whose projector is live on the views: renewed while it follows, so a take-over can tell a live owner from a dead one. */
  get liveWriter(): string {
    return `${this.namespace}:${this.globalTag}:writer`;
  }

  /** A hash of the generations being built (field: prefix): a rebuild adds its own and removes it once switched or dropped. */
  get building(): string {
    return `${this.namespace}:${this.globalTag}:building`;
  }

  /** While it exists, a live rebuild is building `prefix` (it renews it; it expires once that rebuild is gone). */
  buildingMark(prefix: string): string {
    return `${this.namespace}:${this.globalTag}:building:${prefix}`;
  }

  /** While it exists, a rebuild that switched away from `prefix` is to delete it (it expires with the grace). */
  droppingMark(prefix: string): string {
    return `${this.namespace}:${this.globalTag}:dropping:${prefix}`;
  }

  get generationCounter(): string {
    return `${this.namespace}:${this.globalTag}:generation`;
  }

  /** The prefix of generation 1, used while no generation was ever switched to. */
  get defaultPrefix(): string {
    return this.prefixOf(1);
  }

  prefixOf(generation: number): string {
    return `${this.namespace}:v${generation}:`;
  }

  isPrefix(prefix: string): boolean {
    return new RegExp(`^${this.namespace}:v[1-9][0-9]*:$`).test(prefix);
  }

  /** An agent's request token bucket (shared by every API node; not versioned: it is no view). */
  rateBucket(identity: string): string {
    return `${this.namespace}:rate:{${identity}}`;
  }

  /** An agent's open wake streams on every API node (not versioned: it is no view). */
  wakeStreams(identity: string): string {
    return `${this.namespace}:streams:{${identity}}`;
  }

  wakeChannel(identity: string): string {
    return `${this.namespace}:wake:${identity}`;
  }

  /** Keys of the global tag, in the order the apply script expects them (KEYS[1..6]). */
  globalKeys(prefix: string): string[] {
    const base = `${prefix}${this.globalTag}:`;
    return [`${base}checkpoint`, `${base}agents`, `${base}retired`, `${base}identities`, this.active, this.fence];
  }

  checkpoint(prefix: string): string {
    return `${prefix}${this.globalTag}:checkpoint`;
  }

  /** The identity of the log a generation belongs to (the apply script derives it from the checkpoint key: same tag). */
  logOf(prefix: string): string {
    return `${prefix}${this.globalTag}:log`;
  }

  /** The version of the read model's rules the generation was built by (readModel/readModelVersion.ts; absent: 1). */
  rulesOf(prefix: string): string {
    return `${prefix}${this.globalTag}:rules`;
  }

  agents(prefix: string): string {
    return `${prefix}${this.globalTag}:agents`;
  }

  retired(prefix: string): string {
    return `${prefix}${this.globalTag}:retired`;
  }

  identities(prefix: string): string {
    return `${prefix}${this.globalTag}:identities`;
  }

  /** One agent's key, hash-tagged by identity (identities never contain braces). */
  agent(prefix: string, identity: string, name: AgentKeyName): string {
    return `${prefix}{${identity}}:${name}`;
  }
}
