/**
 * The production stacks, parsed (the docker compose CLI is not on every machine that runs the
 * suite): what is published, how secrets arrive, and that each API node's configuration is one the
 * mailbox accepts (run through the same parser as `mailbox serve`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { esdbSettings } from '../../src/adapters/eventstore/esdbSettings';
import { parseRedisUrl } from '../../src/adapters/projections/redisTopology';
import { buildProgram } from '../../src/cli/main';
import { unknownVariables } from '../../src/cli/commands/envWarnings';
import { configFromEnv } from '../../src/config';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  image?: string;
  build?: string;
  init?: boolean;
  ports?: string[];
  expose?: string[];
  profiles?: string[];
  command?: string[] | string;
  environment?: Record<string, string | null>;
  secrets?: string[];
  volumes?: string[];
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { file: string }>;
}

const load = (file: string): Compose => parse(fs.readFileSync(path.join(ROOT, file), 'utf8'), { merge: true }) as Compose;
const published = (compose: Compose, profiled = false) =>
  Object.entries(compose.services)
    .filter(([, service]) => (service.ports?.length ?? 0) > 0 && (service.profiles !== undefined) === profiled)
    .map(([name, service]) => [name, service.ports]);
const mailboxNodes = (compose: Compose) => Object.entries(compose.services).filter(([, service]) => service.build === '.');

/**
 * The environment compose would give the process from a shell that sets none of the variables: ${VAR:-default} resolved
 * to its default, and a variable without a value (`MAILBOX_ADMIN_TOKEN:`, the shell's when set) left out.
 */
function resolved(environment: Record<string, string | null>): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(environment)
      .filter((entry): entry is [string, string] => entry[1] !== null)
      .map(([key, value]) => [key, String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
  );
}

describe('docker-compose.yml (one host)', () => {
  const compose = load('docker-compose.yml');

  it('publishes only the API on the host loopback; a profile publishes the stores, on loopback too', () => {
    expect(published(compose)).toEqual([['mailbox', ['127.0.0.1:7420:7420']]]);
    expect(published(compose, true)).toEqual([
      ['eventstoredb-port', ['127.0.0.1:2113:2113']],
      ['redis-port', ['127.0.0.1:6379:6379']],
    ]);
    for (const [, service] of Object.entries(compose.services).filter(([, s]) => s.profiles))
      expect(service.profiles).toEqual(['published-stores']);
  });

  it('runs the mailbox image with an init process, and the heartbeat metrics are scrapeable on the network', () => {
    for (const [, service] of mailboxNodes(compose)) expect(service.init).toBe(true);
    const heartbeat = compose.services.heartbeat;
    expect(heartbeat.environment?.MAILBOX_HEARTBEAT_METRICS_HOST).toBe('0.0.0.0');
    expect(heartbeat.expose).toEqual(['7421']);
    expect(heartbeat.ports).toBeUndefined();
  });

  // `MAILBOX_ADMIN_TOKEN: ${MAILBOX_ADMIN_TOKEN:-}` gave every container an empty variable when the shell set none: read
  // as unset then, refused now (an empty variable is never taken as unset), so the stack names it without a value.
  it("each mailbox service's configuration is accepted as compose gives it from a shell that sets nothing", () => {
    for (const [, service] of mailboxNodes(compose)) {
      const config = configFromEnv(resolved(service.environment ?? {}));
      expect(config.adminToken).toBeUndefined(); // generated at the first start
      expect(config).toMatchObject({ redisUrl: 'redis://redis:6379', eventStoreUrl: 'esdb://eventstoredb:2113?tls=false' });
    }
  });

  it('builds on Node 22', () => {
    expect(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^ARG NODE_VERSION=22$/m);
  });

  it("README's account of the image names the npm commands its Dockerfile runs, with their options", () => {
    const runs = fs
      .readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('RUN '));
    const account = /The image is multi-stage \(([^)]*)\)/.exec(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1];
    const named = [...account.matchAll(/`(npm [^`]*)`/g)].map((match) => match[1].split(' '));
    expect(named.length).toBeGreaterThan(1);
    for (const [npm, command, ...options] of named) {
      const ran = runs.some(
        (line) => line.includes(`${npm} ${command} `) && options.every((option) => line.includes(` ${option}`)),
      );
      expect({ named: [npm, command, ...options].join(' '), ran }).toEqual({
        named: [npm, command, ...options].join(' '),
        ran: true,
      });
    }
  });
});

describe('docker-compose.scaled.yml (three API nodes, Sentinel, three-node EventStoreDB)', () => {
  const compose = load('docker-compose.scaled.yml');
  const nodes = mailboxNodes(compose).filter(([name]) => name.startsWith('mailbox-'));

  it('three API nodes behind the load balancer, which alone is published (loopback)', () => {
    expect(nodes.map(([name]) => name)).toEqual(['mailbox-1', 'mailbox-2', 'mailbox-3']);
    expect(published(compose)).toEqual([['lb', ['127.0.0.1:7420:7420']]]);
    const lb = compose.services.lb;
    const [source] = lb.volumes![0].split(':');
    const conf = fs.readFileSync(path.join(ROOT, source), 'utf8');
    for (const [name] of nodes) expect(conf).toContain(`server ${name}:7420`);
    expect(conf).toContain('proxy_buffering off'); // wake streams (SSE) pass through unbuffered
    for (const [, service] of Object.entries(compose.services))
      if (service.build || service === lb) expect(service.init).toBe(true);
  });

  it("each node's configuration is accepted by the mailbox: admin token from a Docker secret, Sentinel, an EventStoreDB cluster", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-compose-'));
    try {
      fs.writeFileSync(path.join(dir, 'admin_token'), 'a-generated-admin-token-0123456789\n');
      expect(compose.secrets?.admin_token.file).toBe('./secrets/admin_token');
      for (const [, node] of nodes) {
        expect(node.secrets).toEqual(['admin_token']);
        const env = resolved(node.environment!);
        expect(env.MAILBOX_ADMIN_TOKEN_FILE).toBe('/run/secrets/admin_token');
        const config = configFromEnv({ ...env, MAILBOX_ADMIN_TOKEN_FILE: path.join(dir, 'admin_token') });
        expect(config.adminToken).toBe('a-generated-admin-token-0123456789');
        expect(parseRedisUrl(config.redisUrl!)).toMatchObject({
          kind: 'sentinel',
          masterName: 'mymaster',
          sentinels: ['sentinel-1', 'sentinel-2', 'sentinel-3'].map((host) => ({ host, port: 26379 })),
        });
        expect(esdbSettings(config.eventStoreUrl!).hosts).toEqual(['esdb-1:2113', 'esdb-2:2113', 'esdb-3:2113']);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // The stack's own instructions write the admin token to ./secrets/admin_token in the build context, which
  // .dockerignore did not leave out: every `docker compose build` sent it to the builder (git ignores it).
  it('its secret files stay out of the image build context, as out of git', () => {
    const ignored = (file: string) =>
      fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .map((line) => line.trim().replace(/^\.\//, '').replace(/\/$/, ''));
    for (const { file } of Object.values(compose.secrets ?? {})) {
      const dir = path.dirname(file).replace(/^\.\//, '');
      expect(ignored('.dockerignore')).toContain(dir);
      expect(ignored('.gitignore')).toContain(dir);
    }
  });

  it('the stores it names exist: three EventStoreDB nodes seeding each other, a Redis master and replica, three sentinels', () => {
    const esdb = ['esdb-1', 'esdb-2', 'esdb-3'];
    for (const name of esdb) {
      const env = compose.services[name].environment!;
      expect(env.EVENTSTORE_CLUSTER_SIZE).toBe('3');
      expect(String(env.EVENTSTORE_GOSSIP_SEED).split(',').sort()).toEqual(
        esdb.filter((other) => other !== name).map((n) => `${n}:2113`),
      );
    }
    expect(compose.services['redis-2'].command).toEqual(expect.arrayContaining(['--replicaof', 'redis-1', '6379']));
    for (const name of ['sentinel-1', 'sentinel-2', 'sentinel-3']) {
      expect(String(compose.services[name].command)).toContain('sentinel monitor mymaster redis-1 6379 2');
    }
  });
});

// A misspelt variable in a compose file is only a warning in the container's log (the mailbox runs on its default).
test.each(['docker-compose.yml', 'docker-compose.scaled.yml'])(
  '%s: every MAILBOX_ variable it sets is one the mailbox reads, and each mailbox service runs a mailbox command',
  (file) => {
    const compose = load(file);
    const program = buildProgram();
    for (const [name, service] of mailboxNodes(compose)) {
      expect(unknownVariables(resolved(service.environment ?? {})).map(({ variable }) => `${name}: ${variable}`)).toEqual([]);
      const [command] = Array.isArray(service.command) ? service.command : [service.command];
      expect(program.commands.map((candidate) => candidate.name())).toContain(command);
    }
  },
);
