/** Least privilege: agents send and read their own mail; auditors read everything and write nothing; admins manage agents. */
export const ROLES = ['agent', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Actor {
  identity: string; // '@name' for agents and auditors, 'admin' for the admin token
  role: Role;
}

export const ADMIN_ACTOR: Actor = { identity: 'admin', role: 'admin' };
