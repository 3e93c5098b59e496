/**
 * The registered agents not retired, folded from the registry's facts as the stores keep their registry (evolve.ts:
 * registering, again too, makes an agent current; retiring makes it not). For a pass that keeps the ledger alone
 * (audit's ledger replay), whose rules ask at each send who could be woken (ledgerRules.ts).
 */
import type { ViewChange } from '../viewChanges';
import type { AgentLookup } from './ledger';

export class ActiveAgents implements AgentLookup {
  private readonly active = new Set<string>();

  /** The registry's part of one fact (every other fact changes nothing here). */
  apply(fact: ViewChange): void {
    if (fact.kind === 'agentRegistered') this.active.add(fact.identity);
    else if (fact.kind === 'agentRetired') this.active.delete(fact.identity);
  }

  isActiveAgent(identity: string): boolean {
    return this.active.has(identity);
  }
}
