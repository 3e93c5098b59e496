/** MAILBOX_VIEWS: where the views live without Redis, one teaching line for every mistake, and the views file's place. */
import path from 'node:path';
import { configFromEnv, parseConfig } from '../../src/config';
import { sqliteViewsFile } from '../../src/adapters/projectionFactory';
import { viewsAreInMemory } from '../../src/compositionRoot';
import { StartupError } from '../../src/startupError';

const refusal = (env: Record<string, string>): StartupError => {
  try {
    configFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).not.toContain('\n');
    return error as StartupError;
  }
  throw new Error(`configuration ${JSON.stringify(env)} was accepted`);
};

describe('MAILBOX_VIEWS', () => {
  it('defaults to the SQLite views file beside the SQLite log; memory keeps them in the process', () => {
    const dataDir = path.resolve('/srv/mailbox');
    expect(sqliteViewsFile(parseConfig({ dataDir }))).toBe(path.join(dataDir, 'views.sqlite'));
    expect(sqliteViewsFile(parseConfig({ eventStoreUrl: 'sqlite:/var/lib/mb/team.sqlite' }))).toBe(
      path.resolve('/var/lib/mb/team.views.sqlite'),
    );
    expect(sqliteViewsFile(parseConfig({ dataDir, views: 'memory' }))).toBeNull();
    expect(viewsAreInMemory(parseConfig({ dataDir, views: 'memory' }))).toBe(true);
    expect(viewsAreInMemory(parseConfig({ dataDir }))).toBe(false);
  });

  it('a log in memory keeps its views in memory; a log on EventStoreDB too, unless MAILBOX_VIEWS=sqlite asks for the data dir', () => {
    expect(sqliteViewsFile(parseConfig({ eventStoreUrl: 'memory:' }))).toBeNull();
    expect(sqliteViewsFile(parseConfig({ eventStoreUrl: 'esdb://127.0.0.1:2113?tls=false' }))).toBeNull();
    expect(
      sqliteViewsFile(parseConfig({ eventStoreUrl: 'esdb://127.0.0.1:2113?tls=false', views: 'sqlite', dataDir: '/d' })),
    ).toBe(path.resolve('/d/views.sqlite'));
  });

  it.each(['disk', 'redis'])(
    'a bad value (%s) names the variable, the value, both valid forms and where Redis is set',
    (value) => {
      const error = refusal({ MAILBOX_VIEWS: value });
      expect(error.message).toBe(
        `MAILBOX_VIEWS='${value}' is not valid: set MAILBOX_VIEWS to sqlite (the default: views in a file beside the log, ` +
          'resumed at start) or memory (rebuilt from the log at every start; for tests and benchmarks); for views in Redis, ' +
          'unset it and set MAILBOX_REDIS_URL.',
      );
      expect(error.details).toMatchObject({ variable: 'MAILBOX_VIEWS' });
    },
  );

  it('set but empty: told that unset is the default (sqlite), not to unset it for Redis', () => {
    expect(refusal({ MAILBOX_VIEWS: '' }).message).toBe(
      'MAILBOX_VIEWS is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?): set it to sqlite (views in a ' +
        'file beside the log, resumed at start) or memory (rebuilt from the log at every start; for tests and ' +
        'benchmarks), or unset it for the default (sqlite; with MAILBOX_REDIS_URL set, the views are in Redis).',
    );
  });

  it('with Redis the views live in Redis: MAILBOX_VIEWS is refused, not ignored', () => {
    const error = refusal({ MAILBOX_VIEWS: 'sqlite', MAILBOX_REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(error.message).toBe(
      "MAILBOX_VIEWS='sqlite' is set with Redis (MAILBOX_REDIS_URL), where the views live in Redis: unset MAILBOX_VIEWS.",
    );
  });

  it('views on disk of a log in memory are refused: they would belong to a log gone at exit', () => {
    expect(refusal({ MAILBOX_VIEWS: 'sqlite', MAILBOX_EVENTSTORE_URL: 'memory:' }).message).toMatch(
      /^MAILBOX_VIEWS='sqlite' keeps views on disk, but MAILBOX_EVENTSTORE_URL='memory:' keeps the log in memory/,
    );
  });
});
