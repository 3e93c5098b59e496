/**
 * What the library's methods take, as TypeScript types. They took `unknown`: a user's editor offered no field, and a
 * misspelt one (`subjct`), a priority that is none ('urgent') or a state that is none ('Done') compiled, to be refused at
 * run time. Each type below is checked against its command's schema (SameKeys): a field the schema gains or loses
 * fails the build here. The schemas still validate every call as before (a JavaScript caller, or a value cast past
 * these types, gets the same teaching refusals).
 *
 * The other forms HTTP and MCP take are typed too, as they are taken at run time (HTTP's and MCP's schemas are these):
 * a task, artifacts and message ids JSON-encoded as one string, tags and task states as comma-separated text. Artifacts
 * as one string and states as comma text were taken at run time but not typed: a TypeScript caller writing them, as an
 * HTTP client writes them, did not compile.
 */
import type { z } from 'zod';
import type { markReadSchema, registerAgentSchema, sendMessageSchema } from './commands/schemas';
import type { listTasksSchema, transitionTaskSchema } from './commands/tasks/taskSchemas';
import type { listQuerySchema } from './application/listQueryParser';
import type { taskEnvelopeSchema, TaskStateSpelling } from './commands/messageFields';
import type { Priority } from './events/types';
import type { TASK_STATES } from './events/taskShapes';

export type { TaskStateSpelling };

/** Every key of every member of a union. */
type KeysOf<T> = T extends unknown ? keyof T : never;
/**
 * `T`, when it has exactly the keys of the schema's input `S`; else never, and every call of its method fails to build
 * (the schema gained or lost a field that the type must follow).
 */
type SameKeys<S, T> = [Exclude<KeysOf<T>, KeysOf<S>> | Exclude<KeysOf<S>, KeysOf<T>>] extends [never] ? T : never;

/** A part of a task's input or of an artifact (A2A parts). */
export type TaskPart =
  | { kind: 'text'; text: string }
  | { kind: 'data'; data: Record<string, unknown> }
  | { kind: 'file'; file: { uri: string; mimeType?: string } };

/** An A2A task envelope, as a send carries it (every field optional: `{}` sends a task in Submitted). */
export type TaskEnvelopeRequest = SameKeys<
  z.input<typeof taskEnvelopeSchema>,
  {
    state?: TaskStateSpelling;
    input?: { parts: readonly TaskPart[] };
    metadata?: {
      sessionId?: string;
      relatedTickets?: readonly string[];
      relatedDiscussions?: readonly string[];
      parentTask?: string;
      priorComments?: ReadonlyArray<{ url: string; commentId: string }>;
    };
    expectedOutput?: { shape: 'review' | 'ticket' | 'discussion' | 'pr' | 'free-form'; locationHint?: string };
    /** deadline: an ISO 8601 time with an offset. */
    budget?: { deadline?: string; maxTokens?: number };
    /** An ISO 8601 time with an offset. */
    expiresAt?: string;
  }
>;

/** send's and sendOutcome's input. */
export type SendRequest = SameKeys<
  z.input<typeof sendMessageSchema>,
  {
    /** '@identity', the broadcast 'AGENT:*', or a list of identities. */
    to: string | readonly string[];
    subject: string;
    body: string;
    priority?: Priority;
    inReplyTo?: string;
    threadId?: string;
    /** A list, or comma-separated text ('review,urgent'). */
    tags?: readonly string[] | string;
    wakeSuppressed?: boolean;
    /** An ISO 8601 time with an offset, or a duration from now: '90s', '30m', '2h', '1d', 'PT30M'. */
    expectsReplyBy?: string;
    /** The envelope, or its JSON encoding. */
    task?: TaskEnvelopeRequest | string;
    idempotencyKey?: string;
  }
>;

/** The filters of markRead({ all: true }). */
export interface ReadAllFilters {
  threadId?: string;
  from?: string;
  priority?: Priority;
  /** An ISO 8601 time with an offset. */
  before?: string;
  includeUnseen?: boolean;
}

/** markRead's input: one message, several, or every one seen (with its filters). */
export type MarkReadRequest = SameKeys<
  z.input<typeof markReadSchema>,
  { messageId: string } | { messageIds: readonly string[] | string } | ({ all: true } & ReadAllFilters)
>;

/** listMessages' query (every field optional); a filter that does not apply to the box is refused. */
export type ListMessagesQuery = SameKeys<
  z.input<typeof listQuerySchema>,
  {
    box?: 'inbox' | 'outbox';
    /** The inbox's only. */
    status?: 'unread' | 'read' | 'all' | 'archived';
    /** The inbox's only. */
    from?: string;
    /** The outbox's only. */
    to?: string;
    threadId?: string;
    tags?: readonly string[] | string;
    priority?: Priority;
    /** 1-200, default 50. */
    limit?: number;
    /** A page's nextCursor, unchanged. */
    cursor?: string;
  }
>;

/** registerAgent's input (the admin's). */
export type RegisterAgentRequest = SameKeys<
  z.input<typeof registerAgentSchema>,
  { identity: string; role?: 'agent' | 'auditor' }
>;

/** An artifact of a completed task. */
export interface TaskArtifactRequest {
  name?: string;
  parts: readonly TaskPart[];
}

/** updateTask's input. */
export type UpdateTaskRequest = SameKeys<
  z.input<typeof transitionTaskSchema>,
  {
    taskId: string;
    to: TaskStateSpelling;
    reason?: string;
    note?: string;
    /** The artifacts, or their JSON encoding ('[{"parts": [{"kind": "text", "text": "LGTM"}]}]'). */
    artifacts?: readonly TaskArtifactRequest[] | string;
  }
>;

/** The white space list_tasks trims off a state written as text (and off the text). */
type Space = ' ' | '\t' | '\n' | '\r';
type Trimmed<Text extends string> = Text extends `${Space}${infer Rest}`
  ? Trimmed<Rest>
  : Text extends `${infer Rest}${Space}`
    ? Trimmed<Rest>
    : Text;
/** At most this many states in a filter (one of each), as list_tasks takes them. */
type MostStates = (typeof TASK_STATES)['length'];
/**
 * Whether `Text` is `Item`s separated by commas, each trimmed, at most MostStates of them (`Seen`: those before it). A
 * rest the compiler cannot see (`Working,${string}`, a TaskStatesText annotated without its text) is left to run time.
 */
type ListOf<Item extends string, Text extends string, Seen extends readonly unknown[] = []> = string extends Text
  ? true
  : Seen['length'] extends MostStates
    ? false
    : Text extends `${infer Head},${infer Rest}`
      ? Trimmed<Head> extends Item
        ? ListOf<Item, Rest, [...Seen, Head]>
        : false
      : Trimmed<Text> extends Item
        ? true
        : false;
/**
 * Whether `Text` is task states as list_tasks takes them in one string: comma-separated, or a JSON-encoded list (each
 * text of a union: true only when every one is).
 */
type StatesInText<Text extends string> = Text extends unknown
  ? ListOf<TaskStateSpelling, Text> extends true
    ? true
    : Trimmed<Text> extends `[${infer Inner}]`
      ? ListOf<`"${TaskStateSpelling}"`, Inner>
      : false
  : never;

/**
 * Several task states in one string, as HTTP's query takes them: comma-separated ('Working,InputRequired',
 * 'working, input-required') or a JSON-encoded list ('["Working", "Failed"]'), at most one of each state. Given the
 * text (`Text`, as listTasks infers it from a literal), it is that text when every state in it is one, else never:
 * 'Working,Done' and 'Working,' do not compile, as list_tasks refuses them. Without it (a variable annotated
 * `TaskStatesText`), only the first state is checked: the rest is checked at run time.
 */
export type TaskStatesText<Text extends string = string> = Text &
  NoInfer<
    string extends Text ? `${TaskStateSpelling},${string}` | `[${string}]` : StatesInText<Text> extends true ? string : never
  >;

/** listTasks' query (`Text`: its state written as text, which listTasks checks: TaskStatesText). */
export type ListTasksQuery<Text extends string = string> = SameKeys<
  z.input<typeof listTasksSchema>,
  {
    view?: 'assigned' | 'claimable' | 'sent';
    /**
     * One state, a list, or the list as comma-separated text ('Working,InputRequired', as GET /v1/tasks takes it) or
     * JSON-encoded ('["Working"]'). Every state of a literal text is checked at compile time (TaskStatesText). A list
     * names one state at least: `[]` would match no task (refused at run time; leave `state` out for every state).
     */
    state?: TaskStateSpelling | readonly [TaskStateSpelling, ...TaskStateSpelling[]] | TaskStatesText<Text>;
    limit?: number;
    cursor?: string;
  }
>;
