/**
 * The forms HTTP takes as text, through the library: task states as comma-separated text (GET /v1/tasks?state=
 * Working,InputRequired) or a JSON-encoded list, artifacts JSON-encoded as one string. The library took them at run
 * time but its types did not (a TypeScript caller writing them did not compile: libraryTypes.e2e); they are typed now,
 * and taken exactly as HTTP takes them: the same tasks listed, the same artifact written, a state that is none refused
 * in the same words, nothing written.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import type { MailboxClient, TaskStatesText } from '../../src/index';

let server: TestServer;
let t: Record<string, string>;
let b: MailboxClient;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  b = await server.mailbox.as(t['@b']);
});
afterAll(() => server.close());

async function taskFor(identity: string, state?: string): Promise<string> {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: identity, subject: 'review', body: 'please', task: {} },
  });
  const taskId = sent.body.messageId as string;
  for (const to of state === undefined ? [] : state === 'Working' ? ['Working'] : ['Working', state]) {
    const moved = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
      token: t[identity],
      body: { to, ...(to === 'InputRequired' ? { note: 'which branch?' } : {}) },
    });
    expect(moved.body).toMatchObject({ state: to });
  }
  return taskId;
}

const ids = (page: { tasks: Array<{ taskId: string }> }) => page.tasks.map((task) => task.taskId).sort();

test('states as comma-separated or JSON-encoded text: the tasks HTTP lists for the same text', async () => {
  const working = await taskFor('@b', 'Working');
  const asking = await taskFor('@b', 'InputRequired');
  await taskFor('@b'); // Submitted: listed by neither
  await taskFor('@c', 'Working'); // @c's: not @b's
  const texts = [
    'Working,InputRequired',
    'Working, TASK_STATE_INPUT_REQUIRED',
    ' working ,input-required ',
    '["Working","input-required"]',
    ' [ "Working", "TASK_STATE_INPUT_REQUIRED" ] ',
  ] as const;
  for (const state of texts) {
    const overHttp = await server.call('GET', `/v1/tasks?state=${encodeURIComponent(state)}`, { token: t['@b'] });
    expect(overHttp.status).toBe(200);
    const listed = await b.listTasks({ state });
    expect(ids(listed)).toEqual([working, asking].sort());
    expect(ids(listed)).toEqual(ids(overHttp.body));
  }
});

test('a state in the text that is none: refused as HTTP refuses it, naming the state meant', async () => {
  const overHttp = await server.call('GET', '/v1/tasks?state=Working,Done', { token: t['@b'] });
  expect(overHttp.status).toBe(400);
  // As a JavaScript caller (or a string the compiler cannot see) sends it: TypeScript refuses the literal.
  const text: string = 'Working,Done';
  const refused = await b.listTasks({ state: text as TaskStatesText }).catch((error: { envelope: unknown }) => error.envelope);
  expect(refused).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
  expect((refused as { message: string }).message).toContain(
    '"Done" is none of them: did you mean "state": ["Working","Completed"]?',
  );
  expect((refused as { message: string }).message.replace(/^[^:]*:/, '')).toBe(overHttp.body.message.replace(/^[^:]*:/, ''));
});

test('artifacts JSON-encoded as one string: the artifact HTTP writes for the same text; a malformed one writes nothing', async () => {
  const artifacts = '[{"name": "review", "parts": [{"kind": "text", "text": "LGTM"}]}]';
  const viaLibrary = await taskFor('@b', 'Working');
  const viaHttp = await taskFor('@b', 'Working');
  const before = await server.eventCount();
  const malformed = await b
    .updateTask({ taskId: viaLibrary, to: 'Completed', artifacts: '[{"parts": [{"type": "text", "text": "LGTM"}]}]' })
    .catch((error: { envelope: unknown }) => error.envelope);
  expect(malformed).toMatchObject({ code: 'VALIDATION_FAILED', field: 'artifacts.0.parts.0.kind' });
  expect(await server.eventCount()).toBe(before);
  const done = await b.updateTask({ taskId: viaLibrary, to: 'Completed', artifacts });
  expect(done).toMatchObject({ state: 'Completed', events: ['TaskArtifactAdded', 'TaskStateChanged'] });
  const overHttp = await server.call('POST', `/v1/tasks/${viaHttp}/transition`, {
    token: t['@b'],
    body: { to: 'Completed', artifacts },
  });
  expect(overHttp.body).toMatchObject({ state: 'Completed', events: ['TaskArtifactAdded', 'TaskStateChanged'] });
  const shown = async (taskId: string) =>
    (await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] })).body.artifacts.map(
      ({ name, parts }: { name: string; parts: unknown }) => ({ name, parts }),
    );
  expect(await shown(viaLibrary)).toEqual([{ name: 'review', parts: [{ kind: 'text', text: 'LGTM' }] }]);
  expect(await shown(viaLibrary)).toEqual(await shown(viaHttp));
});
