/**
 * A filter by an identity that only a registered agent's case differs from (`from=@Bob` with @bob registered) can never
 * match: no agent can be registered as @Bob beside @bob (README, "Identities are case-sensitive"). Where such a filter
 * found nothing, the caller is told so, as a send to @Bob is, rather than answered "nothing".
 */
import { caseVariantsOf, type RegistryState } from '../commands/agentRegistry';
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
