/**
 * A TypeScript program built on the library, as its user builds one: the README's library example, compiled against
 * the declarations the package publishes (package.json "types") with strict settings and skipLibCheck off. Two of
 * them failed: sqliteBackup's declaration imported better-sqlite3's types, which a user does not get (they are this
 * project's devDependency: "TS7016: Could not find a declaration file for module 'better-sqlite3'"), and with
 * exactOptionalPropertyTypes ReadsOfWholeViews "incorrectly implements interface 'ProjectionStore'" (TS2420).
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { ensureBuilt, ROOT } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  types: string;
  dependencies: Record<string, string>;
};
const DIST = path.join(ROOT, 'dist') + path.sep;

/** The package an import names ('@grpc/grpc-js/build/x' -> '@grpc/grpc-js'). */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The README's library example, as its reader copies it. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('<!-- section:library -->'), readme.indexOf('<!-- /section:library -->'));
  const code = /```ts\n([^]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('README.md: no ts example in the library section');
  return code;
}

/**
 * Compiles `source` in a project of its own that installed the package: its declarations' imports resolve only to the
 * packages a user's install brings (the package's dependencies, their own types or @types among them, and Node's),
 * never to this repository's devDependencies.
 */
function compile(sources: Record<string, string>): string[] {
  const project = tempDir('mailbox-library-user-');
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(project, 'node_modules', 'agent-mailbox'), 'dir');
  const files = Object.entries(sources).map(([name, source]) => {
    fs.writeFileSync(path.join(project, name), source);
    return path.join(project, name);
  });
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
  };
  const host = ts.createCompilerHost(options);
  const installed = (specifier: string, resolved: string | undefined): boolean => {
    if (builtinModules.includes(specifier.replace(/^node:/, ''))) return true;
    const name = packageOf(specifier);
    if (!(name in manifest.dependencies)) return false;
    const typesPackage = `@types/${name.replace(/^@/, '').replace('/', '__')}`;
    return (
      resolved === undefined || !resolved.includes(`/node_modules/${typesPackage}/`) || typesPackage in manifest.dependencies
    );
  };
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, compilerOptions, sourceFile) =>
    literals.map((literal) => {
      const mode = ts.getModeForUsageLocation(sourceFile, literal, compilerOptions);
      const resolved = ts.resolveModuleName(literal.text, containingFile, compilerOptions, host, undefined, redirected, mode);
      const ours = containingFile.startsWith(DIST) && !literal.text.startsWith('.');
      if (ours && !installed(literal.text, resolved.resolvedModule?.resolvedFileName)) return { resolvedModule: undefined };
      return resolved;
    });
  const program = ts.createProgram(files, options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? path.basename(d.file.fileName) : ''}${d.file && d.start !== undefined ? `:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : ''}: ` +
        `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    );
}

beforeAll(() => ensureBuilt(), 180_000);

/**
 * The programs below, compiled once as one project: each type check of the package's declarations (skipLibCheck off)
 * took 8-12 s of a CI worker, four of them ~45 s. Each file is a module of its own, so what a file does wrong is
 * reported in that file; an error in no user file (the package's declarations, Node's) is every test's.
 */
const USER_FILES = ['readme.mts', 'documented.mts', 'answers.mts', 'mistakes.mts', 'right.mts'];
let compiled: string[] | undefined;
function errorsIn(...names: string[]): string[] {
  compiled ??= compile({
    'readme.mts': readmeExample(),
    'documented.mts': documentedNames,
    'answers.mts': answerTypes,
    'mistakes.mts': mistakes,
    'right.mts': rightCalls,
  });
  const inFile = (error: string, name: string) => error.startsWith(`${name}:`);
  return compiled.filter((error) => names.some((name) => inFile(error, name)) || !USER_FILES.some((name) => inFile(error, name)));
}

test("package.json's types are the declarations of the library's entry point", () => {
  expect(manifest.types).toBe('dist/src/index.d.ts');
  expect(fs.existsSync(path.join(ROOT, manifest.types))).toBe(true);
});

/** What the docs name, used with the types a user writes against. */
const documentedNames = `
    import { createMailbox, startHeartbeat, MailboxError, type MailboxClient, type MailboxConfigInput, type ErrorCode } from 'agent-mailbox';
    const options: MailboxConfigInput = { eventStoreUrl: 'memory:', logLevel: 'silent', awaitProjectionMs: 100 };
    const mailbox = await createMailbox(options);
    const client: MailboxClient = await mailbox.as('a-token');
    const { messageId, warnings } = await client.send({ to: 'AGENT:*', subject: 's', body: 'b' });
    const { result, replayed } = await client.sendOutcome({ to: '@b', subject: 's', body: 'b' }, { idempotencyKey: 'k' });
    const count: number = (await client.listMessages({ status: 'unread' })).unreadCount;
    const heartbeat = await startHeartbeat(mailbox, { settings: { idleMs: 300_000, metricsPort: null } });
    await heartbeat.stop();
    try { await client.archive(messageId); } catch (error) {
      if (error instanceof MailboxError) { const code: ErrorCode = error.code; console.error(code, error.envelope.message); }
    }
    console.log(warnings, result.messageId, replayed, count);
    await mailbox.close();
    export {};
  `;

test("the README's library example and what the docs name compile as a user's strict TypeScript program (skipLibCheck off)", () => {
  expect(errorsIn('readme.mts', 'documented.mts')).toEqual([]);
}, 120_000);

/**
 * The client's answers and options, named as a user's own functions name them. A page, a task or a send's result had
 * no type to import (the package exports only its entry point, and index.ts named none of them): a user wrote
 * Awaited<ReturnType<MailboxClient['listMessages']>> or gave up its types.
 */
const answerTypes = `
    import type {
      MailboxClient, MailboxAnswer, MailboxArguments, CommandOptions, SendResult, ReadResult, BulkReadResult, ReadAllResult,
      ArchiveResult, UnarchiveResult, Registration, Retirement, TokenRotation, MessageDetail, InboxCount, HeartbeatAnswer,
      MessagePage, ListedMessage, AgentView, DeliveryLedger, TaskResult, TaskPage, ListedTask, A2aTask, WatchListener,
      WatchOptions, WakeStreamEvent,
    } from 'agent-mailbox';
    export async function tour(client: MailboxClient, admin: MailboxClient): Promise<void> {
      const options: CommandOptions = { correlationId: 'c-1' };
      const registered: Registration = await admin.registerAgent({ identity: '@d' }, options);
      const rotated: TokenRotation = await admin.rotateToken('@d');
      const retired: Retirement = await admin.retireAgent('@d');
      const sent: SendResult = await client.send({ to: '@b', subject: 's', body: 'b', task: {} });
      const read: ReadResult | BulkReadResult | ReadAllResult = await client.markRead({ messageId: sent.messageId });
      const archived: ArchiveResult = await client.archive(sent.messageId);
      const unarchived: UnarchiveResult = await client.unarchive(sent.messageId);
      const page: MessagePage = await client.listMessages({ box: 'outbox' });
      const first: ListedMessage | undefined = page.messages[0];
      const detail: MessageDetail = await client.getMessage(sent.messageId);
      const ledger: DeliveryLedger = await client.delivery(sent.messageId);
      const count: InboxCount = await client.unreadCount();
      const agents: AgentView[] = (await client.listAgents()).agents;
      const beats: HeartbeatAnswer[] = (await admin.heartbeats()).agents;
      const claimed: TaskResult = await client.claimTask(sent.messageId);
      const tasks: TaskPage = await client.listTasks({ view: 'claimable' });
      const listed: ListedTask | undefined = tasks.tasks[0];
      const task: A2aTask = await client.getTask(sent.messageId);
      const listener: WatchListener = (event: WakeStreamEvent) => console.log(event.event);
      const watchOptions: WatchOptions = { onError: (error, event) => console.error(event.event, error) };
      const stop: MailboxAnswer<'watch'> = await client.watch(listener, watchOptions);
      const sendArgs: MailboxArguments<'send'> = [{ to: '@b', subject: 's', body: 'b' }, { idempotencyKey: 'k' }];
      const outcome: MailboxAnswer<'sendOutcome'> = await client.sendOutcome(...sendArgs);
      await stop();
      console.log(registered, rotated, retired, read, archived, unarchived, first, detail, ledger, count, agents, beats);
      console.log(claimed, listed, task, outcome.replayed);
    }
  `;

test("every answer and option of a client's methods has a type a user imports by name from the package", () => {
  expect(errorsIn('answers.mts')).toEqual([]);
}, 120_000);

/**
 * What the methods take, typed. They took `unknown`: a misspelt field, a priority or a state that is none compiled, to
 * be refused at run time. Each line of the first program is a mistake the compiler now names; the second, every field
 * of every input written right (the input types by name), compiles.
 */
const mistakes = `import type { MailboxClient } from 'agent-mailbox';
export async function mistakes(client: MailboxClient): Promise<void> {
  await client.send({ to: '@b', subjct: 's', body: 'b' });
  await client.send({ to: '@b', subject: 's', body: 'b', priority: 'urgent' });
  await client.updateTask({ taskId: 't', to: 'Done' });
  await client.listMessages({ box: 'outbox', staus: 'unread' });
  await client.markRead({ messageID: 'x' });
  await client.registerAgent({ identity: '@d', role: 'admin' });
  await client.listTasks({ view: 'claimed' });
  await client.send({ to: '@b', subject: 's', body: 'b', task: { state: 'COMPLETED' } });
  await client.listTasks({ state: 'Done,Working' });
  await client.listTasks({ state: 'working,done' });
  await client.listTasks({ state: 'Working,' });
  await client.listTasks({ state: '["Working", "Done"]' });
  await client.listTasks({ state: 'Working,Failed,Working,Failed,Working,Failed,Working,Failed,Working,Failed' });
  await client.listTasks({ state: [] });
}
`;

const rightCalls = `
    import type {
      MailboxClient, SendRequest, MarkReadRequest, ListMessagesQuery, RegisterAgentRequest, UpdateTaskRequest,
      ListTasksQuery, TaskEnvelopeRequest, TaskStateSpelling, TaskStatesText,
    } from 'agent-mailbox';
    export async function right(client: MailboxClient, admin: MailboxClient): Promise<void> {
      const state: TaskStateSpelling = 'input-required';
      const task: TaskEnvelopeRequest = {
        state: 'TASK_STATE_SUBMITTED',
        input: { parts: [{ kind: 'text', text: 'review' }, { kind: 'data', data: { pr: 42 } }, { kind: 'file', file: { uri: 'https://x.test/d' } }] },
        metadata: { sessionId: 's', relatedTickets: ['T-1'], priorComments: [{ url: 'https://x.test/c', commentId: 'c1' }] },
        expectedOutput: { shape: 'review', locationHint: 'PR' },
        budget: { deadline: '2030-01-01T00:00:00Z', maxTokens: 10 },
        expiresAt: '2030-01-02T00:00:00Z',
      };
      const send: SendRequest = {
        to: ['@b', '@c'], subject: 's', body: 'b', priority: 'high', inReplyTo: 'm', threadId: 't', tags: ['review'],
        wakeSuppressed: false, expectsReplyBy: '2h', task, idempotencyKey: 'k',
      };
      const { messageId } = await client.send(send);
      await client.send({ to: 'AGENT:*', subject: 's', body: 'b', tags: 'review,urgent' });
      const reads: MarkReadRequest[] = [
        { messageId },
        { messageIds: [messageId] },
        { all: true, threadId: 't', from: '@a', priority: 'low', before: '2030-01-01T00:00:00Z', includeUnseen: true },
      ];
      for (const read of reads) await client.markRead(read);
      const query: ListMessagesQuery = { box: 'inbox', status: 'unread', from: '@a', threadId: 't', tags: ['x'], priority: 'normal', limit: 10 };
      await client.listMessages(query);
      await client.listMessages({ box: 'outbox', to: 'AGENT:*', cursor: 'c' });
      const registration: RegisterAgentRequest = { identity: '@d', role: 'auditor' };
      await admin.registerAgent(registration);
      const move: UpdateTaskRequest = { taskId: messageId, to: 'Completed', note: 'n', artifacts: [{ name: 'r', parts: [{ kind: 'text', text: 'LGTM' }] }] };
      await client.updateTask(move);
      await client.updateTask({ taskId: messageId, to: state, note: 'which branch?' });
      await client.updateTask({ taskId: messageId, to: 'Failed', reason: 'broken' });
      const tasks: ListTasksQuery = { view: 'sent', state: ['Working', 'TASK_STATE_INPUT_REQUIRED'], limit: 5 };
      await client.listTasks(tasks);
      await client.listTasks({ state: 'working' });
      // The forms HTTP takes as text, typed as the library takes them: states comma-separated or JSON-encoded, artifacts
      // JSON-encoded.
      const states: TaskStatesText[] = ['Working,InputRequired', 'Working, TASK_STATE_FAILED', '["Working", "Failed"]'];
      for (const state of states) await client.listTasks({ state });
      // Every state of a literal text is checked, as list_tasks checks them: white space around each, any number up to
      // one of each state.
      await client.listTasks({ state: 'working,input-required' });
      await client.listTasks({ view: 'sent', state: ' Working , TASK_STATE_FAILED ' });
      await client.listTasks({ state: '[ "working", "input-required", "TASK_STATE_AUTH_REQUIRED" ]' });
      await client.listTasks({ state: 'Submitted,Working,InputRequired,AuthRequired,Completed,Canceled,Failed,Rejected,Unknown' });
      await client.updateTask({ taskId: messageId, to: 'Completed', artifacts: '[{"parts": [{"kind": "text", "text": "LGTM"}]}]' });
    }
  `;

test('the methods take typed inputs: a misspelt field or a value that is none is a compile error, a right call compiles', () => {
  const errors = errorsIn('mistakes.mts');
  const on = (line: number) => errors.filter((error) => error.startsWith(`mistakes.mts:${line}: `));
  expect(on(3)).toEqual([expect.stringMatching(/TS\d+ .*'subjct' does not exist .*Did you mean to write 'subject'\?/)]);
  expect(on(4)).toEqual([expect.stringMatching(/TS\d+ .*'"urgent"' is not assignable/)]);
  expect(on(5)).toEqual([expect.stringMatching(/TS\d+ .*'"Done"' is not assignable/)]);
  expect(on(6)).toEqual([expect.stringMatching(/TS\d+ .*'staus' does not exist/)]);
  expect(on(7)).toEqual([expect.stringMatching(/TS\d+ .*messageID/)]);
  expect(on(8)).toEqual([expect.stringMatching(/TS\d+ .*'"admin"' is not assignable/)]);
  expect(on(9)).toEqual([expect.stringMatching(/TS\d+ .*'"claimed"' is not assignable/)]);
  expect(on(10)).toEqual([expect.stringMatching(/TS\d+ .*'"COMPLETED"' is not assignable/)]);
  expect(on(11)).toEqual([expect.stringMatching(/TS\d+ .*'"Done,Working"' is not assignable/)]);
  // Every state of a text is checked, not its first only; and no more states than there are (as list_tasks refuses).
  expect(on(12)).toEqual([expect.stringMatching(/TS\d+ .*'"working,done"' is not assignable/)]);
  expect(on(13)).toEqual([expect.stringMatching(/TS\d+ .*'"Working,"' is not assignable/)]);
  expect(on(14)).toEqual([expect.stringMatching(/TS\d+ .*'"\[\\"Working\\", \\"Done\\"\]"' is not assignable/)]);
  expect(on(15)).toEqual([expect.stringMatching(/TS\d+ .*'"Working,Failed,Working.*' is not assignable/)]);
  // An empty list names no state (list_tasks refuses it: it would match no task).
  expect(on(16)).toEqual([expect.stringMatching(/TS\d+ .*'\[\]' is not assignable/)]);
  expect(errors).toHaveLength(14);
  expect(errorsIn('right.mts')).toEqual([]);
}, 120_000);
