/** Least privilege: agents send and read their own mail; auditors read everything and write nothing; admins manage agents. */
import { ROLES } from '../events/storedShapes';
import type { Role } from '../events/types';

export { ROLES };
export type { Role } from '../events/types';

export interface Actor {
  identity: string; // '@name' for agents and auditors, 'admin' for the admin token
  role: Role;
}

export const ADMIN_ACTOR: Actor = { identity: 'admin', role: 'admin' };
