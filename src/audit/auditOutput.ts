/** Where the audit commands write: stdout for results (with backpressure), stderr for progress and notices. */
import type { Writable } from 'node:stream';

export interface AuditIo {
  stdout: Writable;
  stderr: NodeJS.WriteStream | Writable;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): AuditIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Up to this much output may wait in memory while the next page is read (reading and writing overlap). */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Writes; waits for the stream to drain only past MAX_BUFFERED_BYTES (a slow pipe slows the replay, never bloats memory). */
export function writeOut(stream: Writable, text: string): Promise<void> | void {
  if (stream.write(text) || stream.writableLength < MAX_BUFFERED_BYTES) return;
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      stream.off('drain', done);
      stream.off('error', done);
      if (error) reject(error);
      else resolve();
    };
    stream.once('drain', done);
    stream.once('error', done);
  });
}

export const isTty = (stream: AuditIo['stderr']): stream is NodeJS.WriteStream => (stream as NodeJS.WriteStream).isTTY === true;
