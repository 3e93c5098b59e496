/**
 * EventStoreDB cluster connection strings: several hosts, DNS discovery and node preference are
 * accepted (by our settings and by the installed client's own parser); mistakes are one line
 * that shows the valid forms.
 */
import { EventStoreDBClient } from '@eventstore/db-client';
import { esdbSettings } from '../../src/adapters/eventstore/esdbSettings';

describe('EventStoreDB connection strings', () => {
  it.each([
    ['esdb://127.0.0.1:2113?tls=false', ['127.0.0.1:2113'], false],
    ['esdb://admin:changeit@n1:2113,n2:2114,n3?tls=true&nodePreference=follower', ['n1:2113', 'n2:2114', 'n3:2113'], false],
    ['esdb+discover://cluster.internal:2113?tls=true&nodePreference=readOnlyReplica', ['cluster.internal:2113'], true],
    ['kurrentdb+discover://[::1]:2113,[::2]:2113?nodePreference=leader', ['[::1]:2113', '[::2]:2113'], true],
  ])('%s is accepted', (url, hosts, discover) => {
    const settings = esdbSettings(url);
    expect(settings).toMatchObject({ hosts, discover, deadlineMs: 5000 });
    expect(settings.connectionString).toContain('keepAliveInterval=10000');
    if (url.startsWith('esdb')) {
      // The client parses it too (it connects only on the first call, so nothing is dialled here).
      const client = EventStoreDBClient.connectionString(settings.connectionString);
      return client.dispose();
    }
  });

  it.each([
    ['esdb://n1:2113,,n3:2113?tls=true', 'a host is missing'],
    ['esdb://n1:2113,n2:port?tls=true', "'n2:port' is not host:port"],
    ['esdb+discover://cluster:70000', "'cluster:70000' is not host:port"],
    ['esdb://n1:2113?nodePreference=nearest', "nodePreference 'nearest' is not one of leader, follower, random, readOnlyReplica"],
    ['esdb://n1:2113?tls=yes', "tls must be true or false, got 'yes'"],
    ['esdb://n1:2113?defaultDeadline=-1', 'defaultDeadline must be a positive number'],
    // The client ignored a key it does not know (a misspelled tlsCAFile) and tlsVerifyCert=false, each with a warning
    // that printed the whole connection string, password included.
    ['esdb://n1:2113?tls=true&tlsCAFlie=/ca.pem', "the option 'tlsCAFlie' is not one the EventStoreDB client reads"],
    ['esdb://n1:2113?tls=true&tlsVerifyCert=false', 'tlsVerifyCert=false has no effect with this client'],
  ])('%s is refused: %s', (url, why) => {
    let error: unknown;
    try {
      esdbSettings(url);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', envelope: { field: 'MAILBOX_EVENTSTORE_URL' } });
    expect((error as Error).message).toContain(why);
    if (!why.startsWith('defaultDeadline')) expect((error as Error).message).toContain('esdb://n1:2113,n2:2113,n3:2113?tls=true');
  });
});
