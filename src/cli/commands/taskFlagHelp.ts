/**
 * What `send --task` takes, for its --help: it said only "A2A task envelope as JSON", so the fields (and that any
 * other is refused) were found by trial. The fields are those of taskEnvelopeSchema (messageFields.ts); a test holds
 * the two together and parses the example.
 */
import { TASK_STATES } from '../../commands/messageFields';

export const TASK_FLAG_EXAMPLE = `{"state": "Submitted", "expectedOutput": {"shape": "review"}}`;

export const TASK_FLAG_HELP = [
  '',
  '--task takes a JSON object; every field is optional, any other field is refused:',
  `  state           ${TASK_STATES.join(', ')} (A2A spellings such as input-required too)`,
  '  input           {"parts": [{"kind": "text", "text": "..."} | {"kind": "data", "data": {...}}',
  '                            | {"kind": "file", "file": {"uri": "...", "mimeType": "..."}}]}',
  '  expectedOutput  {"shape": "review" | "ticket" | "discussion" | "pr" | "free-form", "locationHint": "..."}',
  '  budget          {"deadline": "<ISO time>", "maxTokens": <n>}',
  '  expiresAt       "<ISO time>"',
  '  metadata        {"sessionId", "relatedTickets": [...], "relatedDiscussions": [...], "parentTask",',
  '                   "priorComments": [{"url", "commentId"}]}',
  `  e.g. mailbox send @neo-gpt "review #12" "the diff" --task '${TASK_FLAG_EXAMPLE}'`,
].join('\n');
