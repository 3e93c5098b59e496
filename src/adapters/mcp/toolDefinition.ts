/** What an MCP tool is, as data: its schemas, hints and how it runs on the agent API (tools.ts, taskTools.ts). */
import type { z } from 'zod';
import { parseInput } from '../../commands/validation';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { AgentApi } from '../../application/agentApi';
import type { CommandName } from '../../application/commandNames';
import type { StatedLimits } from '../../application/servedLimits';

export interface ToolDefinition {
  name: string;
  /** The command it runs, as /metrics and the rejection log name it (add_message: send); a read has none. */
  command?: CommandName;
  description: string;
  schema: z.ZodType;
  /** The result (structuredContent) on success. */
  output: z.ZodType;
  annotations: ToolAnnotations;
  /** Descriptions for properties of a schema owned elsewhere (the list query lives with the projections). */
  propertyDescriptions?: Record<string, string>;
  /** Descriptions of properties that state a configured limit, as the serving server has it (servedLimits.ts). */
  limitDescriptions?: (limits?: StatedLimits) => Record<string, string>;
  /** Advertised instead of the generated schema of a property (the compact task). */
  propertySchemas?: Record<string, Record<string, unknown>>;
  /** How a string may stand in for a structured field of this tool's input (for the advertised schema). */
  encodedForm?: string;
  run(api: AgentApi, args: unknown): Promise<object | WithMeta>;
}

/**
 * A tool's result with something said beside it, in the CallToolResult's `_meta`: the result (structuredContent and
 * the text) stays exactly the documented one, as a replayed add_message must (DESIGN: a retry returns the original).
 */
export class WithMeta {
  constructor(
    readonly result: object,
    readonly meta: Record<string, unknown>,
  ) {}
}

/** add_message's `_meta` key, true when the call replayed a send made already with its idempotencyKey (absent otherwise). */
export const REPLAYED_META = 'agent-mailbox/replayed';

/**
 * The arguments, once the tool's schema accepts them (the command layer's own check, in its words). For tools whose
 * arguments `mailbox mcp` carries in a query string or a path, where a null is left out, an object becomes its JSON
 * text and an id of ".." climbs out of the route: checked here, they are refused as POST /mcp refuses them.
 */
export function checkedArguments(schema: z.ZodType, args: unknown, tool: string): unknown {
  parseInput(schema, args ?? {}, tool);
  return args ?? {};
}
