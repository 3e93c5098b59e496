/**
 * GET /v1/audit/messages/{id} (auditor or admin): one message's story from its
 * own stream (audience, per-recipient delivery, read and archive with their
 * positions, anomalies), and its recipients that were retired (the agents stream). The story is told by the audit tools; the server
 * composition hands its loader in, so this adapter never runs their code itself.
 */
import type { FastifyInstance } from 'fastify';
import type { RetiredRecipients } from '../../../audit/auditReads';
import type { MessageStory } from '../../../audit/messageStory';
import { requireRole } from '../../../application/authorization';
import { messageNotInLog } from '../../../commands/receipts';
import { oneMessageSchema } from '../../../commands/schemas';
import { parseInput } from '../../../commands/validation';
import { actorOf } from '../auth';
import type { AgentApiRoutes } from '../httpServer';
import { noExtraInput } from './routeInput';

export type StoryLoader = (messageId: string) => Promise<(MessageStory & { retiredRecipients: RetiredRecipients }) | null>;

export const messageStoryRoutes =
  (loadStory: StoryLoader): AgentApiRoutes =>
  (scope: FastifyInstance) => {
    scope.get<{ Params: { id: string } }>('/v1/audit/messages/:id', async (request) => {
      requireRole(actorOf(request), ['auditor', 'admin'], "Reading a message's story");
      noExtraInput(request.query, 'GET /v1/audit/messages/{id}');
      const { messageId } = parseInput(oneMessageSchema, { messageId: request.params.id }, 'GET /v1/audit/messages/{id}');
      const story = await loadStory(messageId);
      if (!story) throw messageNotInLog(messageId); // auditors and admins only: every message is theirs to look at
      return story;
    });
  };
