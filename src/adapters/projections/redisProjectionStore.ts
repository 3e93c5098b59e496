/**
 * Redis projection store (production): the same views as the memory store,
 * shared by every API node, the heartbeat daemon and the tools.
 *
 * Writes: each chunk of events is one Lua script that compares positions with
 * the stored checkpoints (fixed-width strings), applies the view changes,
 * publishes wakes after them and moves the checkpoint, atomically; see
 * redisApplyScript.ts and redisKeys.ts (Cluster layout). Before writing, the
 * script verifies that this writer's generation is still the active one and
 * that the checkpoint did not go back (Redis restarted empty): the store then
 * follows the switch, or reports ProjectionCheckpointRewound so that the
 * projector resumes from what Redis still has.
 */
import type { Redis } from 'ioredis';
import type { ListQuery } from '../../projections/listQuery';
import {
  ProjectionCheckpointRewound, type AgentView, type HeartbeatCounts, type MessagePage, type ProjectionStore, type UnreadCount,
} from '../../projections/projectionStore';
import type { ProjectionGenerations } from '../../projections/rebuildGenerations';
import type { ProjectedEvent } from '../../projections/viewChanges';
import { inLogOrder } from './redisApplyPlan';
import { RedisScriptApplier } from './redisApplier';
import { redisCall } from './redisConnection';
import { RedisGenerations } from './redisGenerations';
import { parsePosition, RedisKeys } from './redisKeys';
import { defineMailboxScripts } from './redisScripts';
import { RedisViewReader } from './redisViewReader';

export interface RedisProjectionOptions {
  /** First part of every key and channel (default 'mailbox'). */
  namespace?: string;
  /** One script call per hash tag, for Redis Cluster (default: one call per chunk of events). */
  scriptPerTag?: boolean;
  /** Events per script call (default 64: each call stays short, so reads between calls wait little). */
  eventsPerScript?: number;
  /** Events per script call while rebuilding a generation nobody reads yet (default 256). */
  rebuildEventsPerScript?: number;
  /** How long readers trust their cached active generation (default 1000 ms). */
  generationTtlMs?: number;
}

const MAX_SWITCH_FOLLOWS = 5;
/** A rebuild holds live appliers for milliseconds while it switches; wait that out (its fence expires by itself). */
const FENCE_WAIT_MS = 5;
const MAX_FENCE_WAIT_MS = 10_000;

export class RedisProjectionStore implements ProjectionStore {
  readonly keys: RedisKeys;
  private readonly applier: RedisScriptApplier;
  private readonly reader: RedisViewReader;
  private readonly generationsOfViews: RedisGenerations;
  /** The highest checkpoint this store committed: a stored checkpoint below it means the views were lost. */
  private expected = '';

  constructor(private readonly client: Redis, options: RedisProjectionOptions = {}) {
    defineMailboxScripts(client);
    this.keys = new RedisKeys(options.namespace ?? 'mailbox');
    const scriptPerTag = options.scriptPerTag ?? false;
    this.applier = new RedisScriptApplier(client, this.keys, { scriptPerTag, eventsPerScript: options.eventsPerScript ?? 64 });
    this.reader = new RedisViewReader(client, this.keys);
    const rebuilder = new RedisScriptApplier(client, this.keys, { scriptPerTag, eventsPerScript: options.rebuildEventsPerScript ?? 256 });
    this.generationsOfViews = new RedisGenerations(client, this.keys, rebuilder, options.generationTtlMs ?? 1000);
  }

  /** Blue/green rebuilds (src/projections/rebuild.ts). */
  generations(): ProjectionGenerations {
    return this.generationsOfViews;
  }

  async applyBatch(batch: readonly ProjectedEvent[]): Promise<void> {
    let events = inLogOrder(batch, null);
    let waitedMs = 0;
    for (let follows = 0; events.length > 0;) {
      const prefix = await this.generationsOfViews.current();
      const outcome = await this.applier.apply(events, prefix, 'cpw', this.expected);
      if (outcome.status === 'ok') {
        if (outcome.checkpoint > this.expected) this.expected = outcome.checkpoint;
        return;
      }
      if (outcome.status === 'fenced') {
        if (waitedMs >= MAX_FENCE_WAIT_MS) throw new Error(`Redis projections: held by a rebuild for over ${MAX_FENCE_WAIT_MS} ms`);
        events = events.slice(outcome.committed);
        await new Promise((resolve) => setTimeout(resolve, FENCE_WAIT_MS));
        waitedMs += FENCE_WAIT_MS;
        continue;
      }
      if (outcome.status === 'rewound') {
        const expected = parsePosition(this.expected);
        this.expected = outcome.stored;
        // Nothing left of this generation: drop whatever a partial write left, so that the rebuild starts clean.
        if (outcome.stored === '') await this.generationsOfViews.drop(prefix);
        throw new ProjectionCheckpointRewound(parsePosition(outcome.stored), expected);
      }
      // A rebuild switched generations: continue in the new one (its checkpoint gates what it already has).
      if (++follows > MAX_SWITCH_FOLLOWS) throw new Error(`Redis projections: generation keeps moving (now ${outcome.active})`);
      this.generationsOfViews.adopt(outcome.active);
      this.expected = '';
      events = events.slice(outcome.committed);
    }
  }

  async checkpoint(): Promise<bigint | null> {
    const prefix = await this.generationsOfViews.refresh();
    return parsePosition(await redisCall('Redis projections', () => this.client.get(this.keys.checkpoint(prefix))));
  }

  async listMessages(identity: string, query: ListQuery): Promise<MessagePage> {
    return this.read((prefix) => this.reader.listMessages(prefix, identity, query));
  }

  async unreadCount(identity: string): Promise<UnreadCount> {
    const { unread, byPriority } = await this.heartbeat(identity);
    return { unread, byPriority };
  }

  async heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.read((prefix) => this.reader.counts(prefix, identity));
  }

  async allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.read(async (prefix) => {
      const identities = await this.reader.identities(prefix);
      return Promise.all(identities.map((identity) => this.reader.counts(prefix, identity)));
    });
  }

  async listAgents(): Promise<AgentView[]> {
    return this.read((prefix) => this.reader.agents(prefix));
  }

  /** Drops the active generation's views and checkpoint. */
  async reset(): Promise<void> {
    await this.generationsOfViews.drop(await this.generationsOfViews.refresh());
    this.expected = '';
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private async read<T>(query: (prefix: string) => Promise<T>): Promise<T> {
    return redisCall('Redis projections', async () => query(await this.generationsOfViews.current()));
  }
}
