/**
 * Shared by the core acceptance suites: the event stores they all run against
 * (memory, SQLite, EventStoreDB on the test double), a mailbox on either, and "nothing was written" checks.
 */
import fs from 'node:fs';
import type { ContainerOverrides } from '../../src/compositionRoot';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { isMailboxError, type MailboxError } from '../../src/errors';
import type { MailboxConfigInput } from '../../src/config';
import type { MailboxEvent, MailboxEventType, StoredEvent } from '../../src/events/types';
import { ADMIN_TOKEN, allEvents, silentLogger, tempDir } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';

export interface StoreKind {
  name: string;
  /** A fresh event store URL (and a directory to remove, or a server to stop, afterwards). */
  fresh(): FreshStore | Promise<FreshStore>;
}

interface FreshStore {
  url: string;
  dir: string | null;
  close?: () => Promise<void>;
}

export const STORE_KINDS: StoreKind[] = [
  { name: 'memory', fresh: () => ({ url: 'memory:', dir: null }) },
  {
    name: 'sqlite',
    fresh: () => {
      const dir = tempDir('mailbox-core-');
      return { url: `sqlite:${dir}/events.sqlite`, dir };
    },
  },
  // EventStoreDB through the real client over gRPC, against the in-repo wire-compatible double.
  {
    name: 'esdb (test double)',
    fresh: async () => {
      const double = await EsdbDouble.start();
      return { url: double.url, dir: null, close: () => double.close() };
    },
  },
];

/** Opens mailboxes on one fresh store per test and closes them (and removes the files) afterwards. */
export function mailboxHarness(kind: StoreKind) {
  const opened: Mailbox[] = [];
  const dirs: string[] = [];
  let current: FreshStore | null = null;

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((mailbox) => mailbox.close()));
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    await current?.close?.();
    current = null;
  });

  return {
    /** A mailbox on this test's store; a second call opens another instance on the same store (SQLite: same file). */
    async open(config: MailboxConfigInput = {}, overrides: ContainerOverrides = {}): Promise<Mailbox> {
      if (!current) {
        current = await kind.fresh();
        if (current.dir) dirs.push(current.dir);
      }
      const mailbox = await createMailbox(
        { eventStoreUrl: current.url, adminToken: ADMIN_TOKEN, logLevel: 'silent', ...config },
        { logger: silentLogger, ...overrides },
      );
      opened.push(mailbox);
      return mailbox;
    },
  };
}

/** The rejection a command produced; fails the test if it resolved or threw something other than a MailboxError. */
export async function rejectionOf(promise: Promise<unknown>): Promise<MailboxError> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (error) {
    if (isMailboxError(error)) return error;
    throw error;
  }
  throw new Error(`expected a MailboxError, got ${JSON.stringify(outcome)}`);
}

/** Runs `attempt` and asserts it was rejected with `code` and wrote no event at all. */
export async function expectRejectedWithoutEvents(
  mailbox: Mailbox,
  code: string,
  attempt: () => Promise<unknown>,
): Promise<MailboxError> {
  const before = await allEvents(mailbox);
  const error = await rejectionOf(attempt());
  expect(error.envelope.code).toBe(code);
  const after = await allEvents(mailbox);
  expect(after.length).toBe(before.length);
  expect(await mailbox.eventStore.headPosition()).toBe(before.length ? before[before.length - 1].position : null);
  return error;
}

/** Every stored event of one type, with its data typed. */
export async function eventsOfType<T extends MailboxEventType>(
  mailbox: Mailbox,
  type: T,
): Promise<Array<StoredEvent<Extract<MailboxEvent, { type: T }>>>> {
  return (await allEvents(mailbox)).filter((event) => event.type === type) as Array<
    StoredEvent<Extract<MailboxEvent, { type: T }>>
  >;
}
