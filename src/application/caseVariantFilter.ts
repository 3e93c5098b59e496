/**
 * A filter by an identity that only a registered agent's case differs from (`from=@Bob` with @bob registered) can never
 * match: no agent can be registered as @Bob beside @bob (README, "Identities are case-sensitive"). Where such a filter
 * found nothing, the caller is told so, as a send to @Bob is, rather than answered "nothing".
 */
import { caseVariantsOf, type RegistryState } from '../commands/agentRegistry';
import { closestIdentities } from '../commands/suggestions';
import { MailboxError } from '../errors';

/** The refusal when `identity` is no agent but differs only in case from one or more; else null. */
export function caseVariantFilterRefusal(
  command: string,
  field: string,
  identity: string | undefined,
  registry: RegistryState,
): MailboxError | null {
  if (identity === undefined || !identity.startsWith('@') || registry.agents.has(identity)) return null;
  const variants = caseVariantsOf(identity, registry).map((agent) => agent.identity);
  if (variants.length === 0) return null;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${command}: '${field}' is ${identity}, which is no agent: ${variants.join(' and ')} ` +
      `${variants.length > 1 ? 'are' : 'is'} registered, differing only in case, and identities are case-sensitive ` +
      `(no agent can be registered as ${identity} beside it), so this filter never matches. ` +
      `Did you mean ${variants.map((variant) => `${field}=${variant}`).join(' or ')}?`,
    { field, suggestions: variants },
  );
}

/**
 * The refusal when `identity` is no agent at all, not even a retired one (a typo: @anna for @ana), for a filter that
 * can show only what concerns a registered agent (the live flow's): the flow was taken and read "No event matching the
 * filter", as of a quiet agent. It names where the registered identities are listed, and the near ones; else null.
 */
export function unregisteredFilterRefusal(
  command: string,
  field: string,
  identity: string,
  registry: RegistryState,
  listedBy: string,
): MailboxError | null {
  if (registry.agents.has(identity)) return null;
  const variant = caseVariantFilterRefusal(command, field, identity, registry);
  if (variant) return variant;
  const near = closestIdentities(identity, [...registry.agents.keys()]);
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${command}: '${field}' is ${identity}, which is no registered agent, so the flow would show nothing: ${listedBy} ` +
      `lists the registered ones.${near.length > 0 ? ` Did you mean ${near.join(' or ')}?` : ''}`,
    { field, ...(near.length > 0 ? { suggestions: near } : {}) },
  );
}
