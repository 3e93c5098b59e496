/**
 * The event store contract against the EventStoreDB adapter, through the real
 * @eventstore/db-client over gRPC:
 * - on the in-repo test double, as EventStoreDB 21+ serves it (appends via BatchAppend);
 * - on the double as a 20.x server (no ServerFeatures, so the client appends via Append);
 * - on a real EventStoreDB when ESDB_URL is set (skipped otherwise):
 *     docker compose --profile published-stores up -d eventstoredb-port
 *     ESDB_URL='esdb://127.0.0.1:2113?tls=false' npx jest test/contract/eventStore.esdb.int.test.ts
 */
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { EsdbDouble, type EsdbDoubleOptions } from '../support/esdbDouble/esdbDouble';
import { describeEventStoreContract } from './eventStore.contract';

function onDouble(options: EsdbDoubleOptions) {
  return async () => {
    const double = await EsdbDouble.start(options);
    const store = EsdbEventStore.connect(double.url);
    return {
      store,
      cleanup: async () => {
        await store.close();
        await double.close();
      },
    };
  };
}

describeEventStoreContract('EsdbEventStore on the test double (BatchAppend, EventStoreDB 21+)', onDouble({}));
describeEventStoreContract(
  'EsdbEventStore on the test double (Append only, EventStoreDB 20.x)',
  onDouble({ serverFeatures: false, batchAppend: false }),
);

describe('EsdbEventStore log identity on the test double', () => {
  it('survives a restart of the node and is new once the node is reset to an empty log', async () => {
    const double = await EsdbDouble.start();
    const store = EsdbEventStore.connect(double.url);
    try {
      const first = await store.logIdentity();
      await double.restart();
      const again = EsdbEventStore.connect(double.url);
      expect(await again.logIdentity()).toBe(first);
      await again.close();
      await double.resetToEmpty();
      const fresh = EsdbEventStore.connect(double.url);
      const second = await fresh.logIdentity();
      await fresh.close();
      expect(second).not.toBe(first);
      expect(double.log.records.filter((record) => record.streamName === 'mailbox.log-identity')).toHaveLength(1);
    } finally {
      await store.close();
      await double.close();
    }
  });
});

const realServer = process.env.ESDB_URL;
if (realServer) {
  describeEventStoreContract(
    `EsdbEventStore on EventStoreDB at ${realServer}`,
    async () => {
      const store = EsdbEventStore.connect(realServer);
      return { store, cleanup: () => store.close() };
    },
    { sharesOneLog: true },
  );
} else {
  describe('EsdbEventStore on a real EventStoreDB', () => {
    it.skip('needs ESDB_URL (docker compose --profile published-stores up -d eventstoredb-port; ESDB_URL=esdb://127.0.0.1:2113?tls=false)', () =>
      undefined);
  });
}
