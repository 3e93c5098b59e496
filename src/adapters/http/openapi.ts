/** The OpenAPI 3.1 document, built from the route table and the commands' own zod schemas. */
import { ERROR_STATUS, type ErrorCode } from '../../errors';
import { VALID_RECIPIENT_SHAPES } from '../../commands/recipients';
import { inputJsonSchema } from '../../application/jsonSchema';
import { ROUTE_SPECS, type RouteSpec } from './routeSpecs';

type Json = Record<string, unknown>;

const envelopeSchema: Json = {
  type: 'object',
  required: ['error', 'code', 'message'],
  properties: {
    error: { type: 'string', description: 'short title' },
    code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'one actionable sentence' },
  },
  additionalProperties: true,
  example: {
    error: 'Invalid recipient shape', code: 'INVALID_RECIPIENT_SHAPE', to: 'AGENT:gpt', valid_shapes: VALID_RECIPIENT_SHAPES,
    message: "Recipient 'AGENT:gpt' does not match either valid shape. ...",
  },
};

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name, in: 'path', required: true,
    schema: { type: 'string' },
    description: name === 'identity' ? '@name of the agent' : 'message id (UUID)',
  }));
}

function queryParameters(spec: RouteSpec): Json[] {
  if (!spec.query) return [];
  const schema = inputJsonSchema(spec.query, 'comma-separated values or a JSON-encoded array');
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties).map(([name, property]) => ({
    name, in: 'query', required: false, ...(property.description ? { description: property.description } : {}), schema: property,
  }));
}

function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries([...byStatus].map(([status, list]) => [String(status), {
    description: `Error envelope; code ${list.join(' | ')}`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
  }]));
}

function operation(spec: RouteSpec): Json {
  const contentType = spec.success.contentType ?? 'application/json';
  return {
    summary: spec.summary,
    tags: [spec.tag],
    description: `Caller: ${spec.auth}.`,
    ...(spec.auth === 'none' ? { security: [] } : {}),
    parameters: [
      ...pathParameters(spec.path),
      ...queryParameters(spec),
      ...(spec.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })),
    ],
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: inputJsonSchema(spec.body) } } } } : {}),
    responses: {
      [String(spec.success.status)]: { description: spec.success.description, content: { [contentType]: {} } },
      ...errorResponses(spec.errors),
    },
  };
}

export function buildOpenApiDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of ROUTE_SPECS) (paths[spec.path] ??= {})[spec.method] = operation(spec);
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-mailbox',
      version: 'v1',
      description: 'An event-sourced mailbox for AI agents. Every error is the envelope {error, code, message, ...details}; ' +
        'the caller\'s identity comes only from the bearer token.',
    },
    servers: [{ url: 'http://127.0.0.1:7420' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'admin token, or an agent/auditor token from POST /v1/agents' } },
      schemas: { ErrorEnvelope: envelopeSchema },
    },
  };
}
