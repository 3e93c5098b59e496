/**
 * JSON Schema for the HTTP (OpenAPI) and MCP surfaces, derived from the same zod
 * schemas the commands validate with, so the documents cannot drift from the checks.
 */
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

const isPreprocessed = (schema: unknown): boolean => {
  const def = (schema as { _zod?: { def?: { type?: string; in?: { _zod?: { def?: { type?: string } } } } } })._zod?.def;
  return def?.type === 'pipe' && def.in?._zod?.def?.type === 'transform';
};

/**
 * A `format` (uuid, date-time) already says what zod's long regex says; a
 * reader (a person, a model counting tokens) gets the format alone.
 */
function dropRedundantPattern(jsonSchema: JsonSchema): void {
  if (typeof jsonSchema.format === 'string' && typeof jsonSchema.pattern === 'string') delete jsonSchema.pattern;
}

/**
 * The input side of a schema. Fields that also accept an encoded string (zod
 * preprocess: a JSON-encoded task or id list, a comma-separated tag list) are
 * advertised as `anyOf [value, string]`, so strict clients do not refuse a form
 * the server accepts.
 */
export function inputJsonSchema(schema: z.ZodType, encodedForm = 'the same value, JSON-encoded as a string'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      dropRedundantPattern(jsonSchema);
      if (!isPreprocessed(zodSchema)) return;
      const { description, ...value } = jsonSchema as JsonSchema;
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as JsonSchema)[key];
      Object.assign(jsonSchema, {
        ...(description === undefined ? {} : { description }),
        anyOf: [value, { type: 'string', description: encodedForm }],
      });
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** The output side of a schema (what a response carries). */
export function outputJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
    override: ({ jsonSchema }) => dropRedundantPattern(jsonSchema),
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Adds descriptions to top-level properties a schema does not describe itself (schemas owned elsewhere). */
export function withDescriptions(json: JsonSchema, descriptions: Record<string, string>): JsonSchema {
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, description] of Object.entries(descriptions)) {
    if (properties[name] && properties[name].description === undefined) properties[name] = { ...properties[name], description };
  }
  return json;
}
