/** DI tokens: the only registry of injectable symbols. Only the composition root registers them. */
export const TOKENS = {
  Config: Symbol('Config'),
  Clock: Symbol('Clock'),
  IdGenerator: Symbol('IdGenerator'),
  Logger: Symbol('Logger'),
  EventStore: Symbol('EventStore'),
  ProjectionStore: Symbol('ProjectionStore'),
  LostViews: Symbol('LostViews'),
  WakeBus: Symbol('WakeBus'),
  SharedLimits: Symbol('SharedLimits'),
  CommandHandler: Symbol('CommandHandler'),
  ProjectionRunner: Symbol('ProjectionRunner'),
  AgentDirectory: Symbol('AgentDirectory'),
  RejectionLog: Symbol('RejectionLog'),
  /** Leases of the shared jobs (projector, sweeper, heartbeat): registered only with Redis. */
  Leases: Symbol('Leases'),
} as const;
