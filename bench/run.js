#!/usr/bin/env node
/**
 * Benchmark runner: `npm run bench [-- filter...]` (the npm script builds first).
 *
 * Runs every compiled dist/bench/<area>/<name>.bench.js in its own child
 * process (so one benchmark's heap, file handles and JIT state never skew
 * another's), optionally only those whose path contains one of the filter
 * arguments. Each benchmark prints a summary and one final JSON line; this
 * runner collects those lines into bench/results/latest.json (merged by
 * benchmark, so a filtered run keeps the others' last results) and prints a table.
 *
 * Env: BENCH_QUICK=1 (sizes / 10), BENCH_TIMEOUT_MS (per benchmark, default 30 min),
 * BENCH_STRICT=1 (exit non-zero when a target is missed, not only on a crash).
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const COMPILED = path.join(ROOT, 'dist', 'bench');
const RESULTS = path.join(__dirname, 'results', 'latest.json');
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS || 30 * 60 * 1000);

function findBenchmarks(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return findBenchmarks(full);
    return entry.isFile() && entry.name.endsWith('.bench.js') ? [full] : [];
  });
}

/** 'core/sendThroughput' for dist/bench/core/sendThroughput.bench.js */
const benchId = (file) =>
  path
    .relative(COMPILED, file)
    .split(path.sep)
    .join('/')
    .replace(/\.bench\.js$/, '');

/** A compiled benchmark whose bench/<id>.bench.ts was deleted is stale output, not a benchmark. */
const hasSource = (file) => fs.existsSync(path.join(__dirname, `${benchId(file)}.bench.ts`));

function runOne(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--expose-gc', file], {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let lastLine = '';
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) if (line.trim() !== '') lastLine = line.trim();
    });
    const timer = setTimeout(() => {
      process.stderr.write(`bench ${benchId(file)}: timed out after ${TIMEOUT_MS} ms; killing it\n`);
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (pending.trim() !== '') lastLine = pending.trim();
      let result;
      try {
        result = JSON.parse(lastLine);
        if (!result || typeof result !== 'object' || !Array.isArray(result.metrics)) throw new Error('not a result');
      } catch {
        result = {
          bench: benchId(file),
          ok: false,
          metrics: [],
          info: {},
          error: `no JSON result line (exit code ${code}${signal ? `, signal ${signal}` : ''})`,
        };
      }
      if (code !== 0 && !result.error) result.error = `exit code ${code}${signal ? `, signal ${signal}` : ''}`;
      resolve({ ...result, file: path.relative(ROOT, file), wallMs: Date.now() - started, finishedAt: new Date().toISOString() });
    });
  });
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0] ? cpus[0].model : 'unknown',
    totalMemMb: Math.round(os.totalmem() / 2 ** 20),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
  };
}

function saveResults(results) {
  let previous = {};
  try {
    previous = JSON.parse(fs.readFileSync(RESULTS, 'utf8')).results || {};
  } catch {
    // first run, or an unreadable file: start afresh
  }
  const merged = { ...previous };
  for (const result of results) merged[result.bench] = result;
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(
    RESULTS,
    `${JSON.stringify({ updatedAt: new Date().toISOString(), machine: machine(), results: merged }, null, 2)}\n`,
  );
}

const target = (t) => (t ? `${t.kind === 'max' ? '<=' : '>='} ${t.value}` : '');

function printTable(results) {
  const rows = [['benchmark', 'metric', 'value', 'unit', 'target', 'status']];
  for (const r of results) {
    if (r.error) rows.push([r.bench, '(failed)', '', '', '', r.error.split('\n')[0].slice(0, 60)]);
    for (const m of r.metrics) {
      rows.push([
        r.bench + (r.quick ? ' (quick)' : ''),
        m.name,
        String(m.value),
        m.unit,
        target(m.target),
        m.ok === undefined ? '' : m.ok ? 'ok' : 'MISSED',
      ]);
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row) =>
    row
      .map((cell, i) => (i === 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  process.stdout.write(`\n${line(rows[0])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const row of rows.slice(1)) process.stdout.write(`${line(row)}\n`);
}

async function main() {
  const filters = process.argv.slice(2).filter((arg) => arg !== '');
  const all = findBenchmarks(COMPILED).filter(hasSource).sort();
  if (all.length === 0) {
    process.stderr.write(
      `No compiled benchmarks under ${path.relative(ROOT, COMPILED)}; run \`npm run bench\` (it builds first).\n`,
    );
    process.exit(2);
  }
  const selected = filters.length ? all.filter((file) => filters.some((f) => benchId(file).includes(f))) : all;
  if (selected.length === 0) {
    process.stderr.write(`No benchmark matches ${filters.join(', ')}; available: ${all.map(benchId).join(', ')}\n`);
    process.exit(2);
  }
  const results = [];
  for (const file of selected) {
    process.stdout.write(`\n=== ${benchId(file)} ===\n`);
    results.push(await runOne(file));
  }
  saveResults(results);
  printTable(results);
  process.stdout.write(`\nresults: ${path.relative(ROOT, RESULTS)}\n`);
  const crashed = results.some((r) => r.error);
  const missed = results.some((r) => r.metrics.some((m) => m.ok === false));
  process.exit(crashed || (missed && process.env.BENCH_STRICT === '1') ? 1 : 0);
}

main();
