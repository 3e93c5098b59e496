/**
 * The lease decisions of one node (projections/projectorLease.ts) on an injected clock and a lease store
 * in memory that honours expiry on the same clock: who leads, when a leader steps down, and why.
 */
import { LeaseKeeper, leaseTiming, type LeaseHolder, type LeaseStore } from '../../src/projections/projectorLease';

class MemoryLease implements LeaseStore {
  readonly name = 'projector';
  private held: (LeaseHolder & { until: number }) | null = null;
  private last = 0n;
  unreachable = false;
  /** Whether holder() says how long the lease has left (as the Redis lease does). */
  reportsExpiry = false;
  constructor(private readonly now: () => number) {}
  private live() {
    if (this.held && this.held.until <= this.now()) this.held = null;
    if (this.unreachable) throw new Error('unreachable');
    return this.held;
  }
  async acquire(node: string, ttlMs: number) {
    if (this.live()) return null;
    this.held = { node, token: ++this.last, until: this.now() + ttlMs };
    return this.last;
  }
  async renew(node: string, token: bigint, ttlMs: number) {
    const held = this.live();
    if (!held || held.node !== node || held.token !== token) return false;
    held.until = this.now() + ttlMs;
    return true;
  }
  async release(node: string, token: bigint) {
    const held = this.live();
    if (held && held.node === node && held.token === token) this.held = null;
  }
  async holder() {
    const held = this.live();
    if (!held) return null;
    return { node: held.node, token: held.token, ...(this.reportsExpiry ? { expiresInMs: held.until - this.now() } : {}) };
  }
}

function nodes(names: string[]) {
  let now = 0;
  const store = new MemoryLease(() => now);
  const said: string[] = [];
  const keepers = names.map(
    (name) =>
      new LeaseKeeper(store, name, leaseTiming(3000), () => now, {
        lead: (token) => void said.push(`${name} leads with ${token}`),
        stepDown: (reason) => void said.push(`${name} steps down: ${reason}`),
      }),
  );
  return { store, said, keepers, advance: (ms: number) => (now += ms) };
}

describe('LeaseKeeper', () => {
  it('renews at a third of the lease; a follower looks at most every 250 ms', () => {
    expect(leaseTiming(3000)).toEqual({ ttlMs: 3000, renewMs: 1000, lookMs: 250 });
    expect(leaseTiming(600)).toEqual({ ttlMs: 600, renewMs: 200, lookMs: 200 });
  });

  it('lets exactly one of three nodes lead; the others follow and name the leader and its token', async () => {
    const { said, keepers } = nodes(['a', 'b', 'c']);
    for (const keeper of keepers) await keeper.tick();
    expect(said).toEqual(['a leads with 1']);
    expect(keepers.map((k) => k.leadership())).toEqual([
      { role: 'leading', node: 'a', token: '1' },
      { role: 'following', node: 'b', leader: 'a', token: '1' },
      { role: 'following', node: 'c', leader: 'a', token: '1' },
    ]);
  });

  it("a follower says how soon the leader's lease runs out, and that the leader may be down once it missed two renewals", async () => {
    const { store, keepers, advance } = nodes(['a', 'b', 'c']);
    store.reportsExpiry = true;
    const [a, b, c] = keepers;
    for (const keeper of keepers) await keeper.tick();
    expect(b.leadership()).toEqual({ role: 'following', node: 'b', leader: 'a', token: '1', leaseRunsOutInMs: 3000 });
    advance(1000);
    await a.tick(); // renewed: the lease runs 3000 ms again
    await b.tick();
    expect(b.leadership()).toMatchObject({ leader: 'a', leaseRunsOutInMs: 3000 });
    expect(b.leadership()).not.toHaveProperty('note');
    // a stops renewing (killed, paused): b and c still name it, and say how soon its lease runs out.
    advance(1500);
    await b.tick();
    expect(b.leadership()).toEqual({ role: 'following', node: 'b', leader: 'a', token: '1', leaseRunsOutInMs: 1500 });
    advance(700); // 2200 ms without a renewal: two missed
    await c.tick();
    expect(c.leadership()).toEqual({
      role: 'following',
      node: 'c',
      leader: 'a',
      token: '1',
      leaseRunsOutInMs: 800,
      note: 'a has not renewed its projector lease for 2200 ms (a live holder renews every 1000 ms): it may be down; this node takes the lease over when it runs out, in 800 ms',
    });
    advance(800);
    await b.tick();
    expect(b.leadership()).toEqual({ role: 'leading', node: 'b', token: '2' });
  });

  it('keeps the lease while renewing, and hands it over once the leader stops renewing for a whole lease', async () => {
    const { said, keepers, advance } = nodes(['a', 'b']);
    const [a, b] = keepers;
    await a.tick();
    for (let i = 0; i < 5; i++) {
      advance(1000);
      await a.tick();
      await b.tick();
    }
    expect(said).toEqual(['a leads with 1']);
    advance(2999); // a is dead: no more renewals
    await b.tick();
    expect(b.leading).toBe(false);
    advance(1);
    await b.tick();
    expect(said).toEqual(['a leads with 1', 'b leads with 2']);
    await a.tick(); // a wakes up: its renewal finds b's lease
    expect(said[2]).toBe("a steps down: the projector lease expired and is no longer this node's");
    expect(a.leadership()).toEqual({ role: 'following', node: 'a', leader: null, token: null });
  });

  it('steps down by itself when the store cannot be reached for a whole lease', async () => {
    const { store, said, keepers, advance } = nodes(['a']);
    await keepers[0].tick();
    store.unreachable = true;
    advance(2000);
    await keepers[0].tick();
    expect(keepers[0].leading).toBe(true); // the lease may still be ours
    advance(1000);
    await keepers[0].tick();
    expect(said[1]).toBe('a steps down: the projector lease could not be renewed for 3000 ms (store unreachable)');
  });

  it('while the store cannot be reached, a follower names the holder of its last look as that, with no lease running out nor a takeover it cannot make', async () => {
    const { store, keepers, advance } = nodes(['a', 'b', 'c']);
    store.reportsExpiry = true;
    const [a, b, c] = keepers;
    for (const keeper of keepers) await keeper.tick();
    store.unreachable = true; // Redis down for every node
    advance(250);
    await b.tick();
    advance(2750); // 3000 ms since the last look that reached the store; a's lease would have run out
    await b.tick();
    // It said: leader a, leaseRunsOutInMs 0, "a ... may be down; this node takes the lease over when it runs out, in 0 ms".
    expect(b.leadership()).toEqual({
      role: 'following',
      node: 'b',
      leader: 'a',
      token: '1',
      storeUnreachableForMs: 2750,
      note: "this node has not reached the projector lease's store for 2750 ms: who holds the lease now is not known (a held it at this node's last look); this node looks again every 250 ms and takes the lease if it is free",
    });
    await a.tick(); // a cannot renew for a whole lease: it steps down, and says the same, naming nobody
    expect(a.leadership()).toMatchObject({ role: 'following', leader: null, storeUnreachableForMs: 3000 });
    expect(c.leadership()).toMatchObject({ leader: 'a', leaseRunsOutInMs: 0 }); // c has not looked since: nothing known to be wrong
    store.unreachable = false;
    advance(250);
    await b.tick(); // the store answers again, the lease is free: b takes it
    expect(b.leadership()).toEqual({ role: 'leading', node: 'b', token: '2' });
    await c.tick();
    expect(c.leadership()).toEqual({ role: 'following', node: 'c', leader: 'b', token: '2', leaseRunsOutInMs: 3000 });
  });

  it('steps down at once when a store refuses its write for another holder, and a clean release lets another lead', async () => {
    const { said, keepers, advance } = nodes(['a', 'b']);
    const [a, b] = keepers;
    await a.tick();
    await a.deposed({ node: 'c', token: 7n });
    expect(said[1]).toBe(
      "a steps down: c holds the projector lease (token 7) (this node's token 1): its late writes were refused",
    );
    await b.tick();
    expect(b.leading).toBe(false); // a's lease still runs: a deposed node does not release what is not its own
    advance(3000);
    await b.tick();
    await b.release();
    await a.tick();
    expect(said).toEqual([said[0], said[1], 'b leads with 2', 'a leads with 3']);
  });

  it("a refusal naming this node's lease as it holds it now (an earlier term's late write) does not step it down", async () => {
    const { store, said, keepers, advance } = nodes(['a', 'b']);
    const [a, b] = keepers;
    await a.tick();
    await store.release('a', 1n); // the store lost the lease (Redis flushed): a steps down at its next renewal ...
    advance(1000);
    await a.tick();
    await a.tick(); // ... and takes it again
    expect(a.leadership()).toEqual({ role: 'leading', node: 'a', token: '2' });
    // A write of its first term, refused now: the store names a's lease of this term.
    await a.deposed({ node: 'a', token: 2n });
    expect(a.leadership()).toEqual({ role: 'leading', node: 'a', token: '2' });
    await b.tick();
    expect(b.leading).toBe(false);
    expect(said).toEqual([
      'a leads with 1',
      'a steps down: the projector lease is gone from its store (nobody holds it: the store lost its data?)',
      'a leads with 2',
    ]);
  });

  it('after stepping down, a lease the store grants this node late (a take it gave up on) is ended and taken anew at once', async () => {
    const { store, said, keepers, advance } = nodes(['a', 'b']);
    const [a, b] = keepers;
    await a.tick();
    store.unreachable = true; // the store stalls: a's calls get no answer
    advance(3000);
    await a.tick();
    expect(said[1]).toBe('a steps down: the projector lease could not be renewed for 3000 ms (store unreachable)');
    store.unreachable = false;
    expect(await store.acquire('a', 3000)).toBe(2n); // the resumed store runs a take a sent while it stalled: unread
    await b.tick();
    expect(b.leadership()).toEqual({ role: 'following', node: 'b', leader: 'a', token: '2' });
    await a.tick();
    expect(said.slice(2)).toEqual(['a leads with 3']);
    expect(a.leadership()).toEqual({ role: 'leading', node: 'a', token: '3' });
    await b.tick();
    expect(b.leadership()).toEqual({ role: 'following', node: 'b', leader: 'a', token: '3' });
  });

  it('a follower whose take went unanswered (the store stalled) and was run late ends that lease and takes it anew at once', async () => {
    const { store, said, keepers, advance } = nodes(['a', 'b', 'c']);
    const [a, b, c] = keepers;
    await a.tick();
    await b.tick();
    store.unreachable = true; // the store stalls past the lease: everyone's calls go unanswered
    advance(3000);
    await b.tick(); // b's take is sent and given up on
    await a.tick();
    expect(said[1]).toBe('a steps down: the projector lease could not be renewed for 3000 ms (store unreachable)');
    store.unreachable = false;
    expect(await store.acquire('b', 3000)).toBe(2n); // the resumed store runs b's take first: its answer is lost
    await c.tick();
    expect(c.leadership()).toMatchObject({ role: 'following', leader: 'b', token: '2' });
    await b.tick(); // before: b followed itself ({ role: 'following', leader: 'b' }) until the lease ran out, nobody projecting
    expect(b.leadership()).toEqual({ role: 'leading', node: 'b', token: '3' });
    expect(said.slice(2)).toEqual(['b leads with 3']);
    await a.tick();
    expect(a.leadership()).toMatchObject({ role: 'following', leader: 'b', token: '3' });
    await b.tick(); // renewed, not taken again
    expect(said.slice(2)).toEqual(['b leads with 3']);
  });

  it('a node that never led leaves a lease naming its id alone (two processes given one id do not take turns)', async () => {
    const { said, keepers } = nodes(['a', 'a']);
    const [first, second] = keepers;
    await first.tick();
    await second.tick();
    await first.tick();
    await second.tick();
    expect(said).toEqual(['a leads with 1']);
    expect([first.leading, second.leading]).toEqual([true, false]);
  });

  it("never ends another node's lease, nor one of its own that a newer token deposed", async () => {
    const { store, said, keepers, advance } = nodes(['a', 'b']);
    const [a, b] = keepers;
    await a.tick();
    store.unreachable = true;
    advance(3000);
    await a.tick(); // a steps down
    store.unreachable = false;
    await b.tick(); // a's lease ran out in the store meanwhile: b takes it
    await a.tick();
    expect(said.slice(2)).toEqual(['b leads with 2']);
    expect(a.leadership()).toEqual({ role: 'following', node: 'a', leader: 'b', token: '2' });
    await b.deposed({ node: 'c', token: 9n }); // b learns of another holder; the store still names b with 2 until it expires
    await b.tick();
    expect(b.leading).toBe(false);
    expect(await store.holder()).toEqual({ node: 'b', token: 2n });
  });

  it('tells a follower once of each holder it sees, and a new leader whom it took over from (the operator log of a hand-over)', async () => {
    let now = 0;
    const store = new MemoryLease(() => now);
    const said: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map(
      (name) =>
        new LeaseKeeper(store, name, leaseTiming(3000), () => now, {
          lead: (token, previous) =>
            void said.push(`${name} leads with ${token} after ${previous ? `${previous.node}/${previous.token}` : 'nobody'}`),
          stepDown: (reason) => void said.push(`${name} steps down: ${reason}`),
          follow: (leader) => void said.push(`${name} follows ${leader.node}/${leader.token}`),
        }),
    );
    await a.tick();
    for (let i = 0; i < 4; i++) {
      await b.tick();
      await c.tick();
      now += 250;
      if (i % 4 === 3) await a.tick();
    }
    expect(said).toEqual(['a leads with 1 after nobody', 'b follows a/1', 'c follows a/1']); // once each, not per look
    now += 3000; // a died: its lease lapses
    await b.tick();
    await c.tick();
    expect(said.slice(3)).toEqual(['b leads with 2 after a/1', 'c follows b/2']);
    await a.tick(); // a resumes: it steps down, and follows b
    await a.tick();
    expect(said.slice(5)).toEqual(["a steps down: the projector lease expired and is no longer this node's", 'a follows b/2']);
  });
});
