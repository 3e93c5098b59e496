/**
 * A wire-compatible EventStoreDB test double: a gRPC server on loopback that
 * serves the v1 protocol through the client package's generated service
 * definitions, so the real `@eventstore/db-client` talks to it unchanged via
 * `esdb://127.0.0.1:<port>?tls=false`. Test tool only; see README.md in this
 * folder for what it emulates and where it differs from the real server.
 */
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { StreamsService } from '@eventstore/db-client/generated/streams_grpc_pb';
import { ServerFeaturesService } from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import { appendHandler, batchAppendHandler } from './appendService';
import { deleteHandler, tombstoneHandler } from './deleteService';
import { DoubleLog } from './doubleLog';
import { Faults } from './faults';
import { readHandler, type ReadOfAll } from './readService';
import { supportedMethodsHandler } from './serverFeatures';
import type { SubscriptionRequest } from './subscriptionService';

export interface EsdbDoubleOptions {
  /** 0 (default) picks a free port; restarts keep the port. */
  port?: number;
  /** Serve and advertise BatchAppend as EventStoreDB 21+ does; the 6.x client then appends through it. Default true. */
  batchAppend?: boolean;
  /** Serve ServerFeatures; false answers UNIMPLEMENTED as EventStoreDB 20.x does. Default true. */
  serverFeatures?: boolean;
  /** Write the system events a fresh server has in $all (settings, stats stream metadata). Default true. */
  systemEvents?: boolean;
}

export class EsdbDouble {
  /** The data: kept across stop()/start(), as a real node keeps its database across a restart. */
  readonly log = new DoubleLog();
  readonly faults = new Faults();
  /** Every subscription request received, in order (where each one started). */
  readonly subscriptionRequests: SubscriptionRequest[] = [];
  /** Every one-shot read of $all answered, in order: its direction and how many events it sent (what a read costs). */
  readonly readsOfAll: ReadOfAll[] = [];
  /** Calls received per method ('Append', 'BatchAppend', 'Read', ...), e.g. to see which append path the client took. */
  readonly calls: Record<string, number> = {};
  private server: Server | null = null;
  private boundPort = 0;

  private constructor(private readonly options: Required<Omit<EsdbDoubleOptions, 'port'>>) {}

  static async start(options: EsdbDoubleOptions = {}): Promise<EsdbDouble> {
    const double = new EsdbDouble({
      batchAppend: options.batchAppend ?? true,
      serverFeatures: options.serverFeatures ?? true,
      systemEvents: options.systemEvents ?? true,
    });
    if (double.options.systemEvents) double.writeStartupSystemEvents();
    double.boundPort = options.port ?? 0;
    await double.start();
    return double;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The connection string for the real client. */
  get url(): string {
    return `esdb://127.0.0.1:${this.boundPort}?tls=false`;
  }

  get running(): boolean {
    return this.server !== null;
  }

  /** (Re)starts serving on the same port with the same data. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = new Server();
    const log = this.log;
    const faults = this.faults;
    const streams: UntypedServiceImplementation = {
      read: readHandler(
        log,
        faults,
        (request) => this.subscriptionRequests.push(request),
        (read) => this.readsOfAll.push(read),
      ),
      append: appendHandler(log, faults),
      delete: deleteHandler(log, faults),
      tombstone: tombstoneHandler(log, faults),
      // Left out, grpc-js answers UNIMPLEMENTED, as a server older than 21.2 does.
      ...(this.options.batchAppend ? { batchAppend: batchAppendHandler(log, faults) } : {}),
    };
    server.addService(StreamsService, this.counted(streams));
    if (this.options.serverFeatures) {
      server.addService(
        ServerFeaturesService,
        this.counted({ getSupportedMethods: supportedMethodsHandler(this.options.batchAppend) }),
      );
    }
    this.boundPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${this.boundPort}`, ServerCredentials.createInsecure(), (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
    this.server = server;
  }

  /** Stops abruptly, as a crashed or restarted node: open calls and subscriptions break. Data is kept. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.forceShutdown();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** An empty log on the same port, as a node restarted with its database deleted (a new log: a new identity). */
  async resetToEmpty(): Promise<void> {
    await this.stop();
    this.log.clear();
    if (this.options.systemEvents) this.writeStartupSystemEvents();
    await this.start();
  }

  async close(): Promise<void> {
    this.faults.thaw();
    await this.stop();
  }

  private counted(service: UntypedServiceImplementation): UntypedServiceImplementation {
    const counted: UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(service)) {
      const method = name[0].toUpperCase() + name.slice(1);
      counted[name] = ((...args: unknown[]) => {
        this.calls[method] = (this.calls[method] ?? 0) + 1;
        return (handler as (...a: unknown[]) => unknown)(...args);
      }) as typeof handler;
    }
    return counted;
  }

  private writeStartupSystemEvents(): void {
    this.log.writeSystem('$settings', '$settings', { $userStreamAcl: { $r: '$all' }, $systemStreamAcl: { $r: '$admins' } });
    this.log.writeSystem('$$$stats-127.0.0.1:2113', '$metadata', { $maxAge: 86400 });
  }
}
