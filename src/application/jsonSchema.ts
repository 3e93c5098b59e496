/**
 * JSON Schema for the HTTP (OpenAPI) and MCP surfaces, derived from the same zod
 * schemas the commands validate with, so the documents cannot drift from the checks.
 */
import { z } from 'zod';
import { decimalTextPattern, isDecimalText } from '../support/decimalText';

type JsonSchema = Record<string, unknown>;

const isPreprocessed = (schema: unknown): boolean => {
  const def = (schema as { _zod?: { def?: { type?: string; in?: { _zod?: { def?: { type?: string } } } } } })._zod?.def;
  return def?.type === 'pipe' && def.in?._zod?.def?.type === 'transform';
};

/**
 * zod leaves out the `default` of a field whose input is read before it is checked (a preprocess): a number read from
 * decimal text (a page size) keeps it, first as zod writes it.
 */
function keepDecimalTextDefault(zodSchema: unknown, jsonSchema: JsonSchema): void {
  const def = (zodSchema as { _zod?: { def?: { type?: string; innerType?: object; defaultValue?: unknown } } })._zod?.def;
  if (def?.type !== 'default' || def.innerType === undefined || !isDecimalText(def.innerType)) return;
  if (jsonSchema.default !== undefined) return;
  const rest = { ...jsonSchema };
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  Object.assign(jsonSchema, { default: def.defaultValue, ...rest });
}

/**
 * A `format` (uuid, date-time) already says what zod's long regex says; a
 * reader (a person, a model counting tokens) gets the format alone.
 */
function dropRedundantPattern(jsonSchema: JsonSchema): void {
  if (typeof jsonSchema.format === 'string' && typeof jsonSchema.pattern === 'string') delete jsonSchema.pattern;
}

/**
 * A number that is also read from its decimal digits (a page size, a lease) in a JSON body or a tool call: advertised
 * as a number or a string of digits (`pattern` constrains only the string, `minimum` and `maximum` only the number),
 * so that the schema says the two forms the server takes, in a few bytes (tools/list is read on every session).
 */
function numberOrDigits(zodSchema: unknown, jsonSchema: JsonSchema): void {
  const pattern = decimalTextPattern(zodSchema as object);
  if (pattern === undefined || typeof jsonSchema.type !== 'string') return;
  const { type, ...rest } = jsonSchema;
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  Object.assign(jsonSchema, { type: [type, 'string'], pattern, ...rest });
}

/**
 * The input side of a schema. Fields that also accept an encoded string (zod
 * preprocess: a JSON-encoded task or id list, a comma-separated tag list) are
 * advertised as `anyOf [value, string]`, so strict clients do not refuse a form
 * the server accepts. A number also read from its digits is advertised as
 * either, except in a query string (`query`), where every value is text: there
 * it is documented as the number.
 */
export function inputJsonSchema(
  schema: z.ZodType,
  encodedForm = 'the same value, JSON-encoded as a string',
  { query = false } = {},
): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      dropRedundantPattern(jsonSchema);
      keepDecimalTextDefault(zodSchema, jsonSchema);
      if (!query) numberOrDigits(zodSchema, jsonSchema);
      if (!isPreprocessed(zodSchema) || isDecimalText(zodSchema)) return;
      // A field may say its own string forms (`.meta({ encodedForm })`: tags also take comma-separated text).
      const { description, encodedForm: own, ...value } = jsonSchema as JsonSchema;
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as JsonSchema)[key];
      Object.assign(jsonSchema, {
        ...(description === undefined ? {} : { description }),
        anyOf: [value, { type: 'string', description: typeof own === 'string' ? own : encodedForm }],
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

const SIMPLE_TYPE_KEYS = new Set(['type']);

/**
 * The same schema in fewer bytes, for readers that pay per token (MCP
 * tools/list): `anyOf [{type: a}, {type: b}]` becomes `type: [a, b]`, and
 * zod's artefacts that say nothing (safe-integer bounds, string property
 * names, an empty open object's parts) go. `strict: false` also drops
 * `additionalProperties: false` (for output schemas: what a client reads, not what it may send).
 */
export function compactJsonSchema(value: unknown, { strict = true } = {}): unknown {
  if (Array.isArray(value)) return value.map((item) => compactJsonSchema(item, { strict }));
  if (!value || typeof value !== 'object') return value;
  const schema = Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, compactJsonSchema(v, { strict })]),
  ) as JsonSchema;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.type === 'object') delete schema.propertyNames;
  if (schema.type === 'object' && schema.properties && Object.keys(schema.properties).length === 0) delete schema.properties;
  if (
    schema.additionalProperties &&
    typeof schema.additionalProperties === 'object' &&
    Object.keys(schema.additionalProperties).length === 0
  ) {
    delete schema.additionalProperties;
  }
  if (!strict && schema.additionalProperties === false) delete schema.additionalProperties;
  const options = schema.anyOf;
  if (
    Array.isArray(options) &&
    options.every((o) => o && typeof o === 'object' && Object.keys(o).every((k) => SIMPLE_TYPE_KEYS.has(k) || k === 'format')) &&
    options.filter((o) => (o as JsonSchema).format !== undefined).length <= 1
  ) {
    const format = options.map((o) => (o as JsonSchema).format).find((f) => f !== undefined);
    delete schema.anyOf;
    Object.assign(schema, { type: options.map((o) => (o as JsonSchema).type) }, format ? { format } : {});
  }
  return schema;
}
