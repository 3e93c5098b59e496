/** Identity comes from the bearer token only: the admin token, or a registered (not retired) agent's or auditor's token. */
import { inject, injectable } from 'tsyringe';
import { ADMIN_ACTOR, type Actor } from '../commands/roles';
import type { MailboxConfig } from '../config';
import { MailboxError } from '../errors';
import { TOKENS } from '../tokens';
import { unregisteredWatcher, type ReplacedToken } from '../commands/agentRegistry';
import type { AgentDirectory, RevocationListener } from './agentDirectory';
import { hashToken, sameHash } from './tokenHash';

const unauthenticated = (message: string) =>
  new MailboxError('UNAUTHENTICATED', 'Unauthenticated', message, { hint: 'Send Authorization: Bearer <token>' });

@injectable()
export class Authenticator {
  private readonly adminHash: string | null;

  constructor(
    @inject(TOKENS.Config) config: MailboxConfig,
    @inject(TOKENS.AgentDirectory) private readonly directory: AgentDirectory,
  ) {
    this.adminHash = config.adminToken ? hashToken(config.adminToken) : null;
  }

  /** Tells `listener` of every identity whose token stops working (retirement), at once. */
  onRevoked(listener: RevocationListener): () => void {
    return this.directory.onRevoked(listener);
  }

  async authenticate(token: string | undefined | null): Promise<Actor> {
    if (!token) throw unauthenticated('A bearer token is required; agents get theirs when an admin registers them.');
    const hash = hashToken(token);
    if (this.adminHash && sameHash(hash, this.adminHash)) return ADMIN_ACTOR;
    const agent = await this.directory.findByTokenHash(hash);
    if (!agent) throw unknownToken(this.directory.replacedToken(hash));
    if (agent.retiredAt !== null) throw unauthenticated(`Agent ${agent.identity} was retired; its token no longer works.`);
    return { identity: agent.identity, role: agent.role };
  }

  /** Whether `token` is the admin's or an agent's in the last registry read (retired or not): no read. */
  knownWithoutRead(token: string): boolean {
    const hash = hashToken(token);
    return (this.adminHash !== null && sameHash(hash, this.adminHash)) || this.directory.knownInLastRead(hash);
  }

  /**
   * Whether `token` is the admin's or an agent's in a registry read about a second old at most, read once for all the
   * callers that ask within a second: for a client address that may not have its tokens looked up one by one.
   */
  async knownSparingly(token: string): Promise<boolean> {
    const hash = hashToken(token);
    return (this.adminHash !== null && sameHash(hash, this.adminHash)) || this.directory.knownSparingly(hash);
  }

  /**
   * Why the token whose hash is `tokenHash` no longer works ('agent retired', 'token rotated'), or null while it does.
   * Asked of the tokens that hold wake streams open, so that a retirement or a rotation done through another API node
   * ends them too: this node hears of it only by reading the registry (as a request with that token would: from a
   * read at most a second old). With the event store unavailable it answers from the last read.
   */
  async revocationOf(tokenHash: string): Promise<string | null> {
    if (this.adminHash && sameHash(tokenHash, this.adminHash)) return null;
    const agent = await this.directory.findByTokenHash(tokenHash);
    if (agent === null) return this.directory.replacedToken(tokenHash) ? 'token rotated' : 'token no longer valid';
    return agent.retiredAt !== null ? 'agent retired' : null;
  }
  /**
   * 'agent retired' when `identity` was retired, else null (not registered included): asked of the watches of a
   * client without a token (mailbox.asActor), which a retirement through another API node ends too.
   */
  /**
   * Refuses (AGENT_NOT_FOUND, agentRegistry.ts unregisteredWatcher) a watch of a client without a token for an identity
   * no one registered. A registry that cannot be read (the store unavailable, nothing read yet) refuses nothing.
   */
  async refuseUnregisteredWatcher(identity: string): Promise<void> {
    const agent = await this.directory.findByIdentity(identity).catch(() => undefined);
    if (agent !== null) return;
    const state = await this.directory.current().catch(() => null);
    if (state !== null && !state.agents.has(identity)) throw unregisteredWatcher(identity, state);
  }

  async retirementOf(identity: string): Promise<string | null> {
    const agent = await this.directory.findByIdentity(identity);
    return agent !== null && agent.retiredAt !== null ? 'agent retired' : null;
  }
}

/**
 * A token this mailbox does not know. One a rotation replaced says whose it was and when (its holder needs the new
 * one, not a registration); any other may be mistyped or another mailbox's (an admin command sent to the wrong
 * server lands here too), so the message names where each kind of token comes from.
 */
function unknownToken(replaced: ReplacedToken | null): MailboxError {
  if (replaced !== null)
    return unauthenticated(
      `This token of ${replaced.identity} was replaced by a rotation at ${replaced.replacedAt} and no longer works; ` +
        `use the new one (an admin rotated it with POST /v1/agents/${replaced.identity}/token or \`mailbox agent token\`).`,
    );
  return unauthenticated(
    "The bearer token is not valid for this mailbox (mistyped, or another mailbox's). An agent gets its token when an " +
      "admin registers it (POST /v1/agents); the admin token is the server's MAILBOX_ADMIN_TOKEN or <data dir>/admin.token.",
  );
}
