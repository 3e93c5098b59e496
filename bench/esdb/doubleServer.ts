/**
 * Runs the EventStoreDB test double in its own process for the esdb
 * benchmarks, so that server work (protobuf encoding, the log) does not share
 * the benchmark's event loop, as with a real server: client and server on
 * loopback, one process each. Prints `{"port":N}` once listening; exits when
 * its stdin closes (the parent finished or died).
 */
import { EsdbDouble } from '../../test/support/esdbDouble/esdbDouble';

async function main(): Promise<void> {
  const double = await EsdbDouble.start();
  process.stdout.write(`${JSON.stringify({ port: double.port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void double.close().then(() => process.exit(0));
  });
}

void main();
