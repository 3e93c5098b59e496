/** One API route as data, for the OpenAPI document (routeSpecs.ts, taskRouteSpecs.ts). */
import type { z } from 'zod';
import type { ErrorCode } from '../../errors';
import type { ServedLimits } from '../../application/servedLimits';

export interface RouteSpec {
  method: 'get' | 'post' | 'delete';
  path: string; // OpenAPI form: /v1/messages/{id}
  operationId: string;
  summary: string;
  tag: 'agents' | 'messages' | 'tasks' | 'views' | 'wake' | 'mcp' | 'operations';
  auth:
    | 'agent'
    | 'admin'
    | 'any'
    | 'auditor or admin'
    | 'none'
    | 'sender, recipient, auditor or admin'
    | 'sender, audience or auditor'
    | 'sender, auditor or admin';
  body?: z.ZodType;
  /** Descriptions of body properties that state a configured limit, as the serving server has it (servedLimits.ts). */
  bodyLimitDescriptions?: (limits?: ServedLimits) => Record<string, string>;
  /** The body may be left out (the route reads none as `{}`): documented `required: false`. */
  bodyOptional?: true;
  query?: z.ZodType;
  /** Descriptions of the query parameters (their schema may live elsewhere). */
  queryDescriptions?: Record<string, string>;
  headers?: Array<{ name: string; description: string }>;
  /** The answer: a zod schema for JSON, or a content type and a plain schema for anything else. */
  success: {
    status: number;
    description: string;
    schema?: z.ZodType;
    contentType?: string;
    example?: string;
    /** Headers the answer may carry (a replayed send's Idempotent-Replayed), each with the values it takes. */
    headers?: Array<{ name: string; description: string; values: string[] }>;
  };
  errors: ErrorCode[];
  /**
   * Answers in a protocol's own shape rather than the error envelope (MCP's transport answers a JSON-RPC error, or
   * nothing), by status, with their real bodies as examples. Where a status also has envelope errors, its body is
   * one or the other.
   */
  protocolAnswers?: ProtocolAnswer[];
}

export interface ProtocolAnswer {
  status: number;
  description: string;
  /** jsonRpcError: a JSON-RPC 2.0 response holding an error; none: an empty body. */
  body: 'jsonRpcError' | 'none';
  /** Real bodies, by a short name (for jsonRpcError). */
  examples?: Record<string, unknown>;
}
