/**
 * Every difference between the EventStoreDB client generations, in one place:
 *
 * | concern                  | @eventstore/db-client 6.x        | @kurrent/kurrentdb-client 1.x |
 * |--------------------------|----------------------------------|-------------------------------|
 * | package / client class   | EventStoreDBClient               | KurrentDBClient               |
 * | connection string scheme | esdb:// (esdb+discover://)       | kurrentdb:// (esdb:// warns)  |
 * | expected revision option | `expectedRevision`               | `streamState`                 |
 * | readAll filter           | not supported (filtered here)    | server-side `filter`          |
 * | ending a read early      | ReadStream#cancel()              | async iterator return()       |
 *
 * The adapter uses whichever package is installed (the Kurrent one first) and
 * accepts either scheme in MAILBOX_EVENTSTORE_URL. The project depends on and
 * is tested with 6.x; the 1.x column follows that client's published API.
 */
import type * as EsdbModule from '@eventstore/db-client';
import type { ExpectedRevision } from '../../events/eventStore';

type ClientModule = typeof EsdbModule;
export type EsdbClient = EsdbModule.EventStoreDBClient;
export type ResolvedAllEvent = EsdbModule.AllStreamResolvedEvent;
export type EsdbSubscription = EsdbModule.AllStreamSubscription;
export type EsdbPosition = EsdbModule.Position;
export type EsdbReadPosition = EsdbModule.ReadPosition;
export type EsdbFilter = EsdbModule.Filter;
export type EsdbEventData = EsdbModule.EventData;
/** An event as read from a stream or from $all (both generations share this shape). */
export type EsdbRecordedEvent = EsdbModule.RecordedEvent & { position?: EsdbModule.Position };

interface Flavour {
  packageName: string;
  clientClass: 'KurrentDBClient' | 'EventStoreDBClient';
  scheme: 'kurrentdb' | 'esdb';
  expectedOption: 'streamState' | 'expectedRevision';
  readAllFilters: boolean;
}

const FLAVOURS: readonly Flavour[] = [
  {
    packageName: '@kurrent/kurrentdb-client',
    clientClass: 'KurrentDBClient',
    scheme: 'kurrentdb',
    expectedOption: 'streamState',
    readAllFilters: true,
  },
  {
    packageName: '@eventstore/db-client',
    clientClass: 'EventStoreDBClient',
    scheme: 'esdb',
    expectedOption: 'expectedRevision',
    readAllFilters: false,
  },
];

/** Schemes either generation understands as "this is an EventStoreDB / KurrentDB node or cluster". */
const SCHEME = /^(esdb|kurrentdb|kurrent|kdb)(\+discover)?:\/\//i;

export const isEsdbUrl = (url: string): boolean => SCHEME.test(url);

export interface ReadAllRequest {
  fromPosition: EsdbReadPosition;
  maxCount: number;
  direction: 'forwards' | 'backwards';
  /** Applied by the server where the client supports it; callers filter again either way. */
  filter: EsdbFilter;
}

/** The installed client, behind the few operations whose shape differs between generations. */
export class CompatClient {
  private constructor(
    readonly client: EsdbClient,
    readonly module: ClientModule,
    private readonly flavour: Flavour,
  ) {}

  /** Connects lazily (the client dials on first use) with the installed package. */
  static connect(connectionString: string): CompatClient {
    const { flavour, module } = loadInstalledClient();
    const url = connectionString.replace(
      SCHEME,
      (_all, _scheme, discover: string | undefined) => `${flavour.scheme}${discover ?? ''}://`,
    );
    const ClientClass = (module as unknown as Record<string, { connectionString(url: string): EsdbClient }>)[flavour.clientClass];
    return new CompatClient(ClientClass.connectionString(url), module, flavour);
  }

  get description(): string {
    return this.flavour.packageName;
  }

  /** The append options naming the expected revision the way this client spells it ('stream_exists': the node's own). */
  appendOptions(expected: ExpectedRevision | 'stream_exists', deadlineMs: number): EsdbModule.AppendToStreamOptions {
    const value =
      expected === 'no_stream'
        ? this.module.NO_STREAM
        : expected === 'any'
          ? this.module.ANY
          : expected === 'stream_exists'
            ? this.module.STREAM_EXISTS
            : expected;
    return { [this.flavour.expectedOption]: value, deadline: deadlineMs } as EsdbModule.AppendToStreamOptions;
  }

  readAll(request: ReadAllRequest): AsyncIterable<ResolvedAllEvent> {
    const options = { fromPosition: request.fromPosition, maxCount: request.maxCount, direction: request.direction };
    return this.client.readAll(
      this.flavour.readAllFilters ? ({ ...options, filter: request.filter } as typeof options) : options,
    );
  }

  /** Ends a read (stream or $all) before its last event, releasing the call. */
  async stopReading(read: AsyncIterable<unknown>): Promise<void> {
    const candidate = read as { cancel?: () => Promise<void>; return?: () => Promise<unknown> };
    if (typeof candidate.cancel === 'function') await candidate.cancel();
    else if (typeof candidate.return === 'function') await candidate.return();
  }
}

function loadInstalledClient(): { flavour: Flavour; module: ClientModule } {
  for (const flavour of FLAVOURS) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return { flavour, module: require(flavour.packageName) as ClientModule };
    } catch (error) {
      // Only "this package is not installed" moves on; a broken install must fail loudly.
      const missing =
        (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
        (error as Error).message.includes(`'${flavour.packageName}'`);
      if (!missing) throw error;
    }
  }
  throw new Error(`No EventStoreDB client installed: add ${FLAVOURS.map((f) => f.packageName).join(' or ')}`);
}
