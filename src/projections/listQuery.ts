/**
 * A listing as the projection store serves it. The application parses and
 * checks the caller's query and turns its cursor into a log position bound
 * (`before`); the store only pages.
 */
import type { Priority } from '../events/types';

export type ListBox = 'inbox' | 'outbox';

export interface ListQuery {
  box: ListBox;
  /** Default all: unread and read entries not archived; archived: archived entries only. */
  status?: 'unread' | 'read' | 'all' | 'archived';
  from?: string;
  to?: string;
  threadId?: string;
  tags?: string[];
  priority?: Priority;
  limit: number;
  /** Only entries at log positions strictly below this one (the previous page's last); null: from the newest. */
  before: bigint | null;
}
