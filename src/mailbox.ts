/**
 * The library API: `createMailbox(config)` wires the adapters, rebuilds or
 * catches up the views, and returns the command and query sides plus a
 * per-caller client (`as(token)` / `asActor(actor)`).
 */
import type { DependencyContainer } from 'tsyringe';
import { parseConfig, type MailboxConfig, type MailboxConfigInput } from './config';
import { buildContainer, type ContainerOverrides } from './compositionRoot';
import { TOKENS } from './tokens';
import type { Actor } from './commands/roles';
import { MailboxCommands, type CommandOptions } from './application/mailboxCommands';
import { MailboxQueries, type WakeStreamEvent } from './application/mailboxQueries';
import { Authenticator } from './application/authenticator';
import type { EventStore } from './events/eventStore';
import type { ProjectionStore } from './projections/projectionStore';
import type { ProjectionRunner } from './projections/projectionRunner';
import type { WakeBus } from './projections/wakeBus';

export class Mailbox {
  readonly commands: MailboxCommands;
  readonly queries: MailboxQueries;
  readonly authenticator: Authenticator;
  readonly runner: ProjectionRunner;
  readonly eventStore: EventStore;
  readonly projections: ProjectionStore;
  readonly wakeBus: WakeBus;

  constructor(readonly container: DependencyContainer, readonly config: MailboxConfig) {
    this.commands = container.resolve(MailboxCommands);
    this.queries = container.resolve(MailboxQueries);
    this.authenticator = container.resolve(Authenticator);
    this.runner = container.resolve<ProjectionRunner>(TOKENS.ProjectionRunner);
    this.eventStore = container.resolve<EventStore>(TOKENS.EventStore);
    this.projections = container.resolve<ProjectionStore>(TOKENS.ProjectionStore);
    this.wakeBus = container.resolve<WakeBus>(TOKENS.WakeBus);
  }

  /** A client acting as the holder of `token` (identity from the token only). */
  async as(token: string) {
    return this.asActor(await this.authenticator.authenticate(token));
  }

  asActor(actor: Actor) {
    const { commands: c, queries: q } = this;
    return {
      actor,
      registerAgent: (input: unknown, o?: CommandOptions) => c.registerAgent(actor, input, o),
      retireAgent: (identity: string, o?: CommandOptions) => c.retireAgent(actor, { identity }, o),
      rotateToken: (identity: string, o?: CommandOptions) => c.rotateAgentToken(actor, { identity }, o),
      send: (input: unknown, o?: CommandOptions) => c.send(actor, input, o),
      markRead: (input: unknown, o?: CommandOptions) => c.markRead(actor, input, o),
      archive: (messageId: string, o?: CommandOptions) => c.archive(actor, { messageId }, o),
      listMessages: (query: unknown = {}) => q.listMessages(actor, query),
      getMessage: (messageId: string) => q.getMessage(actor, { messageId }),
      unreadCount: () => q.unreadCount(actor),
      listAgents: () => q.listAgents(),
      heartbeats: () => q.heartbeats(actor),
      auditEvents: (after: bigint | null = null, limit = 100) => q.auditEvents(actor, after, limit),
      watch: (emit: (event: WakeStreamEvent) => void) => q.openWakeStream(actor, emit),
    };
  }

  async close(): Promise<void> {
    await this.runner.stop();
    await this.wakeBus.close();
    await this.projections.close();
    await this.eventStore.close();
  }
}

export type MailboxClient = ReturnType<Mailbox['asActor']>;

export async function createMailbox(input: MailboxConfigInput = {}, overrides: ContainerOverrides = {}): Promise<Mailbox> {
  const config = parseConfig(input);
  const container = await buildContainer(config, overrides);
  container.registerSingleton(MailboxCommands);
  container.registerSingleton(MailboxQueries);
  container.registerSingleton(Authenticator);
  const mailbox = new Mailbox(container, config);
  await mailbox.runner.start();
  return mailbox;
}
