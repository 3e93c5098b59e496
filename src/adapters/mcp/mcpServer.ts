/**
 * MCP servers over an AgentApi. They use the SDK's low-level Server rather
 * than McpServer because McpServer validates tool input itself and answers
 * with its own message; here the command layer validates, so a bad input
 * comes back as a tool error carrying the same envelope as HTTP.
 */
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { MailboxError, answeredEnvelope, isMailboxError } from '../../errors';
import { duplicateKeyError, pathOfDuplicateKey } from '../../commands/jsonDuplicateKeys';
import { compactJsonSchema, inputJsonSchema, outputJsonSchema, withDescriptions } from '../../application/jsonSchema';
import { packageVersion } from '../../packageVersion';
import type { AgentApi } from '../../application/agentApi';
import type { StatedLimits } from '../../application/servedLimits';
import { TOOLS, type ToolDefinition } from './tools';
import { WithMeta } from './toolDefinition';
import { toolsMeant } from './toolNameSuggestions';
import { jsonRpcError } from './jsonRpcRefusals';

const INSTRUCTIONS =
  'A mailbox shared by AI agents. Check unread_count or list_messages {status: "unread"}, read with get_message, ' +
  'then mark_read. Send with add_message to @<identity> (direct) or AGENT:* (broadcast).';

/**
 * The instructions, opening with who the caller is when its token names an agent: no tool says it (the HTTP API has
 * GET /v1/whoami), so a model asked to introduce itself, to tell its own mail from another's or not to write to itself
 * had to infer its identity from the `to` of the mail it was sent.
 */
const instructionsFor = (caller?: { identity: string; role: string } | null): string =>
  caller?.role === 'agent'
    ? `You are ${caller.identity} (from your token): what you send is from ${caller.identity}, and your inbox is the ` +
      `mail to ${caller.identity}. ${INSTRUCTIONS}`
    : INSTRUCTIONS;

/** A refusal to retry later (UNAVAILABLE) says when, as the HTTP API's 503 does (retryAfterSeconds). */
const toolError = (error: MailboxError): CallToolResult => {
  const envelope = answeredEnvelope(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope };
};

const unknownTool = (name: string) => {
  const tools = TOOLS.map((t) => t.name);
  const suggestions = toolsMeant(name, tools);
  const meant = suggestions.length > 0 ? ` Did you mean ${suggestions.join(' or ')}?` : '';
  return new MailboxError('NOT_FOUND', 'Unknown tool', `There is no tool '${name}'.${meant} The tools are ${tools.join(', ')}.`, {
    tool: name,
    ...(suggestions.length > 0 ? { suggestions } : {}),
    tools,
  });
};

type Json = Record<string, unknown>;

/**
 * Output schemas are for validating clients, not for the model to read:
 * descriptions stay in the OpenAPI document, and only the top level lists its
 * required fields (the OpenAPI test holds every level against real answers).
 * A nested open object (a warning, an error envelope: more keys may come) is
 * just an object: its keys constrain nothing, and tools/list is read by a
 * model on every session (its size is held under a budget: mcpToolList.e2e).
 */
function outline(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((item) => outline(item, depth));
  if (!value || typeof value !== 'object') return value;
  const nested = depth > 1; // 1: the result object itself (or each member of a union of results)
  if (nested && isOpenObject(value as Json)) return { type: 'object' };
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'description' && !(nested && key === 'required'))
      .map(([key, v]) => [key, outline(v, key === 'anyOf' ? depth : depth + 1)]),
  );
}

/** What a failed call carries as structuredContent (isError: true): the error envelope. */
const ENVELOPE_JSON_SCHEMA: Json = {
  type: 'object',
  required: ['error', 'code', 'message'],
  properties: { error: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
};

/**
 * A call's structuredContent is its result or, with isError, the error
 * envelope: the outputSchema admits both, so validating clients accept either.
 */
function outputSchemaOf(schema: z.ZodType): Tool['outputSchema'] {
  const json = compactJsonSchema(outline(outputJsonSchema(schema), 1), { strict: false }) as Json;
  const results = Array.isArray(json.anyOf) ? json.anyOf : [json];
  return { type: 'object', anyOf: [...results, ENVELOPE_JSON_SCHEMA] } as Tool['outputSchema'];
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** An object schema that admits any further key (zod's looseObject: `additionalProperties: {}`). */
const isOpenObject = (schema: Json): boolean =>
  schema.type === 'object' && isObject(schema.additionalProperties) && Object.keys(schema.additionalProperties).length === 0;

/** What a wrong `arguments` was, for the message: null, an array, a number, a string that is not a JSON object. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string that is not a JSON object';
  return `a ${typeof value}`;
}

/**
 * Some clients send `arguments` JSON-encoded. A JSON object string is the same
 * input in another form: decoded, losslessly. Anything else (null, an array, a
 * number, other text) is -32602 with the envelope, never the SDK's schema dump.
 */
function decodeArguments(value: unknown): unknown {
  if (value === undefined || isObject(value)) return value; // left out: the tool's own validation names what it needs
  let decoded: unknown;
  if (typeof value === 'string') {
    try {
      decoded = JSON.parse(value);
    } catch {
      decoded = undefined;
    }
  }
  if (isObject(decoded)) {
    const repeated = pathOfDuplicateKey(value as string); // JSON.parse kept the last of a repeated key: refused, not guessed
    if (repeated === null) return decoded;
    throw new RefusedParams(duplicateKeyError(repeated, ['arguments']));
  }
  const error = new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    'tools/call: \'arguments\' must be an object of the tool\'s named arguments (e.g. {"messageId": "<id>"}), ' +
      `or that object JSON-encoded as one string; got ${kindOf(value)}.`,
    { field: 'arguments' },
  );
  throw new RefusedParams(error);
}

/**
 * A tools/call must name its tool. Without params, or with a name that is not a string, the SDK's own check
 * answered -32603 (an internal error) with zod's issue dump: the client's mistake is -32602 with the envelope
 * and the tools it may name.
 */
function checkParams(value: unknown): unknown {
  if (isObject(value) && typeof value.name === 'string') return refuseOtherParams(value);
  const tools = TOOLS.map((tool) => tool.name);
  const error = new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `tools/call: 'name' must name one of the tools: ${tools.join(', ')} (params: {"name": "<tool>", "arguments": {...}}); ` +
      `got ${isObject(value) ? (value.name === undefined ? 'no name' : kindOf(value.name)) : value === undefined ? 'no params' : kindOf(value)}.`,
    { field: 'name', tools },
  );
  throw new RefusedParams(error);
}

/** What a tools/call's params hold (MCP 2025-11-25; `task`, its task metadata, is checked and ignored before). */
const CALL_PARAMS = ['name', 'arguments', '_meta'];

/**
 * A tools/call whose params hold another key: `{"name": "list_messages", "input": {"status": "unread"}}` (`args`,
 * `parameters`, ...). The SDK ignored it, so the tool ran without its arguments, on its defaults: a listing of
 * everything for the unread ones asked, silently. Refused, naming the key and where a tool's arguments go.
 */
function refuseOtherParams(params: Json): Json {
  const others = Object.keys(params).filter((key) => !CALL_PARAMS.includes(key) && key !== 'task');
  if (others.length === 0) return params;
  const [key] = others;
  const meant = params.arguments === undefined ? ['arguments'] : [];
  const form = `{"name": ${JSON.stringify(params.name)}, "arguments": {...}}`;
  const error = new MailboxError(
    'UNKNOWN_FIELD',
    'Unknown field',
    `tools/call does not take 'params.${key}'${meant.length > 0 ? " (did you mean 'arguments'?)" : ''}: its params are ` +
      `name, arguments and _meta, and a tool's arguments go in "arguments": ${form}. Nothing was run.`,
    {
      field: `params.${key}`,
      fields: others.map((other) => `params.${other}`),
      allowed: CALL_PARAMS,
      ...(meant.length > 0 ? { suggestions: meant } : {}),
    },
  );
  throw new RefusedParams(error);
}

/** A tools/call's params refused (-32602, the envelope as its data), keeping the refusal for the rejection log. */
class RefusedParams extends McpError {
  constructor(readonly refusal: MailboxError) {
    super(ErrorCode.InvalidParams, refusal.message, refusal.envelope);
  }
}

/**
 * A tools/call's params are checked by its handler (checkedCall), which records what it refuses before answering. The
 * SDK checks the request this schema returns against its own before our handler runs, and would refuse wrong params in
 * its words, unrecorded: to it they are a call of no tool (with their _meta), the params as sent beside.
 */
const CallToolWithEncodedArguments = z.looseObject({
  method: z.literal('tools/call'),
  params: z
    .unknown()
    .optional()
    .transform((sent) => ({ name: '', ...(isObject(sent) && isObject(sent._meta) ? { _meta: sent._meta } : {}), sent })),
});

/** A tools/call's params as the tool runs them (the name, the arguments decoded), or RefusedParams. */
function checkedCall(params: unknown): { name: string; arguments: unknown } {
  const call = checkParams(params) as Json & { name: string };
  return { name: call.name, arguments: decodeArguments(call.arguments) };
}

function inputSchemaOf(tool: ToolDefinition, limits?: StatedLimits): Tool['inputSchema'] {
  const json = withDescriptions(inputJsonSchema(tool.schema, tool.encodedForm ?? 'JSON-encoded'), {
    ...tool.propertyDescriptions,
    ...tool.limitDescriptions?.(limits),
  });
  const properties = { ...(json.properties as Json), ...tool.propertySchemas };
  return compactJsonSchema({ ...json, properties }) as Tool['inputSchema'];
}

/** The methods the SDK answers (tools/call checks its own params: CallToolWithEncodedArguments), with their valid params. */
const PARAMS_OF: Record<string, { schema: { safeParse(value: unknown): { success: boolean; error?: unknown } }; form: string }> =
  {
    initialize: {
      schema: InitializeRequestSchema,
      form: '{"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "my-client", "version": "1.0.0"}}',
    },
    'tools/list': { schema: ListToolsRequestSchema, form: '{} (or none), or {"cursor": "<nextCursor of the previous page>"}' },
    ping: { schema: PingRequestSchema, form: '{} or none' },
  };

type Issue = { path: PropertyKey[]; message: string };

/**
 * A request to one of those methods whose params its schema refuses. The SDK parsed them in the handler and answered
 * the ZodError as JSON-RPC -32603, an internal error, whose message was zod's issue dump: the server blamed itself for
 * the client's request. It is -32602 (Invalid params) naming each wrong param and the valid form, with the envelope.
 */
export function invalidParams(message: JSONRPCMessage): MailboxError | null {
  if (!('method' in message) || !('id' in message)) return null;
  const method = PARAMS_OF[message.method];
  const parsed = method?.schema.safeParse(message);
  if (!method || !parsed || parsed.success) return null;
  const issues = ((parsed.error as { issues?: Issue[] }).issues ?? []).map((issue) => ({
    field: issue.path.map(String).join('.'),
    message: issue.message.replace(/^Invalid input: /, ''),
  }));
  const error = new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `Invalid params for ${message.method}: ${issues.map((issue) => `'${issue.field}' ${issue.message}`).join('; ')}. ` +
      `Send params such as ${method.form}.`,
    { field: issues[0]?.field ?? 'params', method: message.method, issues },
  );
  return error;
}

const TASK_FORM = '{"ttl": <milliseconds>}';

/**
 * What is wrong with a tools/call's `task` (MCP 2025-11-25 task augmentation: `{ttl?: number}`), or null. A valid one
 * is ignored (taskMetadataIgnored). Anything else is no task metadata: refused, never run as if it were, nor dropped
 * (an A2A task envelope sent here instead of in add_message's arguments would be sent as a plain message).
 */
function taskProblem(task: unknown): [string, string] | null {
  const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);
  if (!isObject(task)) return ['params.task', `must be an object such as ${TASK_FORM} (got ${kind(task)})`];
  const other = Object.keys(task).filter((key) => key !== 'ttl');
  if (other.length > 0)
    return [
      'params.task',
      `holds ${other.map((key) => `'${key}'`).join(', ')}: MCP task metadata is ${TASK_FORM} alone. A mailbox task ` +
        '(an A2A envelope: state, input...) goes in the arguments of add_message, as arguments.task',
    ];
  if ('ttl' in task && typeof task.ttl !== 'number')
    return ['params.task.ttl', `must be a number of milliseconds (got ${kind(task.ttl)})`];
  return null;
}

/**
 * A tools/call with a `task` this server cannot read as task metadata: -32602 naming it. The SDK answered it with its
 * own schema's issue dump ("Invalid tools/call request: [...]").
 */
function invalidTask(message: JSONRPCMessage): MailboxError | null {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return null;
  const params = message.params as Json | undefined;
  if (!isObject(params) || !('task' in params)) return null;
  const problem = taskProblem(params.task);
  if (problem === null) return null;
  const [field, wrong] = problem;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `Invalid params for tools/call: '${field}' ${wrong}. This server runs tools/call without task augmentation (it ` +
      'declares no tasks capability): the tool runs and answers at once, and valid task metadata is ignored. Leave ' +
      '"task" out. Nothing was done.',
    { field, method: 'tools/call' },
  );
}

/**
 * A tools/call with valid task metadata, without it. This server declares no tasks capability, and MCP 2025-11-25 says
 * a receiver that does not declare it for a request type MUST process such requests normally, ignoring the task
 * metadata: the SDK answered -32603 "Server does not support task creation", an internal error blaming the server
 * for a request it must serve. The answer is the tool's result (not a CreateTaskResult), which tells the client so.
 */
function taskMetadataIgnored(message: JSONRPCMessage): JSONRPCMessage {
  if (!('method' in message) || message.method !== 'tools/call' || !isObject(message.params) || !('task' in message.params))
    return message;
  const { task: _ignored, ...params } = message.params as Json;
  return { ...message, params } as JSONRPCMessage;
}

/** The methods this server answers (the SDK answers initialize and ping itself); the rest are notifications. */
const METHODS = ['initialize', 'ping', 'tools/list', 'tools/call'];

/**
 * A request for a method this server does not answer. The SDK answered -32601 "Method not found", naming neither the
 * method nor those there are; it is still -32601, with the envelope naming both, the likeliest meant first.
 */
function unknownMethod(message: JSONRPCMessage): MailboxError | null {
  if (!('method' in message) || !('id' in message) || METHODS.includes(message.method)) return null;
  if (message.method.startsWith('notifications/')) return null;
  const suggestions = toolsMeant(message.method, METHODS);
  const meant = suggestions.length > 0 ? ` Did you mean ${suggestions.join(' or ')}?` : '';
  const called = TOOLS.some((tool) => tool.name === message.method)
    ? ` A tool is called with tools/call: {"method": "tools/call", "params": {"name": "${message.method}", "arguments": {...}}}.`
    : '';
  return new MailboxError(
    'NOT_FOUND',
    'Method not found',
    `Method not found: there is no method '${message.method}'.${meant}${called} This server answers ` +
      `${METHODS.join(', ')}. Nothing was done.`,
    { method: message.method, methods: METHODS, ...(suggestions.length > 0 ? { suggestions } : {}) },
  );
}

/**
 * Answers, on `transport` (connected to a server), the requests invalidParams, invalidTask and unknownMethod refuse,
 * each told to `refused` first; passes on all else.
 */
export function refuseInvalidParams(transport: Transport, refused: Refused = () => {}): void {
  const dispatch = transport.onmessage; // set by connect: the server's own handling of each message
  // Returns, for a refusal, the promise of its answer (a caller keeping answers in order may wait for it).
  transport.onmessage = (message, extra): void | Promise<void> => {
    const unknown = unknownMethod(message);
    const refusal = unknown ?? invalidParams(message) ?? invalidTask(message);
    if (!refusal || !('id' in message)) return dispatch?.(taskMetadataIgnored(message), extra);
    const code = unknown ? ErrorCode.MethodNotFound : ErrorCode.InvalidParams;
    const answer = jsonRpcError(code, refusal, message.id) as JSONRPCMessage;
    return Promise.resolve(refused(refusedCommand(message), refusal, message))
      .then(() => transport.send(answer))
      .catch(() => undefined);
  };
}

/**
 * Told of each refusal an MCP server answers (the rejection log; `mailbox mcp` has the server record it): the command
 * it was for (refusedCommand), the error, and the JSON-RPC message refused (a tool call's: `{method, params}` as
 * called). The answer waits for it.
 */
export type Refused = (command: string, error: MailboxError, message: unknown) => void | Promise<void>;
/** A tool call's refusal, told as every refusal is. */
export type ToolRefused = Refused;

/**
 * What a refused JSON-RPC message was for, as the rejection log names it: a tool call's command (add_message: send,
 * as /metrics names it) or its tool as called (a read, a tool that does not exist), else its method (initialize,
 * tools/call with no tool named), else `unread` (no method could be read).
 */
export function refusedCommand(message: unknown, unread = 'JSON-RPC'): string {
  if (!isObject(message) || typeof message.method !== 'string') return unread;
  const name = isObject(message.params) ? message.params.name : undefined;
  if (message.method !== 'tools/call' || typeof name !== 'string') return message.method;
  const tool = TOOLS.find((t) => t.name === name);
  return tool?.command ?? name;
}

const toolCallOf = (params: unknown) => ({ jsonrpc: '2.0', id: 0, method: 'tools/call', params });

async function said(refused: Refused, command: string, error: MailboxError, params: unknown): Promise<MailboxError> {
  await refused(command, error, toolCallOf(params));
  return error;
}

/**
 * Builds the tool list once; stateless HTTP makes one server per request from it. `limits`, stated in the schemas:
 * the serving server's (POST /mcp), or those `mailbox mcp`'s server gave at start (GET /v1/whoami); LIMITS_UNREAD when
 * it could not be asked: the defaults, said to be, and that its own could not be read.
 */
export class McpServerFactory {
  private readonly version = packageVersion();
  readonly tools: Tool[];

  constructor(
    private readonly onUnexpected: (error: unknown) => void = () => {},
    limits?: StatedLimits,
  ) {
    this.tools = TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: inputSchemaOf(tool, limits),
      outputSchema: outputSchemaOf(tool.output),
      annotations: tool.annotations,
    }));
  }

  /**
   * `refused` hears each refusal a tool call answers, by the command (or tool name) it was for: the rejection log.
   * `caller`, the token's holder, is named in the instructions.
   */
  create(api: AgentApi, refused: Refused = () => {}, caller?: { identity: string; role: string } | null): Server {
    const server = new Server(
      { name: 'agent-mailbox', version: this.version },
      { capabilities: { tools: {} }, instructions: instructionsFor(caller) },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolWithEncodedArguments, async ({ params: { sent } }) => {
      let call: { name: string; arguments: unknown };
      try {
        call = checkedCall(sent);
      } catch (error) {
        if (error instanceof RefusedParams)
          await refused(refusedCommand({ method: 'tools/call', params: sent }), error.refusal, toolCallOf(sent));
        throw error;
      }
      return this.call(api, call.name, call.arguments, refused);
    });
    return server;
  }

  async call(api: AgentApi, name: string, args: unknown, refused: Refused = () => {}): Promise<CallToolResult> {
    const tool = TOOLS.find((t) => t.name === name);
    const params = { name, arguments: args };
    // A tool that does not exist is refused for its name alone: the message told is the name (its arguments may be large).
    if (!tool) return toolError(await said(refused, name, unknownTool(name), { name }));
    try {
      // A call without `arguments` (MCP makes them optional) is a call with none: {}, so that what the tool requires is
      // named field by field, as for {} (add_message was told only "the input is required: an object").
      const answer = await tool.run(api, args ?? {});
      const [result, meta] = answer instanceof WithMeta ? [answer.result, answer.meta] : [answer, undefined];
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }],
        structuredContent: result as Record<string, unknown>,
        ...(meta ? { _meta: meta } : {}),
      };
    } catch (error) {
      const command = tool.command ?? tool.name;
      if (isMailboxError(error)) return toolError(await said(refused, command, error, params));
      this.onUnexpected(error);
      return toolError(
        await said(
          refused,
          command,
          new MailboxError('INTERNAL', 'Internal error', 'The tool failed unexpectedly; it has been logged. Retry later.'),
          params,
        ),
      );
    }
  }
}
