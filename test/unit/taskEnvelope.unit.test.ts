/** The A2A task envelope: equivalent spellings and JSON strings accepted and stored canonically; unknown keys rejected. */
import { sendMessageSchema } from '../../src/commands/schemas';
import { parseInput } from '../../src/commands/validation';
import { MailboxError } from '../../src/errors';

const base = { to: '@bob', subject: 'review please', body: 'see task' };
const taskOf = (task: unknown) => parseInput(sendMessageSchema, { ...base, task }, 'add_message').task;

function rejection(task: unknown): MailboxError {
  try {
    taskOf(task);
  } catch (error) {
    if (error instanceof MailboxError) return error;
    throw error;
  }
  throw new Error(`expected task ${JSON.stringify(task)} to be rejected`);
}

const full = {
  state: 'Submitted',
  input: {
    parts: [
      { kind: 'text', text: 'Please review' },
      { kind: 'data', data: { pr: 42 } },
      { kind: 'file', file: { uri: 'https://example.test/diff.patch', mimeType: 'text/x-patch' } },
    ],
  },
  metadata: {
    sessionId: 's-1',
    relatedTickets: ['T-1'],
    relatedDiscussions: ['D-1'],
    parentTask: 'task-0',
    priorComments: [{ url: 'https://example.test/c/1', commentId: 'c1' }],
  },
  expectedOutput: { shape: 'review', locationHint: 'PR comments' },
  budget: { deadline: '2025-03-02T00:00:00Z', maxTokens: 5000 },
  expiresAt: '2025-03-03T00:00:00.000+02:00',
};

describe('task envelope', () => {
  it('accepts the whole envelope as an object, unchanged', () => {
    expect(taskOf(full)).toEqual(full);
  });

  it('accepts the same envelope as a JSON-encoded string, stored as the same object', () => {
    expect(taskOf(JSON.stringify(full))).toEqual(full);
  });

  it.each(['input-required', 'TASK_STATE_INPUT_REQUIRED', 'InputRequired'])('state %j is stored as InputRequired', (state) => {
    expect(taskOf({ state })).toEqual({ state: 'InputRequired' });
    expect(taskOf(JSON.stringify({ state }))).toEqual({ state: 'InputRequired' });
  });

  it.each([
    ['submitted', 'Submitted'],
    ['TASK_STATE_WORKING', 'Working'],
    ['completed', 'Completed'],
    ['canceled', 'Canceled'],
    ['TASK_STATE_CANCELLED', 'Canceled'],
    ['TASK_STATE_CANCELED', 'Canceled'],
    ['failed', 'Failed'],
    ['rejected', 'Rejected'],
    ['auth-required', 'AuthRequired'],
    ['TASK_STATE_AUTH_REQUIRED', 'AuthRequired'],
    ['unknown', 'Unknown'],
    ['TASK_STATE_UNSPECIFIED', 'Unknown'], // what GET /v1/tasks/{id} answers for Unknown (A2A v1.0 has no UNKNOWN)
  ])('state %j is stored as %s', (state, canonical) => {
    expect(taskOf({ state })).toEqual({ state: canonical });
  });

  it.each(['done', 'in-progress', '', 'TASK_STATE_'])(
    'bad state %j: VALIDATION_FAILED naming task.state and listing the states',
    (state) => {
      const error = rejection({ state });
      expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.state' });
      expect(error.message).toMatch(/InputRequired/);
    },
  );

  // They were stored as the state (compared in any case, without separators), while a priority 'High' is refused naming
  // 'high': a state is now written exactly in one of its three spellings, or refused naming the state meant.
  it.each([
    ['input_required', 'InputRequired'],
    ['INPUT-REQUIRED', 'InputRequired'],
    ['Input Required', 'InputRequired'],
    ['COMPLETED', 'Completed'],
    ['Cancelled', 'Canceled'],
    ['task_state_working', 'Working'],
  ])('state %j in another case or with other separators: VALIDATION_FAILED suggesting %s, written exactly so', (state, meant) => {
    const error = rejection({ state });
    expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.state' });
    expect(error.message).toContain(`not ${JSON.stringify(state)}: did you mean ${meant}? (written exactly so)`);
  });

  it.each([
    [{ state: 'Working', owner: '@x' }, 'task.owner'],
    [{ metadata: { sessionId: 's', color: 'red' } }, 'task.metadata.color'],
    [{ input: { parts: [{ kind: 'text', text: 'hi', lang: 'en' }] } }, 'task.input.parts.0.lang'],
    [{ budget: { maxTokens: 10, currency: 'usd' } }, 'task.budget.currency'],
    [{ expectedOutput: { shape: 'pr', repo: 'x' } }, 'task.expectedOutput.repo'],
  ])('unknown nested key in %j: UNKNOWN_FIELD %s', (task, field) => {
    expect(rejection(task).envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field });
  });

  it('an unknown key inside a JSON-string task is rejected the same way, with the allowed keys', () => {
    const error = rejection(JSON.stringify({ state: 'Working', owner: '@x' }));
    expect(error.envelope).toMatchObject({
      code: 'UNKNOWN_FIELD',
      field: 'task.owner',
      allowed: ['state', 'input', 'metadata', 'expectedOutput', 'budget', 'expiresAt'],
    });
  });

  it.each([
    ['{not json', 'task'],
    [{ input: { parts: [{ kind: 'image', uri: 'x' }] } }, 'task.input.parts.0.kind'],
    [{ expectedOutput: { shape: 'essay' } }, 'task.expectedOutput.shape'],
    [{ budget: { deadline: 'tomorrow' } }, 'task.budget.deadline'],
    [{ budget: { maxTokens: -5 } }, 'task.budget.maxTokens'],
    [{ expiresAt: '2025-13-01' }, 'task.expiresAt'],
    [42, 'task'],
  ])('malformed %j: VALIDATION_FAILED at %s', (task, field) => {
    expect(rejection(task).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field });
  });
});
