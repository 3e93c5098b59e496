/** A pino logger whose JSON lines a test reads (what an operator would see in the log). */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface RecordingLogger {
  logger: Logger;
  lines: LogLine[];
  /** Every line's message, in order. */
  messages(): string[];
  /** The messages of the warn lines (level 40). */
  warnings(): string[];
}

export function recordingLogger(level: pino.Level = 'info'): RecordingLogger {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return {
    logger: pino({ level }, stream),
    lines,
    messages: () => lines.map((line) => String(line.msg)),
    warnings: () => lines.filter((line) => line.level === 40).map((line) => String(line.msg)),
  };
}
