import { randomBytes, randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { deterministicEventId, deterministicMessageId, newCommandId } from '../../src/events/eventIds';

/** The namespace eventIds.ts derives from: the ids stored in every log so far. */
const NAMESPACE = '5b7d2a3e-8f0c-4c1e-9a55-2f6c0d8e4b71';

/** Names of every shape a command id or an Idempotency-Key can take: ASCII, any Unicode, empty, longer than 1 KB. */
function names(): string[] {
  const random: string[] = [];
  for (let i = 0; i < 2_000; i++) {
    const length = i % 50;
    const codePoints = Array.from({ length }, (_unused, j) =>
      j % 7 === 0 ? 0x1f600 + ((i + j) % 80) : j % 5 === 0 ? 0x4e00 + ((i * j) % 2000) : 0x20 + ((i + j * 13) % 95),
    );
    random.push(String.fromCodePoint(...codePoints));
  }
  return [
    '',
    randomUUID(),
    randomBytes(700).toString('hex'), // 1,400 bytes: the reused buffer grows
    'é'.repeat(3_000),
    '\u0000control\u0001',
    ...random,
  ];
}

describe('deterministic ids (UUID version 5)', () => {
  it('are the ids of earlier releases, pinned: a retried send or append after an upgrade finds its original', () => {
    expect(deterministicEventId('7f1c', 0)).toBe('acbf3799-58c0-5e22-a4cc-017fa535a5a3');
    expect(deterministicMessageId('@alice', 'retry-1', 'ignored')).toBe('1fb61d2c-213c-5e19-a8b7-9fc663ac0731');
    expect(deterministicMessageId('@alice', null, '7f1c')).toBe('1ba579d9-79e8-5483-9079-628170da5527');
  });

  it("equal the uuid package's v5 for every name, ASCII or not, short or long", () => {
    for (const name of names()) {
      expect(deterministicMessageId('@sender', null, name)).toBe(uuidv5(`command:${name}`, NAMESPACE));
      expect(deterministicMessageId('@sender', name, 'unused')).toBe(uuidv5(`idem:@sender:${name}`, NAMESPACE));
      expect(deterministicEventId(name, 3)).toBe(uuidv5(`${name}#3`, NAMESPACE));
    }
  });

  it('differ for different names and carry the version and variant', () => {
    const ids = new Set(Array.from({ length: 1_000 }, (_unused, i) => deterministicEventId('command', i)));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('time-ordered ids (command ids version 7, ids derived from them version 8)', () => {
  const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('mints command ids in the order they are minted, with the millisecond they were minted in', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5_000 }, () => newCommandId());
    const after = Date.now();
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [ids[0], ids[ids.length - 1]]) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = parseInt(id.replace('-', '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
    }
  });

  it("derive event and message ids that keep their command's time, so that they sort with their commands", () => {
    const commands = Array.from({ length: 2_000 }, () => newCommandId());
    const eventIds = commands.map((commandId) => deterministicEventId(commandId, 0));
    const messageIds = commands.map((commandId) => deterministicMessageId('@alice', null, commandId));
    for (const [i, commandId] of commands.entries()) {
      expect(eventIds[i]).toMatch(UUID_V8);
      expect(messageIds[i]).toMatch(UUID_V8);
      expect(eventIds[i].slice(0, 13)).toBe(commandId.slice(0, 13));
      expect(messageIds[i].slice(0, 13)).toBe(commandId.slice(0, 13));
      expect(eventIds[i]).not.toBe(messageIds[i]);
    }
    const byTime = (ids: string[]) => ids.map((id) => id.slice(0, 13));
    expect(byTime([...eventIds].sort())).toEqual(byTime(eventIds));
    expect(new Set([...eventIds, ...messageIds]).size).toBe(4_000);
  });

  it('derive the same ids from the same command id (a retried append is de-duplicated), others from another', () => {
    const commandId = newCommandId();
    expect(deterministicEventId(commandId, 2)).toBe(deterministicEventId(commandId, 2));
    expect(deterministicMessageId('@alice', null, commandId)).toBe(deterministicMessageId('@alice', null, commandId));
    const events = new Set(Array.from({ length: 100 }, (_unused, i) => deterministicEventId(commandId, i)));
    expect(events.size).toBe(100);
    expect(deterministicEventId(newCommandId(), 2)).not.toBe(deterministicEventId(commandId, 2));
    expect(deterministicEventId(commandId.toUpperCase(), 0)).toMatch(UUID_V8); // written in lower case, as every id
  });

  it("keep an Idempotency-Key's message id independent of the command (version 5): a retry at any time finds its original", () => {
    const first = deterministicMessageId('@alice', 'retry-1', newCommandId());
    const retried = deterministicMessageId('@alice', 'retry-1', newCommandId());
    expect(first).toBe('1fb61d2c-213c-5e19-a8b7-9fc663ac0731');
    expect(retried).toBe(first);
  });
});
