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
      if (!isPreprocessed(zodSchema)) return;
      const value = { ...jsonSchema };
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as JsonSchema)[key];
      Object.assign(jsonSchema, {
        anyOf: [value, { type: 'string', description: encodedForm }],
      });
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}
