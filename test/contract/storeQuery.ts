/** A store-level list query from list input, as the application layer builds it (no jest globals: the benches import it too). */
import { parseListQuery, viewQuery } from '../../src/application/listQueryParser';

export const storeQuery = (input: Record<string, unknown>, before: bigint | null = null) =>
  viewQuery(parseListQuery(input), before);
