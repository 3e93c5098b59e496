/** Where the audit commands write: stdout for results (with backpressure), stderr for progress and notices. */
import type { Writable } from 'node:stream';

export interface AuditIo {
  stdout: Writable;
  stderr: NodeJS.WriteStream | Writable;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): AuditIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Writes and, when the stream's buffer is full, waits for it to drain (a slow pipe slows the replay, never bloats memory). */
export function writeOut(stream: Writable, text: string): Promise<void> | void {
  if (stream.write(text)) return;
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
