/** Starts bench/esdb/doubleServer in a child process and returns its connection string. */
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface DoubleProcess {
  url: string;
  stop(): Promise<void>;
}

export function startDoubleProcess(): Promise<DoubleProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, 'doubleServer.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`test double exited early (code ${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = output.split('\n')[0];
      if (!output.includes('\n')) return;
      const { port } = JSON.parse(line) as { port: number };
      child.removeAllListeners('exit');
      resolve({
        url: `esdb://127.0.0.1:${port}?tls=false`,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.stdin.end();
          }),
      });
    });
  });
}
