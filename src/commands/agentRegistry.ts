/** Agent registry: one stream, one pure decider per command. */
import { MailboxError } from '../errors';
import type { AgentEvent, AgentRegistered, AgentRetired, AgentTokenRotated } from '../events/types';
import type { Command } from './command';
import type { Role } from './roles';
import { closestIdentities } from './suggestions';

export interface RegisteredAgent {
  identity: string;
  role: Role;
  tokenHash: string;
  registeredAt: string;
  retiredAt: string | null;
}

/** A token that a rotation replaced: whose it was and when, so that its holder is told so (not "not valid"). */
export interface ReplacedToken {
  identity: string;
  replacedAt: string;
}

export interface RegistryState {
  agents: ReadonlyMap<string, RegisteredAgent>;
  /** Token hashes that rotations replaced, by hash (one per rotation: rotations are rare, admin-made). */
  replacedTokens: ReadonlyMap<string, ReplacedToken>;
}

export const initialRegistryState = (): RegistryState => ({ agents: new Map(), replacedTokens: new Map() });

/** Folds events into a copy of the state (one copy per batch, not per event). */
export function foldRegistry(state: RegistryState, events: readonly AgentEvent[]): RegistryState {
  const agents = new Map(state.agents);
  let replaced: Map<string, ReplacedToken> | null = null; // copied at the batch's first rotation, if any
  for (const event of events) {
    switch (event.type) {
      case 'AgentRegistered': {
        const { identity, role, tokenHash, registeredAt } = event.data;
        agents.set(identity, { identity, role, tokenHash, registeredAt, retiredAt: null });
        break;
      }
      case 'AgentRetired': {
        const agent = agents.get(event.data.identity);
        if (agent) agents.set(agent.identity, { ...agent, retiredAt: event.data.retiredAt });
        break;
      }
      case 'AgentTokenRotated': {
        const agent = agents.get(event.data.identity);
        if (!agent) break;
        agents.set(agent.identity, { ...agent, tokenHash: event.data.tokenHash });
        replaced ??= new Map(state.replacedTokens);
        replaced.set(agent.tokenHash, { identity: agent.identity, replacedAt: event.data.rotatedAt });
        break;
      }
      default: {
        const unexpected: never = event;
        throw new Error(`Unexpected registry event type ${(unexpected as { type: string }).type}`);
      }
    }
  }
  return { agents, replacedTokens: replaced ?? state.replacedTokens };
}

/**
 * The registry as it stood at `at` (an event's time): the agents registered by then, retirements after it undone. A
 * send's warnings are read from it at its sentAt, so that a retry under its Idempotency-Key answers them as the send
 * did (the original result), not as the registry stands at the retry. Identities are never reused, so this is exact.
 */
export function registryAsOf(state: RegistryState, at: string): RegistryState {
  const time = Date.parse(at);
  const agents = new Map<string, RegisteredAgent>();
  for (const agent of state.agents.values()) {
    if (Date.parse(agent.registeredAt) > time) continue;
    const retiredLater = agent.retiredAt !== null && Date.parse(agent.retiredAt) > time;
    agents.set(agent.identity, retiredLater ? { ...agent, retiredAt: null } : agent);
  }
  return { agents, replacedTokens: state.replacedTokens };
}

/** Agents that can receive mail now: registered, not retired, role agent. */
export const activeAgents = (state: RegistryState): RegisteredAgent[] =>
  [...state.agents.values()].filter((agent) => agent.retiredAt === null && agent.role === 'agent');

/**
 * The registered identities, retired ones too, that differ from `identity` only in case (`@Alice` for `@alice`), in
 * registration order. None is registered beside another any more; a log from before may hold several.
 */
export function caseVariantsOf(identity: string, state: RegistryState): RegisteredAgent[] {
  const folded = identity.toLowerCase();
  const variants: RegisteredAgent[] = [];
  for (const agent of state.agents.values())
    if (agent.identity !== identity && agent.identity.toLowerCase() === folded) variants.push(agent);
  return variants;
}

/**
 * An admin command names an identity that is not registered. When a case variant of it is (`@alice` for `@ALICE`),
 * the error names it and suggests the active ones (a retired one is named as such, not suggested), as a send to a
 * case variant does: the command is never applied to the variant in its place (identities are case-sensitive).
 */
function agentNotFound(identity: string, state: RegistryState, done: string, otherwise: string): MailboxError {
  const variants = caseVariantsOf(identity, state);
  if (variants.length === 0) {
    // `@alcie` for `@alice`: the registered ones it is near, as a send to it suggests them (never applied in its place).
    const active = [...state.agents.values()].filter((agent) => agent.retiredAt === null).map((agent) => agent.identity);
    const near = closestIdentities(identity, active);
    const said =
      near.length > 0
        ? `No agent ${identity} is registered. Did you mean ${near.join(' or ')}? Nothing was changed; ${otherwise}`
        : `No agent ${identity} is registered; ${otherwise}`;
    return new MailboxError('AGENT_NOT_FOUND', 'Agent not found', said, {
      identity,
      ...(near.length > 0 ? { suggestions: near } : {}),
    });
  }
  const active = variants.filter((variant) => variant.retiredAt === null).map((variant) => variant.identity);
  const described = variants.map((variant) => (variant.retiredAt === null ? variant.identity : `${variant.identity} (retired)`));
  return new MailboxError(
    'AGENT_NOT_FOUND',
    'Agent not found',
    `No agent ${identity} is registered: ${described.join(' and ')} ${variants.length > 1 ? 'are, which differ' : 'is, which differs'} ` +
      `only in case (identities are case-sensitive; none is ${done} in place of another). ` +
      (active.length > 0 ? `Did you mean ${active.join(' or ')}? ` : '') +
      'Nothing was changed.',
    { identity, ...(active.length > 0 ? { suggestions: active } : {}) },
  );
}

/**
 * A watch of a client without a token (mailbox.asActor) as an identity no one registered: it opened, said `sync`, and
 * then nothing, for good (no wake is due to an unregistered identity), where a retired one's ends with 'revoked'. It
 * is refused instead, naming the registered agents the identity is near ('alice' or '@Alice' for '@alice').
 */
export function unregisteredWatcher(identity: string, state: RegistryState): MailboxError {
  const active = [...state.agents.values()].filter((a) => a.retiredAt === null && a.role === 'agent').map((a) => a.identity);
  const near = closestIdentities(identity, active);
  return new MailboxError(
    'AGENT_NOT_FOUND',
    'Agent not found',
    `No agent ${identity} is registered: a watch as it would receive nothing (wakes are only for registered agents). ` +
      `${near.length > 0 ? `Did you mean ${near.join(' or ')}? ` : ''}` +
      'Register it first (registerAgent, as the admin), or watch as an agent that listAgents() lists. Nothing was opened.',
    { identity, ...(near.length > 0 ? { suggestions: near } : {}) },
  );
}

export type RegisterAgent = Command<'RegisterAgent', { identity: string; role: Exclude<Role, 'admin'>; tokenHash: string }>;
export type RetireAgent = Command<'RetireAgent', { identity: string }>;
export type RotateAgentToken = Command<'RotateAgentToken', { identity: string; tokenHash: string }>;

export function decideRegisterAgent(command: RegisterAgent, state: RegistryState): AgentRegistered[] | MailboxError {
  const { identity, role, tokenHash } = command.data;
  const existing = state.agents.get(identity);
  if (existing) {
    // A second run of a setup script meets this: a lost token is no reason to give up the identity (or its mail).
    const newToken = existing.retiredAt
      ? ''
      : `, or, to act as it again without its token, give it a new one (the old one stops working): ` +
        `POST /v1/agents/${identity}/token or \`mailbox agent token\``;
    return new MailboxError(
      'AGENT_EXISTS',
      'Agent exists',
      `Agent ${identity} is already registered${existing.retiredAt ? ' (retired; identities are never reused)' : ''}; ` +
        `choose another identity${newToken}. Nothing was written.`,
      { identity },
    );
  }
  // Two agents whose names differ only in case are a mix-up waiting to happen: models re-case names.
  const [variant] = caseVariantsOf(identity, state);
  if (variant) {
    return new MailboxError(
      'AGENT_EXISTS',
      'Agent exists',
      `Agent ${variant.identity} is already registered${variant.retiredAt ? ' (retired; identities are never reused)' : ''}, ` +
        `and ${identity} differs from it only in case: agents (and models, which re-case names) would mix the two up. ` +
        'Choose an identity that differs in more than case.',
      { identity, existing: variant.identity },
    );
  }
  return [{ type: 'AgentRegistered', data: { identity, role, tokenHash, registeredAt: command.metadata.at } }];
}

export function decideRetireAgent(command: RetireAgent, state: RegistryState): AgentRetired[] | MailboxError {
  const agent = state.agents.get(command.data.identity);
  if (!agent) return agentNotFound(command.data.identity, state, 'retired', 'GET /v1/agents lists the registered ones.');
  if (agent.retiredAt !== null) return []; // already retired: idempotent, nothing new to record
  return [{ type: 'AgentRetired', data: { identity: agent.identity, retiredAt: command.metadata.at } }];
}

/**
 * A new token for a registered agent (a lost or leaked token must not cost the identity).
 * The new hash replaces the old one, so the old token is refused from then on. A retired
 * agent keeps no working token: rotating it is refused rather than silently meaningless.
 */
export function decideRotateAgentToken(command: RotateAgentToken, state: RegistryState): AgentTokenRotated[] | MailboxError {
  const { identity, tokenHash } = command.data;
  const agent = state.agents.get(identity);
  if (!agent) {
    return agentNotFound(
      identity,
      state,
      'given a new token',
      'GET /v1/agents lists the registered ones (register it with POST /v1/agents).',
    );
  }
  if (agent.retiredAt !== null) {
    return new MailboxError(
      'FORBIDDEN',
      'Agent retired',
      `Agent ${identity} was retired at ${agent.retiredAt}; a retired identity gets no new token (identities are never reused): ` +
        'register a new identity instead.',
      { identity, retiredAt: agent.retiredAt },
    );
  }
  return [{ type: 'AgentTokenRotated', data: { identity, tokenHash, rotatedAt: command.metadata.at } }];
}
