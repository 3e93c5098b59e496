/**
 * An agent API that runs nothing: every call is refused with one error. For `mailbox mcp` refused at start (no token,
 * no http(s) URL) and for POST /mcp's refusal reports (mcpRoutes.ts), which must be checked, never run.
 */
import type { AgentApi } from '../../application/agentApi';
import type { MailboxError } from '../../errors';

/**
 * `mailbox mcp` refused, the server still speaks MCP (a client whose server exits before `initialize` only says
 * "disconnected", and its user never sees our stderr): it lists the tools and answers every call with the
 * envelope that says what to fix in the client's configuration.
 */
export function refusingAgentApi(refusal: MailboxError): AgentApi {
  const refuse = async (): Promise<never> => {
    throw refusal;
  };
  return {
    sendOutcome: refuse,
    listMessages: refuse,
    getMessage: refuse,
    getDelivery: refuse,
    markRead: refuse,
    archive: refuse,
    unarchive: refuse,
    listAgents: refuse,
    unreadCount: refuse,
    claimTask: refuse,
    updateTask: refuse,
    listTasks: refuse,
    getTask: refuse,
  };
}
