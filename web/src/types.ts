/** The API's answers the console reads: the server's own types (type-only imports, nothing of the server is bundled). */
export type { FlowEntry } from '../../src/application/liveFlow';
export type { RejectionRecord } from '../../src/application/rejectionLog';
export type { MessageStory } from '../../src/audit/messageStory';
export type { SeriesSample } from '../../src/adapters/http/consoleSeries';

export interface AgentRow {
  identity: string;
  role: string;
  registeredAt: string;
  retired: boolean;
  retiredAt: string | null;
  unreadCount: number;
  oldestUnreadAt: string | null;
  lastActivityAt: string | null;
  wakeStreams: number;
  lastNudge: { at: string; via: string } | null;
}
export type { DeliveryLedger } from '../../src/application/deliveryQueries';
export type { DeliveryRow, UnwokenMessage } from '../../src/projections/readModel/ledger';
export type { UnwokenAlarm } from '../../src/application/consoleResponseSchemas';
