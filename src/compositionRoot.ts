/**
 * The composition root: the only place that registers adapters. Adapters are
 * chosen by configuration; tests build a child container and override.
 */
import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import pino, { type Logger } from 'pino';
import type { MailboxConfig } from './config';
import { TOKENS } from './tokens';
import { randomIds, systemClock, type Clock, type IdGenerator } from './application/runtime';
import { CommandHandler } from './application/commandHandler';
import { AgentDirectory } from './application/agentDirectory';
import { ProjectionRunner } from './projections/projectionRunner';
import { createEventStore } from './adapters/eventStoreFactory';
import { createProjectionAdapters } from './adapters/projectionFactory';

export interface ContainerOverrides {
  clock?: Clock;
  ids?: IdGenerator;
  logger?: Logger;
}

export async function buildContainer(config: MailboxConfig, overrides: ContainerOverrides = {}): Promise<DependencyContainer> {
  const container = rootContainer.createChildContainer();
  const logger = overrides.logger ?? pino({ level: config.logLevel, name: 'mailbox' });
  container.register(TOKENS.Config, { useValue: config });
  container.register(TOKENS.Clock, { useValue: overrides.clock ?? systemClock });
  container.register(TOKENS.IdGenerator, { useValue: overrides.ids ?? randomIds });
  container.register(TOKENS.Logger, { useValue: logger });
  container.register(TOKENS.EventStore, { useValue: await createEventStore(config, logger) });
  const { projectionStore, wakeBus } = await createProjectionAdapters(config, logger);
  container.register(TOKENS.WakeBus, { useValue: wakeBus });
  container.register(TOKENS.ProjectionStore, { useValue: projectionStore });
  container.registerSingleton(TOKENS.CommandHandler, CommandHandler);
  container.registerSingleton(TOKENS.AgentDirectory, AgentDirectory);
  container.registerSingleton(TOKENS.ProjectionRunner, ProjectionRunner);
  return container;
}
