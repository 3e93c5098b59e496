/**
 * A fast yes/no check compiled from a zod schema, for the read path: every
 * event read from the log is checked, and a 1M-event rebuild cannot afford a
 * full zod parse per event. The plain parts of a schema (strings, numbers,
 * booleans, enums, literals, nullable/optional, arrays, plain and strict
 * objects) become generated JavaScript; anything else (string formats and
 * lengths, unions, records, refinements) is handed to zod itself. The check
 * never accepts what zod would reject; when it says no, ask zod (`explain`)
 * for the verdict and the failing field.
 */
import type { z } from 'zod';

export type ShapeCheck = (value: unknown) => boolean;

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: { check: string; format?: string } } }>;
  [key: string]: unknown;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
/** The definition keys each compiled kind may have; its meaning is fully captured by the generated check. */
const KNOWN_DEF_KEYS: Record<string, readonly string[]> = {
  string: ['type', 'checks'],
  boolean: ['type', 'checks'],
  null: ['type'],
  unknown: ['type'],
  any: ['type'],
  number: ['type', 'checks'],
  enum: ['type', 'entries'],
  literal: ['type', 'values'],
  nullable: ['type', 'innerType'],
  optional: ['type', 'innerType'],
  array: ['type', 'element', 'checks'],
  object: ['type', 'shape', 'catchall', 'checks'],
};
const isPrimitive = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

export function compileShapeCheck(schema: z.ZodType): ShapeCheck {
  const delegated: ShapeCheck[] = [];
  const helpers: string[] = [];

  const delegate = (node: z.ZodType, value: string) => {
    delegated.push((v) => node.safeParse(v).success);
    return `d[${delegated.length - 1}](${value})`;
  };
  /** A function for nodes that need statements; returns its call on `value`. */
  const helper = (body: string, value: string) => {
    helpers.push(`function h${helpers.length}(v) {\n${body}\n}`);
    return `h${helpers.length - 1}(${value})`;
  };

  function expr(node: z.ZodType, value: string): string {
    const def = defOf(node);
    const noChecks = (def.checks ?? []).length === 0;
    // A definition with anything beyond what this compiler reads (a string format, a default, ...) goes to zod.
    const known = KNOWN_DEF_KEYS[def.type];
    if (!known || Object.keys(def).some((key) => !known.includes(key) && def[key] !== undefined)) return delegate(node, value);
    switch (def.type) {
      case 'string':
        return noChecks ? `typeof ${value} === "string"` : delegate(node, value);
      case 'boolean':
        return noChecks ? `typeof ${value} === "boolean"` : delegate(node, value);
      case 'null':
        return `${value} === null`;
      case 'unknown':
      case 'any':
        return 'true';
      case 'number': {
        if (noChecks) return `(typeof ${value} === "number" && Number.isFinite(${value}))`;
        const only = def.checks!.length === 1 ? def.checks![0]._zod.def : null;
        return only?.check === 'number_format' && only.format === 'safeint'
          ? `Number.isSafeInteger(${value})`
          : delegate(node, value);
      }
      case 'enum':
      case 'literal': {
        const values = def.type === 'enum' ? Object.values(def.entries as Record<string, unknown>) : (def.values as unknown[]);
        if (!values.every(isPrimitive)) return delegate(node, value);
        return `(${values.map((v) => `${value} === ${JSON.stringify(v)}`).join(' || ')})`;
      }
      case 'nullable':
        return `(${value} === null || ${expr(def.innerType as z.ZodType, value)})`;
      case 'optional':
        return `(${value} === undefined || ${expr(def.innerType as z.ZodType, value)})`;
      case 'array':
        if (!noChecks) return delegate(node, value);
        return helper(
          `if (!Array.isArray(v)) return false;\n` +
            `for (let i = 0; i < v.length; i++) { const e = v[i]; if (!(${expr(def.element as z.ZodType, 'e')})) return false; }\nreturn true;`,
          value,
        );
      case 'object':
        return noChecks ? objectExpr(node, def, value) : delegate(node, value);
      default:
        return delegate(node, value);
    }
  }

  function objectExpr(node: z.ZodType, def: Def, value: string): string {
    const catchall = def.catchall === undefined ? 'strip' : defOf(def.catchall as z.ZodType).type === 'never' ? 'strict' : null;
    if (catchall === null) return delegate(node, value);
    const shape = def.shape as Record<string, z.ZodType>;
    const lines = ['if (typeof v !== "object" || v === null || Array.isArray(v)) return false;'];
    const counted: string[] = [];
    for (const [key, field] of Object.entries(shape)) {
      const name = JSON.stringify(key);
      const optional = defOf(field).type === 'optional';
      if (optional) {
        lines.push(`if (Object.hasOwn(v, ${name}) && !(${expr(field, `v[${name}]`)})) return false;`);
        counted.push(`(Object.hasOwn(v, ${name}) ? 1 : 0)`);
      } else {
        // A missing key reads as undefined, which the field's check rejects; only a field that accepts undefined
        // (or a key the prototype answers, like 'constructor') needs the slower own-key test to tell absent from present.
        const mustOwn = field.safeParse(undefined).success || key in Object.prototype;
        lines.push(`if (${mustOwn ? `!Object.hasOwn(v, ${name}) || ` : ''}!(${expr(field, `v[${name}]`)})) return false;`);
      }
    }
    if (catchall === 'strict') {
      const required = Object.values(shape).filter((field) => defOf(field).type !== 'optional').length;
      // No key beyond the shape's: count the own keys against the ones the shape allows.
      lines.push('let n = 0;', 'for (const k in v) n++;', `return n === ${[String(required), ...counted].join(' + ')};`);
    } else {
      lines.push('return true;');
    }
    return helper(lines.join('\n'), value);
  }

  const root = expr(schema, 'value');
  // Generated once per schema at start (like zod's own compiled object parsers); no input reaches the source text.
  const build = new Function('d', `${helpers.join('\n')}\nreturn function check(value) { return ${root}; };`) as (
    d: ShapeCheck[],
  ) => ShapeCheck;
  return build(delegated);
}
