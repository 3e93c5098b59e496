/** The OpenAPI 3.1 document, built from the route table and the commands' own zod schemas. */
import { ERROR_STATUS, type ErrorCode } from '../../errors';
import { VALID_RECIPIENT_SHAPES } from '../../commands/recipients';
import { inputJsonSchema, outputJsonSchema, withDescriptions } from '../../application/jsonSchema';
import { ROUTE_SPECS, type RouteSpec } from './routeSpecs';
import { DEFAULT_MAX_BODY_BYTES } from '../../config';
import { bodyLimitText, bytesText, type ServedLimits } from '../../application/servedLimits';

type Json = Record<string, unknown>;

const envelopeSchema: Json = {
  type: 'object',
  required: ['error', 'code', 'message'],
  properties: {
    error: { type: 'string', description: 'short title' },
    // CLIENT_CLOSED_REQUEST is recorded, never answered (errors.ts).
    code: { type: 'string', enum: Object.keys(ERROR_STATUS).filter((code) => code !== 'CLIENT_CLOSED_REQUEST') },
    message: { type: 'string', description: 'one actionable sentence' },
  },
  additionalProperties: true,
  example: {
    error: 'Invalid recipient shape',
    code: 'INVALID_RECIPIENT_SHAPE',
    to: 'AGENT:gpt',
    valid_shapes: VALID_RECIPIENT_SHAPES,
    message: "Recipient 'AGENT:gpt' does not match either valid shape. ...",
  },
};

/** A JSON-RPC 2.0 response holding an error: what the MCP transport answers for a request it refuses. */
const jsonRpcErrorSchema: Json = {
  type: 'object',
  required: ['jsonrpc', 'error', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'number', 'null'], description: "the request's id; null when it could not be read" },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer', description: 'JSON-RPC: -32700 parse error, -32600 invalid request, -32000 transport' },
        message: { type: 'string' },
        data: {},
      },
    },
  },
};

const ENVELOPE_REF = { $ref: '#/components/schemas/ErrorEnvelope' };
const JSON_RPC_ERROR_REF = { $ref: '#/components/schemas/JsonRpcError' };

/**
 * A route's answers in a protocol's own shape (routeSpec.ts), added to its responses: a status that also has envelope
 * errors answers one or the other (oneOf: an envelope has no jsonrpc, a JSON-RPC error no top-level code).
 */
function withProtocolAnswers(spec: RouteSpec, responses: Record<string, Json>): Record<string, Json> {
  for (const answer of spec.protocolAnswers ?? []) {
    const status = String(answer.status);
    if (answer.body === 'none') {
      responses[status] = { description: answer.description };
      continue;
    }
    const examples = Object.fromEntries(Object.entries(answer.examples ?? {}).map(([name, value]) => [name, { value }]));
    const envelope = responses[status];
    responses[status] = {
      description: envelope
        ? `${String(envelope.description)}; or a JSON-RPC error: ${answer.description}`
        : `JSON-RPC error: ${answer.description}`,
      content: {
        'application/json': { schema: envelope ? { oneOf: [ENVELOPE_REF, JSON_RPC_ERROR_REF] } : JSON_RPC_ERROR_REF, examples },
      },
    };
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

const TAGS: Array<{ name: RouteSpec['tag']; description: string }> = [
  { name: 'agents', description: 'Register, list and retire agents (admin)' },
  { name: 'messages', description: 'Send, list, read, mark read and archive messages' },
  {
    name: 'tasks',
    description:
      'A2A tasks carried by messages: claim an AGENT:* or list task (first claim wins), move it through its states, list and read them',
  },
  { name: 'views', description: 'Unread counts, heartbeat counts and the audit log' },
  { name: 'wake', description: 'Wake events as Server-Sent Events' },
  { name: 'mcp', description: 'The Model Context Protocol endpoint (the same tools as docs/mcp.md)' },
  { name: 'operations', description: 'Liveness, readiness, metrics and this documentation (no token)' },
];

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'identity' ? { type: 'string', example: '@neo-gpt' } : { type: 'string', format: 'uuid' },
    description: name === 'identity' ? '@name of the agent' : 'message id (UUID), as returned by a send',
  }));
}

function queryParameters(spec: RouteSpec): Json[] {
  if (!spec.query) return [];
  const schema = withDescriptions(
    inputJsonSchema(spec.query, 'comma-separated values or a JSON-encoded array', { query: true }),
    spec.queryDescriptions ?? {},
  );
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties).map(([name, { description, ...property }]) => ({
    name,
    in: 'query',
    required: false,
    ...(description ? { description } : {}),
    schema: property,
  }));
}

/**
 * What a client does about a code it can settle by itself, said with its status: a generated client shows the
 * description, and "409" alone reads as final. CONCURRENCY_CONFLICT is commandHandler.ts's (its retries ran out).
 */
function whatToDo(code: ErrorCode, spec: RouteSpec): string | null {
  if (code !== 'CONCURRENCY_CONFLICT') return null;
  const keyed = spec.headers?.some((header) => header.name === 'Idempotency-Key')
    ? ' With an Idempotency-Key, send it again with the same key: the message is written once, also when an answer was lost.'
    : '';
  return (
    'CONCURRENCY_CONFLICT: other writes to the same stream (named in `stream`) got there first on each of its attempts, ' +
    "and none of this request's events was written to it. Send the same request again: it is safe, decided afresh on " +
    `the stream as it then is, and writes nothing twice.${keyed}`
  );
}

function errorResponses(spec: RouteSpec, codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: [`Error envelope; code ${list.join(' | ')}`, ...list.map((code) => whatToDo(code, spec))]
          .filter((part) => part !== null)
          .join('. '),
        content: { 'application/json': { schema: ENVELOPE_REF } },
      },
    ]),
  );
}

function successContent({ success }: RouteSpec): Json {
  if (success.schema) return { 'application/json': { schema: outputJsonSchema(success.schema) } };
  return {
    [success.contentType ?? 'application/json']: {
      schema: { type: 'string' },
      ...(success.example ? { example: success.example } : {}),
    },
  };
}

function successHeaders({ success }: RouteSpec): Json {
  if (!success.headers?.length) return {};
  return {
    headers: Object.fromEntries(
      success.headers.map((h) => [h.name, { description: h.description, schema: { type: 'string', enum: h.values } }]),
    ),
  };
}

function operation(spec: RouteSpec, limits?: ServedLimits): Json {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: [spec.tag],
    description: `Caller: ${spec.auth}.`,
    ...(spec.auth === 'none' ? { security: [] } : {}),
    parameters: [
      ...pathParameters(spec.path),
      ...queryParameters(spec),
      ...(spec.headers ?? []).map((h) => ({
        name: h.name,
        in: 'header',
        required: false,
        description: h.description,
        schema: { type: 'string' },
      })),
    ],
    ...(spec.body
      ? {
          requestBody: {
            required: !spec.bodyOptional,
            content: {
              'application/json': {
                schema: withDescriptions(inputJsonSchema(spec.body), spec.bodyLimitDescriptions?.(limits) ?? {}),
              },
            },
          },
        }
      : {}),
    responses: withProtocolAnswers(spec, {
      [String(spec.success.status)]: {
        description: spec.success.description,
        ...successHeaders(spec),
        content: successContent(spec),
      },
      ...errorResponses(spec, withRefusalsOfEveryRoute(spec)),
    }),
  };
}

/**
 * The refusals every route of its kind gives, whatever else its input allows, so that a generated client knows
 * each status it can meet: every route refuses a query parameter it does not take (UNKNOWN_FIELD; writes take
 * none, writeQuery.ts) and a query string that is not percent-encoded UTF-8 (VALIDATION_FAILED, queryEncoding.ts);
 * every write reads a JSON body (VALIDATION_FAILED when it does not parse) and refuses a request over the request
 * limit (PAYLOAD_TOO_LARGE) before its route runs, also those that take no body fields.
 */
const withRefusalsOfEveryRoute = ({ method, errors }: RouteSpec): readonly ErrorCode[] => {
  const always: ErrorCode[] = ['UNKNOWN_FIELD', 'VALIDATION_FAILED'];
  if (method !== 'get') always.push('PAYLOAD_TOO_LARGE');
  return [...errors, ...always.filter((code) => !errors.includes(code))];
};

/**
 * `limits`: the serving server's (GET /openapi.json), stated as its own; none: the defaults' document (the checked-in
 * openapi.json, `npm run openapi`), which says so.
 */
export function buildOpenApiDocument(limits?: ServedLimits): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of ROUTE_SPECS) (paths[spec.path] ??= {})[spec.method] = operation(spec, limits);
  const stated = limits
    ? `The limits stated are this server's (a message body of at most ${bodyLimitText(limits)}).`
    : `This is the defaults' document: the limits stated are the defaults (a message body of at most ${bytesText(DEFAULT_MAX_BODY_BYTES)}, ` +
      'MAILBOX_MAX_BODY_BYTES); a server serves its own at GET /openapi.json.';
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-mailbox',
      version: 'v1',
      description:
        'An event-sourced mailbox for AI agents. Every error is the envelope {error, code, message, ...details}; ' +
        `the caller's identity comes only from the bearer token. ${stated}`,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: the server that serves this document (whatever host and port it listens on).
    servers: [{ url: '/', description: 'the server serving this document' }],
    security: [{ bearer: [] }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'admin token, or an agent/auditor token from POST /v1/agents' },
      },
      schemas: { ErrorEnvelope: envelopeSchema, JsonRpcError: jsonRpcErrorSchema },
    },
  };
}
