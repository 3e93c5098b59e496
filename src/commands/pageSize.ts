/**
 * A page size (`limit`) as every listing takes it: from a query string, a CLI flag or a tool call, so coerced from
 * text. One message for every way it can be wrong, saying the valid range and the default: zod's own wording
 * answered `limit=abc` with "expected number, received NaN" and `limit=1.5` with "expected int, received number",
 * neither of which tells the caller what to send.
 */
import { z } from 'zod';

export function pageSize(max: number, fallback: number, min = 1) {
  const teaches = `takes a whole number from ${min} to ${max} (default ${fallback})`;
  return z.coerce
    .number({ error: teaches })
    .int({ error: teaches })
    .min(min, { error: teaches })
    .max(max, { error: teaches })
    .default(fallback);
}
