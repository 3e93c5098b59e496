/**
 * A listing's `cursor`: the opaque nextCursor of its previous page (cursorCodec.ts checks that it was issued for this
 * caller and listing). An empty one (`cursor: ""` from a model that fills every field, `?cursor=`) was told "This
 * cursor came from another message listing ... or was altered": it came from nowhere, and what to send was left
 * unsaid. It is refused as empty, with the two forms that page. A refinement, so the advertised schemas (tools/list,
 * openapi.json) are unchanged.
 */
import { z } from 'zod';

const EMPTY =
  "must not be empty: leave it out for the first page, then pass each page's nextCursor back unchanged " +
  '(a null nextCursor: there is no further page)';

export const pageCursor = (description: string) =>
  z
    .string()
    .refine((cursor) => cursor !== '', { error: EMPTY })
    .optional()
    .describe(description);
