/**
 * What an agent can do, as the MCP tools see it: the port the MCP adapter
 * serves and the HTTP client implements. Two implementations: in this process
 * (POST /mcp, on the library layer) and over HTTP (`mailbox mcp`, stdio).
 * Inputs are passed through unparsed: the command layer validates them.
 */
import type { Actor } from '../commands/roles';
import type { CommandName } from './commandNames';
import type { AgentView, MessagePage } from '../projections/projectionStore';
import type {
  ArchiveResult,
  BulkReadResult,
  MailboxCommands,
  ReadAllResult,
  ReadResult,
  SendOutcome,
  UnarchiveResult,
} from './mailboxCommands';
import type { InboxCount, MailboxQueries, MessageDetail } from './mailboxQueries';
import type { A2aTask } from './taskA2a';
import type { TaskCommands, TaskResult } from './taskCommands';
import type { TaskPage, TaskQueries } from './taskQueries';
import type { DeliveryLedger, DeliveryQueries } from './deliveryQueries';

export interface AgentApi {
  /** A send's result, and whether it replayed a send made already with its idempotencyKey (add_message's _meta). */
  sendOutcome(input: unknown): Promise<SendOutcome>;
  listMessages(query: unknown): Promise<MessagePage>;
  getMessage(messageId: string): Promise<MessageDetail>;
  /** {messageId, after?, limit?}: the delivery ledger of a message you sent. */
  getDelivery(input: unknown): Promise<DeliveryLedger>;
  markRead(input: unknown): Promise<ReadResult | BulkReadResult | ReadAllResult>;
  archive(messageId: string): Promise<ArchiveResult>;
  unarchive(messageId: string): Promise<UnarchiveResult>;
  listAgents(): Promise<{ agents: AgentView[] }>;
  unreadCount(): Promise<InboxCount>;
  /** {taskId, leaseSeconds?} */
  claimTask(input: unknown): Promise<TaskResult>;
  /** {taskId, to, reason?, note?, artifacts?} */
  updateTask(input: unknown): Promise<TaskResult>;
  listTasks(query: unknown): Promise<TaskPage>;
  getTask(taskId: string): Promise<A2aTask>;
}

/** Counts commands per surface (the HTTP adapter's metrics implement it). Every command of this API goes through it. */
export interface CommandMeter {
  command<T>(name: CommandName, surface: 'mcp', run: () => Promise<T>): Promise<T>;
}

export interface MailboxSides {
  commands: MailboxCommands;
  queries: MailboxQueries;
  tasks: TaskCommands;
  taskQueries: TaskQueries;
  deliveries: DeliveryQueries;
}

export function inProcessAgentApi(
  mailbox: MailboxSides,
  actor: Actor,
  metrics: CommandMeter,
  onSent?: (outcome: SendOutcome) => void,
): AgentApi {
  const { commands, queries, tasks, taskQueries, deliveries } = mailbox;
  return {
    sendOutcome: async (input) => {
      let replayed = false;
      // The meter reads the result (its VIEWS_LAGGING warning), as for every command: the flag stays beside it.
      const result = await metrics.command('send', 'mcp', async () => {
        const outcome = await commands.sendOutcome(actor, input);
        replayed = outcome.replayed;
        return outcome.result;
      });
      const sent = { result, replayed };
      onSent?.(sent);
      return sent;
    },
    listMessages: (query) => queries.listMessages(actor, query),
    getMessage: (messageId) => queries.getMessage(actor, { messageId }),
    getDelivery: (input) => deliveries.delivery(actor, input),
    markRead: (input) => metrics.command('mark_read', 'mcp', () => commands.markRead(actor, input)),
    archive: (messageId) => metrics.command('archive', 'mcp', () => commands.archive(actor, { messageId })),
    unarchive: (messageId) => metrics.command('unarchive', 'mcp', () => commands.unarchive(actor, { messageId })),
    listAgents: () => queries.listAgents(),
    unreadCount: () => queries.unreadCount(actor),
    claimTask: (input) => metrics.command('claim_task', 'mcp', () => tasks.claim(actor, input)),
    updateTask: (input) => metrics.command('update_task', 'mcp', () => tasks.transition(actor, input)),
    listTasks: (query) => taskQueries.listTasks(actor, query),
    getTask: (taskId) => taskQueries.getTask(actor, { taskId }),
  };
}
