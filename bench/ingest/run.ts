/**
 * End-to-end ingest benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/ingest/run.ts [--pdfs N] [--docx N] [--pages N] [--paragraphs N] [--docx-paragraphs N]
 *                               [--batch N] [--timeout MINUTES] [--max-rss-gb N] [--idle SECONDS] [--embedded]
 *                               [--no-limit] [--keep] [--profile embedded|scale-out] [--summary FILE] [--cpu-prof DIR]
 *                               [--nice-parsers N]
 *
 * Starts its own Temporal dev server, Cairn's API (in this process) and a `cairn worker` process (the
 * built-in embedding model) on free ports over a temporary data directory; generates a deterministic
 * corpus of PDFs and DOCX files; uploads it
 * through the HTTP API (`--batch` files per multipart request); starts parsing every document with one
 * POST /datasets/{id}/chunks; polls until no document is RUNNING. Prints throughput (documents, pages,
 * chunks per second) and, from Temporal's workflow histories, the time spent in each pipeline stage
 * (extract, chunk, embed, index) and waiting in the task queue. Everything it started is stopped at the
 * end, also on error or Ctrl-C; `--keep` keeps the data directory for inspection. The worker runs in its
 * own process so this one stays responsive whatever the worker does: its memory is watched and the run
 * is aborted when it passes `--max-rss-gb` (default: half the machine's memory), before it takes the
 * machine down. `--embedded` measures `cairn start` instead (API and worker in one process, as `make run`
 * runs it). Memory (RSS) of every process is sampled during the run and for `--idle` seconds after it
 * (default 60); then the built-in model alone embeds the run's texts, the ceiling chunks/s is compared with.
 * `--profile scale-out` runs the installation on PostgreSQL metadata, the Milvus index and S3 files
 * (bench/profile.ts: a private PostgreSQL cluster, milvus-lite and moto, started for the run), whose
 * processes are measured beside Cairn's; `--embedded` is about processes (one `cairn start`), `--profile`
 * about backends, and they combine. `--summary FILE` writes the key figures as JSON (bench/profiles.ts).
 * `--cpu-prof DIR` (with --embedded) writes a V8 CPU profile of the `cairn start` process into DIR.
 * `--nice-parsers N` sets Cairn's parser processes to niceness N (0-19) as they start; without it they keep the
 * service's (src/parsing/parser-pool.ts); the niceness the service gave them is printed either way.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { embeddingText } from '../../src/services/chunk-vectors.js';
import { generateCorpus, type CorpusFile } from './corpus.js';
import { startBenchWorker } from './worker.js';
import { startEmbeddedCairn } from './embedded.js';
import { measureModelLimit } from './model-limit.js';
import { findDevServer, findProcesses, mb, MemoryWatch, type Component } from '../processes.js';
import { profileArgument, startProfileServices } from '../profile.js';
import { BenchSummary } from '../summary.js';
import { fetchParseHistories, peakOverlap, percentile, unionMs, wallShares, type WorkflowRun } from './histories.js';
import { bucketed, cpuSnapshot, CpuTimeline, cpuUse, phase, threadCpu, threadCpuUse, type CpuInterval } from './cpu-timeline.js';

// Defaults sized so a full run (generation + ingest) stays within ~10 minutes on a 2-core machine;
// see bench/ingest/README.md for the measurements behind them.
const DEFAULTS = { pdfs: 200, docx: 200, pages: 10, paragraphs: 8, docxParagraphs: 20, batch: 20, timeout: 60 };

function argument(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a non-negative integer, got ${process.argv[i + 1]}`);
  return n;
}

function stringArgument(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = process.argv[i + 1];
  if (!value || value.startsWith('--')) throw new Error(`--${name} needs a value`);
  return value;
}

const opts = {
  pdfs: argument('pdfs', DEFAULTS.pdfs),
  docx: argument('docx', DEFAULTS.docx),
  pages: argument('pages', DEFAULTS.pages),
  paragraphs: argument('paragraphs', DEFAULTS.paragraphs),
  docxParagraphs: argument('docx-paragraphs', DEFAULTS.docxParagraphs),
  batch: Math.max(1, argument('batch', DEFAULTS.batch)),
  timeoutMs: argument('timeout', DEFAULTS.timeout) * 60_000,
  maxRssBytes: argument('max-rss-gb', Math.max(1, Math.floor(os.totalmem() / 2 / 2 ** 30))) * 2 ** 30,
  idleSec: argument('idle', 60),
  embedded: process.argv.includes('--embedded'),
  limit: !process.argv.includes('--no-limit'),
  keep: process.argv.includes('--keep'),
  profile: profileArgument(),
  cpuProf: stringArgument('cpu-prof'),
  /** A pipeline template id (GET /agents/templates): ingest through it instead of the naive chunk method. */
  pipeline: stringArgument('pipeline'),
  /** Niceness to give Cairn's parser processes (0-19); undefined: the one the service gives them. */
  niceParsers: process.argv.includes('--nice-parsers') ? argument('nice-parsers', 0) : undefined,
};
if (opts.niceParsers !== undefined && opts.niceParsers > 19) throw new Error('--nice-parsers takes a niceness of 0 to 19');
if (opts.cpuProf && !opts.embedded) throw new Error('--cpu-prof profiles the `cairn start` of --embedded');
if (opts.pdfs + opts.docx === 0) throw new Error('nothing to ingest: --pdfs and --docx are both 0');

/**
 * The pipeline's stages and their activities: four steps before 'parse-in-two-steps', two since (extraction
 * with chunking, embedding with indexing). A stage with no activity in the run is left out of the report.
 */
const ALL_STAGES = [
  ['extract', 'extractDocument'],
  ['chunk', 'chunkDocument'],
  ['extract+chunk', 'extractAndChunk'],
  ['embed', 'embedChunks'],
  ['index', 'indexChunks'],
  ['embed+index', 'embedAndIndex'],
  // A canvas pipeline's steps (--pipeline): named by their component (histories.ts activityName).
  ['parser', 'Parser'],
  ['token chunker', 'TokenChunker'],
  ['title chunker', 'TitleChunker'],
  ['extractor', 'Extractor'],
  ['tokenizer', 'Tokenizer'],
  ['compiler', 'Compiler'],
] as const;
const EXTRACT_TYPES = new Set<string>(['extractDocument', 'extractAndChunk', 'Parser']);
const isStage = (type: string) => ALL_STAGES.some(([, t]) => t === type);
/** The pages an extraction step reported: in its result, or in a pipeline step's counts. */
const pagesOf = (result: unknown) => {
  const r = result as { pages?: number; counts?: { pages?: number } } | undefined;
  return r?.pages ?? r?.counts?.pages ?? 0;
};

// ------------------------------------------------------------------------------------------ HTTP

class Api {
  constructor(
    readonly url: string,
    readonly key: string,
  ) {}

  async call<T = any>(method: string, path: string, init: { json?: unknown; form?: FormData; query?: Record<string, string | number> } = {}): Promise<T> {
    const u = new URL('/api/v1' + path, this.url);
    for (const [k, v] of Object.entries(init.query ?? {})) u.searchParams.append(k, String(v));
    const headers: Record<string, string> = { Authorization: `Bearer ${this.key}` };
    let body: BodyInit | undefined = init.form;
    if (init.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const res = await fetch(u, { method, headers, body });
    const text = await res.text();
    let parsed: { code?: number; message?: string; data?: T };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    }
    if (res.status !== 200 || parsed.code !== 0) throw new Error(`${method} ${path}: HTTP ${res.status}: ${parsed.message ?? text.slice(0, 300)}`);
    return parsed.data as T;
  }
}

interface DocView {
  id: string;
  name: string;
  run: string;
  chunk_count: number;
  token_count: number;
  process_duration: number;
  progress_msg: string;
}

/** Latencies of the progress polls: how responsive the API stays while the embedded worker parses. */
const pollLatencies: number[] = [];

async function countByRun(api: Api, datasetId: string, run: string): Promise<number> {
  const t = performance.now();
  const data = await api.call<{ total: number }>('GET', `/datasets/${datasetId}/documents`, { query: { run, page: 1, page_size: 1 } });
  pollLatencies.push(performance.now() - t);
  return data.total;
}

async function allDocuments(api: Api, datasetId: string): Promise<DocView[]> {
  const docs: DocView[] = [];
  for (let page = 1; ; page++) {
    const data = await api.call<{ total: number; docs: DocView[] }>('GET', `/datasets/${datasetId}/documents`, { query: { page, page_size: 100 } });
    docs.push(...data.docs);
    if (data.docs.length < 100 || docs.length >= data.total) return docs;
  }
}

// ------------------------------------------------------------------------------------------ CPU

/** The child processes of the process that parses, by role. */
function cairnChildren(pid: number): Component[] {
  return [
    { name: 'embedding process', root: pid, descendantsOnly: true, match: /embedding-process/ },
    { name: 'parser processes', root: pid, descendantsOnly: true, match: /parser-process/ },
    { name: 'other children', root: pid, descendantsOnly: true },
  ];
}

/** Anonymous and file-backed RSS of each single-process component (/proc/<pid>/status), e.g. 'Temporal dev server 94 + 94 MB'. */
function rssKinds(components: Component[]): string {
  const kb = (status: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return components
    .filter((c) => c.rootOnly)
    .map((c) => {
      try {
        const status = readFileSync(`/proc/${c.root}/status`, 'utf8');
        return `${c.name} ${Math.round(kb(status, 'RssAnon') / 1024)} + ${Math.round(kb(status, 'RssFile') / 1024)} MB`;
      } catch {
        return `${c.name} gone`;
      }
    })
    .join('; ');
}

// ------------------------------------------------------------------------------------------ report helpers

const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const rate = (n: number, ms: number) => (n / (ms / 1000)).toFixed(n / (ms / 1000) < 10 ? 2 : 1);
const pad = (s: string, n: number) => s.padStart(n);

interface StageFigures {
  stage: string;
  /** Percent of the wall time any stage ran (see the legend printed below the table). */
  sharePct: number;
  meanRunMs: number;
  queueWaitPerDocMs: number;
}

/** Prints the stage table; returns each stage's wall share, mean run time and queue wait per document. */
function stageReport(runs: WorkflowRun[], docs: number): StageFigures[] {
  const figures: StageFigures[] = [];
  const activities = runs.flatMap((r) => r.activities).filter((a) => a.status !== 'open' && isStage(a.type));
  const stages = ALL_STAGES.filter(([, type]) => activities.some((a) => a.type === type));
  const totalRun = activities.reduce((s, a) => s + (a.closed - a.started), 0);
  const shares = wallShares(activities.map((a) => ({ label: a.type, start: a.started, end: a.closed })));
  const wall = unionMs(activities.map((a) => [a.started, a.closed]));
  const cols = ['total run', 'mean/doc', 'p50', 'p95', 'max', 'busy wall', 'wall share', 'share/doc', 'peak ||', 'queue wait', 'wait/doc', 'retried'];
  const widths = [10, 9, 7, 7, 7, 10, 15, 9, 7, 10, 8, 7];
  console.log(`  ${'stage'.padEnd(13)} ${cols.map((c, i) => pad(c, widths[i]!)).join(' ')}`);
  for (const [stage, type] of stages) {
    const of = activities.filter((a) => a.type === type);
    const runMs = of.map((a) => a.closed - a.started);
    const total = runMs.reduce((s, x) => s + x, 0);
    const share = shares.get(type) ?? 0;
    const wait = of.reduce((s, a) => s + (a.started - a.scheduled), 0);
    const cells = [
      sec(total),
      sec(total / docs),
      sec(percentile(runMs, 50)),
      sec(percentile(runMs, 95)),
      sec(Math.max(...runMs)),
      sec(unionMs(of.map((a) => [a.started, a.closed]))),
      `${sec(share)} ${pad(`${((100 * share) / wall).toFixed(0)}%`, 4)}`,
      sec(share / docs),
      String(peakOverlap(of.map((a) => [a.started, a.closed]))),
      sec(wait),
      sec(wait / docs),
      String(of.filter((a) => a.attempt > 1).length),
    ];
    console.log(`  ${stage.padEnd(13)} ${cells.map((c, i) => pad(c, widths[i]!)).join(' ')}`);
    figures.push({ stage, sharePct: (100 * share) / wall, meanRunMs: total / Math.max(1, of.length), queueWaitPerDocMs: wait / docs });
  }
  const waitAll = activities.reduce((s, a) => s + (a.started - a.scheduled), 0);
  const blank = (i: number) => pad('', widths[i]!);
  console.log(
    `  ${'all'.padEnd(13)} ${pad(sec(totalRun), widths[0]!)} ${pad(sec(totalRun / docs), widths[1]!)} ${[2, 3, 4].map(blank).join(' ')} ${pad(sec(wall), widths[5]!)} ${pad(sec(wall), widths[6]!)} ${pad(sec(wall / docs), widths[7]!)} ${blank(8)} ${pad(sec(waitAll), widths[9]!)} ${pad(sec(waitAll / docs), widths[10]!)}\n` +
      '  total run, mean/doc, p50..max: Started->Completed of each activity (concurrent activities share the CPU and the one\n' +
      '    embedding thread, so run times overlap and their sum exceeds wall time);\n' +
      '  busy wall: wall time with at least one activity of the stage running; wall share: wall time split equally among the\n' +
      '    activities running at each instant (the shares add up to the time any stage ran), share/doc = wall share / documents;\n' +
      '  peak ||: most activities of the stage running at once; queue wait: sum of Scheduled->Started (waiting in the task\n' +
      '    queue for a free worker slot); retried: activities whose last attempt was not the first',
  );
  retryReasons(activities);
  return figures;
}

/** The reasons retried activities failed before their last attempt, most frequent first. */
function retryReasons(activities: WorkflowRun['activities']): void {
  const counts = new Map<string, number>();
  for (const a of activities.filter((x) => x.attempt > 1)) {
    const key = `${a.type}: ${(a.lastFailure ?? 'no failure recorded').slice(0, 200)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (counts.size === 0) return;
  console.log('  why retried activities failed before their last attempt (Temporal lastFailure):');
  for (const [reason, n] of [...counts].sort((x, y) => y[1] - x[1]).slice(0, 5)) console.log(`    ${n} x ${reason}`);
}

/**
 * The CPU second by second (in 5-s rows), and where the idle cores were: before the model was busy (the first
 * second the embedding process used half a core), while documents kept arriving, and in the tail (after the
 * last document's embedding step started, when the work in flight only drains).
 */
function timelineReport(intervals: CpuInterval[], components: Component[], runs: WorkflowRun[], atSecond: (epochMs: number) => number): void {
  if (intervals.length === 0) return;
  const embedding = components.findIndex((c) => c.name === 'embedding process');
  const ours = (x: CpuInterval) => x.components.reduce((n, c) => n + c, 0);
  const names = components.map((c) => c.name.replace(/ process(es)?$/, '').replace('Temporal dev server', 'Temporal'));
  const widths = names.map((n) => Math.max(8, n.length));
  console.log(`\n== CPU while parsing, in cores (CPU-s per wall second; ${os.availableParallelism()} cores) ==`);
  console.log(`  ${'from'.padStart(6)} ${'busy'.padStart(5)} ${'idle'.padStart(5)} ${names.map((n, i) => pad(n, widths[i]!)).join(' ')} ${'others'.padStart(6)}`);
  for (const b of bucketed(intervals, 5)) {
    const wall = b.to - b.from;
    const c = (x: number) => (x / wall).toFixed(2);
    console.log(`  ${pad(`${b.from.toFixed(0)} s`, 6)} ${pad(c(b.busy), 5)} ${pad(c(b.idle), 5)} ${b.components.map((x, i) => pad(c(x), widths[i]!)).join(' ')} ${pad(c(Math.max(0, b.busy - ours(b))), 6)}`);
  }
  const end = intervals[intervals.length - 1]!.to;
  const modelBusy = embedding < 0 ? undefined : intervals.find((x) => x.components[embedding]! / (x.to - x.from) >= 0.5);
  const head = modelBusy ? modelBusy.from : 0;
  const embedStarts = runs.flatMap((r) => r.activities.filter((a) => a.type === 'embedAndIndex' || a.type === 'embedChunks' || a.type === 'Tokenizer').map((a) => atSecond(a.started)));
  const firstExtractDone = Math.min(...runs.flatMap((r) => r.activities.filter((a) => EXTRACT_TYPES.has(a.type) && a.status !== 'open').map((a) => atSecond(a.closed))));
  const tail = embedStarts.length ? Math.min(end, Math.max(head, ...embedStarts)) : end;
  const row = (label: string, from: number, to: number) => {
    const p = phase(intervals, from, to);
    console.log(
      `  ${label.padEnd(44)} ${pad(`${p.wall.toFixed(1)} s`, 7)}: idle ${pad(p.idle.toFixed(1), 5)} CPU-s (${pad(((100 * p.idle) / Math.max(1e-9, p.wall * os.availableParallelism())).toFixed(0), 3)}% of its cores), ` +
        `embedding process ${(p.components[embedding] ?? 0).toFixed(1)} CPU-s`,
    );
  };
  console.log(
    `  the first extraction done at ${firstExtractDone.toFixed(1)} s, the first embedding step started at ${Math.min(...embedStarts).toFixed(1)} s, ` +
      `the model busy (>= 0.5 core) from ${head.toFixed(0)} s, the last embedding step started at ${tail.toFixed(1)} s, the last DONE at ${end.toFixed(1)} s`,
  );
  const total = phase(intervals, 0, end + 1);
  row('head: parse request -> the model busy', 0, head);
  row('steady: -> the last embedding step started', head, tail);
  row('tail: -> the last DONE', tail, end + 1);
  console.log(`  ${'whole run'.padEnd(44)} ${pad(`${total.wall.toFixed(1)} s`, 7)}: idle ${pad(total.idle.toFixed(1), 5)} CPU-s`);
}

// ------------------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const corpusOpts = { pdfs: opts.pdfs, docx: opts.docx, pages: opts.pages, paragraphsPerPage: opts.paragraphs, docxParagraphs: opts.docxParagraphs };
  console.log(
    `ingest benchmark: ${opts.pdfs} PDFs x ${opts.pages} pages (${opts.paragraphs} paragraphs/page) + ${opts.docx} DOCX (${opts.docxParagraphs} paragraphs), ` +
      `uploads of ${opts.batch} files; node ${process.version}, ${os.availableParallelism()} CPUs, load average ${os.loadavg()[0]!.toFixed(2)}` +
      (opts.niceParsers !== undefined ? `; parser processes set to nice ${opts.niceParsers}` : ''),
  );

  let t = performance.now();
  const files: CorpusFile[] = await generateCorpus(corpusOpts);
  const bytes = files.reduce((n, f) => n + f.bytes.byteLength, 0);
  console.log(`corpus: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB, generated in ${sec(performance.now() - t)} (not part of the numbers below)`);

  const dataDir = mkdtempSync(join(os.tmpdir(), 'cairn-bench-ingest-'));
  t = performance.now();
  const services = await startProfileServices(opts.profile);
  console.log(`profile ${services.description}${opts.profile === 'embedded' ? '' : `; started in ${sec(performance.now() - t)}`}`);
  const stops: (() => Promise<void>)[] = [() => services.stop()];
  let config: Config;
  try {
    const base = loadConfig({ ...process.env, ...services.env, CAIRN_DATA_DIR: dataDir });
    config = {
      ...base,
      port: 0,
      temporalAddress: undefined, // always our own dev server
      temporalPort: 0,
      temporalUiPort: 0,
      taskQueue: `cairn-bench-ingest-${process.pid}`,
      embeddedWorker: false, // a `cairn worker` process, see worker.ts
    };
  } catch (err) {
    await services.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const log = pino({ level: process.env.LOG_LEVEL ?? 'warn' });
  let monitor: NodeJS.Timeout | undefined;
  let renicer: NodeJS.Timeout | undefined;
  let memory: MemoryWatch | undefined;
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      clearInterval(monitor);
      clearInterval(renicer);
      memory?.stop();
      for (const stop of stops.reverse()) await stop();
      if (opts.keep) console.log(`data directory kept: ${dataDir}`);
      else rmSync(dataDir, { recursive: true, force: true });
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    t = performance.now();
    // What runs the pipeline: the process watched for runaway memory, and the processes measured.
    let installation: { url: string; adminKey: string; temporalAddress: string; guarded: { pid: number; exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined; logTail(): string; kill(): void }; components: Component[] };
    if (opts.embedded) {
      const nodeArgs = opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`] : [];
      const cairn = await startEmbeddedCairn(config.rootDir, dataDir, config.taskQueue, services.env, nodeArgs);
      stops.push(() => cairn.stop());
      const devServer = findDevServer(cairn.child.pid!);
      installation = {
        url: cairn.url,
        adminKey: cairn.adminKey,
        temporalAddress: cairn.temporalAddress,
        guarded: { pid: cairn.child.pid!, exited: cairn.exited, logTail: () => cairn.logTail(), kill: () => cairn.child.kill('SIGKILL') },
        components: [
          { name: 'Cairn process', root: cairn.child.pid!, rootOnly: true },
          ...cairnChildren(cairn.child.pid!),
          ...(devServer ? [{ name: 'Temporal dev server', root: devServer, rootOnly: true }] : []),
          ...services.components(),
        ],
      };
      console.log(`started \`cairn start\` (pid ${cairn.child.pid}, ${cairn.url}, Temporal ${cairn.temporalAddress}) in ${sec(performance.now() - t)}; data in ${dataDir}`);
      const entries = Object.entries(cairn.compiled);
      console.log(
        `compiled JavaScript (dist/node/): ${entries.map(([name, yes]) => `${name} ${yes ? 'compiled' : 'TypeScript through tsx'}`).join(', ')}` +
          (entries.every(([, yes]) => yes) ? '' : ' (stale or missing: run `node scripts/build-node.mjs`; tsx costs ~100 MB per process)'),
      );
    } else {
      const cairn: Cairn = await startCairn(config, { log });
      stops.push(() => cairn.stop());
      const worker = await startBenchWorker(config, cairn.temporalAddress, services.env);
      stops.push(() => worker.stop());
      const devServer = findDevServer(process.pid);
      installation = {
        url: cairn.url,
        adminKey: cairn.adminApiKey!,
        temporalAddress: cairn.temporalAddress,
        guarded: { pid: worker.child.pid!, exited: worker.exited, logTail: () => worker.logTail(), kill: () => worker.child.kill('SIGKILL') },
        components: [
          { name: 'API (this process)', root: process.pid, rootOnly: true },
          { name: 'worker process', root: worker.child.pid!, rootOnly: true },
          ...cairnChildren(worker.child.pid!),
          ...(devServer ? [{ name: 'Temporal dev server', root: devServer, rootOnly: true }] : []),
          ...services.components(),
        ],
      };
      console.log(
        `started Temporal dev server (${cairn.temporalAddress}), Cairn API (${cairn.url}) and a worker process (pid ${worker.child.pid}) in ${sec(performance.now() - t)}; data in ${dataDir}`,
      );
    }
    const { components, guarded } = installation;
    memory = new MemoryWatch(components);
    const mem = memory;
    const guardedIndex = components.findIndex((c) => c.root === guarded.pid);
    // Watch the worker from a timer, so a long parse request does not hide a runaway worker.
    let parseStartAt = 0;
    let fatal: Error | undefined;
    monitor = setInterval(() => {
      const rss = mem.last.rss[guardedIndex]!;
      const exit = guarded.exited();
      if (!fatal && exit) fatal = new Error(`the process running the worker exited (${exit.code ?? exit.signal}); its log ends with:\n${guarded.logTail()}`);
      if (!fatal && rss > opts.maxRssBytes) {
        const since = parseStartAt ? ` ${sec(performance.now() - parseStartAt)} after the parse request` : '';
        fatal = new Error(`the process running the worker grew to ${(rss / 2 ** 30).toFixed(1)} GB of memory${since} (limit --max-rss-gb ${opts.maxRssBytes / 2 ** 30}); stopped it`);
        guarded.kill();
      }
    }, 500);
    // The parser processes' niceness as the service set it, and --nice-parsers: another one (0 = the model's
    // own priority), to see whether parsing at a lower priority leaves the model its cores. A process is read
    // on the poll after the one that found it: the service sets its niceness just after starting it.
    const parsers = new Map<number, { nice?: number; overridden: boolean }>();
    renicer = setInterval(() => {
      for (const pid of findProcesses(/parser-process/, guarded.pid)) {
        const seen = parsers.get(pid);
        if (!seen) {
          parsers.set(pid, { overridden: false });
          continue;
        }
        if (seen.overridden) continue;
        try {
          seen.nice = os.getPriority(pid);
          if (opts.niceParsers !== undefined) {
            os.setPriority(pid, opts.niceParsers);
            seen.overridden = true;
          }
        } catch {
          // Gone meanwhile.
        }
      }
    }, 100);
    const reportParserNiceness = () =>
      console.log(
        `parser processes: ${[...parsers].map(([pid, p]) => `${pid} at nice ${p.nice ?? '?'} as the service set it`).join(', ') || 'none seen'}` +
          (opts.niceParsers !== undefined ? `, then set to nice ${opts.niceParsers}` : ''),
      );
    const cairn = { url: installation.url, adminApiKey: installation.adminKey, temporalAddress: installation.temporalAddress };
    const api = new Api(cairn.url, cairn.adminApiKey!);
    // --pipeline TEMPLATE: the dataset ingests through a pipeline created from that template (docs/pipelines.md).
    const pipeline = opts.pipeline ? await api.call<{ id: string; title: string }>('POST', '/agents', { json: { template_id: opts.pipeline, title: `bench ${opts.pipeline} ${Date.now()}` } }) : undefined;
    const ds = await api.call<{ id: string; embedding_model: string; chunk_method: string }>('POST', '/datasets', {
      json: { name: `ingest-bench-${Date.now()}`, ...(pipeline ? { parse_type: 1, pipeline_id: pipeline.id } : {}) },
    });
    console.log(`dataset ${ds.id}: ${pipeline ? `pipeline '${pipeline.title}' (template ${opts.pipeline})` : `chunk_method ${ds.chunk_method}`}, embedding_model ${ds.embedding_model}`);

    // Upload.
    const ids: string[] = [];
    const uploadStart = performance.now();
    for (let i = 0; i < files.length; i += opts.batch) {
      const form = new FormData();
      for (const f of files.slice(i, i + opts.batch)) form.append('file', new Blob([new Uint8Array(f.bytes)]), f.name);
      const docs = await api.call<{ id: string }[]>('POST', `/datasets/${ds.id}/documents`, { form });
      ids.push(...docs.map((d) => d.id));
    }
    const uploadMs = performance.now() - uploadStart;
    if (ids.length !== files.length) throw new Error(`uploaded ${ids.length} of ${files.length} files`);
    const requests = Math.ceil(files.length / opts.batch);
    console.log(
      `\nupload: ${files.length} files in ${requests} requests, ${sec(uploadMs)} (${rate(files.length, uploadMs)} files/s, ${(bytes / 1e6 / (uploadMs / 1000)).toFixed(1)} MB/s, ${(uploadMs / requests).toFixed(0)} ms per request)`,
    );

    // Parse and wait.
    const idleBefore = mem.sample();
    mem.resetPeaks();
    const cpuStart = cpuSnapshot(mem);
    const threadsStart = threadCpu(guarded.pid);
    const timeline = new CpuTimeline(() => cpuSnapshot(mem));
    timeline.start(cpuStart);
    const parseStart = performance.now();
    parseStartAt = parseStart;
    const parseStartEpoch = Date.now();
    const started = await api.call<{ success_count?: number; errors?: string[] } | null>('POST', `/datasets/${ds.id}/chunks`, { json: { document_ids: ids } });
    const parseRequestMs = performance.now() - parseStart;
    console.log(`parse request: ${ids.length} documents started in ${sec(parseRequestMs)}${started?.errors?.length ? `; errors: ${started.errors.join('; ')}` : ''}`);

    let lastPrint = performance.now();
    let finished = 0;
    let done = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      if (fatal) throw fatal;
      // One request per poll while documents run: the polls are served by the process being measured.
      const running = await countByRun(api, ds.id, 'RUNNING');
      const elapsed = performance.now() - parseStart;
      const print = performance.now() - lastPrint > 15_000;
      if (running === 0 || print) {
        done = await countByRun(api, ds.id, 'DONE');
        const failed = await countByRun(api, ds.id, 'FAIL');
        const cancelled = await countByRun(api, ds.id, 'CANCEL');
        finished = done + failed + cancelled;
        if (finished >= ids.length) break;
        if (print) {
          lastPrint = performance.now();
          console.log(`  ${sec(elapsed).padStart(8)}: ${done} DONE, ${failed} FAIL, ${cancelled} CANCEL of ${ids.length} (${rate(done, elapsed)} docs/s so far)`);
        }
      }
      if (elapsed > opts.timeoutMs) throw new Error(`timed out after ${sec(elapsed)}: ${finished} of ${ids.length} documents finished`);
    }
    const parseMs = performance.now() - parseStart;
    const cpuEnd = cpuSnapshot(mem);
    const threadsEnd = threadCpu(guarded.pid);
    timeline.stop(cpuEnd);
    const peaks = { each: [...mem.peaks], total: mem.peakTotal };

    // Results as the API reports them.
    const docs = await allDocuments(api, ds.id);
    const ok = docs.filter((d) => d.run === 'DONE');
    const notOk = docs.filter((d) => d.run !== 'DONE');
    const chunks = ok.reduce((n, d) => n + d.chunk_count, 0);
    const tokens = ok.reduce((n, d) => n + d.token_count, 0);
    const durations = ok.map((d) => d.process_duration * 1000);

    // Stage timings from Temporal.
    const runs = (await fetchParseHistories(cairn.temporalAddress, config.temporalNamespace, ids.length)).filter((r) => r.start >= parseStartEpoch - 60_000);
    const byType = (type: string) => runs.flatMap((r) => r.activities.filter((a) => a.type === type && a.status === 'completed'));
    const pages = [...EXTRACT_TYPES].flatMap(byType).reduce((n, a) => n + pagesOf(a.result), 0);
    const pdfPages = opts.pdfs * opts.pages;

    console.log(`\n== results: ${ok.length} DONE, ${notOk.length} not DONE, in ${sec(parseMs)} from the parse request to the last DONE ==`);
    for (const d of notOk.slice(0, 5)) console.log(`  ${d.name}: ${d.run} ${d.progress_msg}`);
    reportParserNiceness();
    console.log(`documents: ${rate(ok.length, parseMs)} docs/s`);
    console.log(`pages:     ${rate(pages, parseMs)} pages/s (${pages} pages as extracted: ${pdfPages} PDF pages + ${pages - pdfPages} DOCX pages)`);
    console.log(`chunks:    ${rate(chunks, parseMs)} chunks/s (${chunks} chunks, ${tokens} tokens = ${rate(tokens, parseMs)} tokens/s; ${(chunks / Math.max(1, ok.length)).toFixed(1)} chunks/doc)`);
    console.log(`end to end incl. upload: ${rate(ok.length, parseMs + uploadMs)} docs/s over ${sec(parseMs + uploadMs)}`);
    console.log(
      `per document (process_duration, begin of run to DONE): mean ${sec(durations.reduce((s, x) => s + x, 0) / Math.max(1, durations.length))}, p50 ${sec(percentile(durations, 50))}, p95 ${sec(percentile(durations, 95))}, max ${sec(Math.max(...durations))}`,
    );
    for (const kind of ['pdf', 'docx'] as const) {
      const names = new Set(files.filter((f) => f.kind === kind).map((f) => f.name));
      const ds2 = ok.filter((d) => names.has(d.name));
      if (ds2.length) console.log(`  ${kind.padEnd(4)}: ${ds2.length} docs, ${(ds2.reduce((n, d) => n + d.chunk_count, 0) / ds2.length).toFixed(1)} chunks/doc, mean process_duration ${sec(ds2.reduce((n, d) => n + d.process_duration * 1000, 0) / ds2.length)}`);
    }
    const cpu = cpuUse(cpuStart, cpuEnd);
    const cores = (x: number) => `${x.toFixed(0)} CPU-s = ${(x / cpu.wall).toFixed(2)} cores`;
    console.log(
      `CPU while parsing: machine ${(cpu.machine * 100).toFixed(0)}% busy across ${os.availableParallelism()} cores; ` +
        components.map((c, i) => `${c.name} ${cores(cpu.components[i]!)}`).join('; '),
    );
    const threads = threadCpuUse(threadsStart, threadsEnd).filter(([, s]) => s >= 0.05);
    console.log(`  ${components[guardedIndex]!.name} by thread: ${threads.map(([name, s]) => `${name} ${s.toFixed(1)}`).join(', ')} CPU-s`);
    const byName = (name: string) => {
      const i = components.findIndex((c) => c.name === name);
      return i < 0 ? 0 : cpu.components[i]!;
    };
    // The process that parses, with its children (the embedding model and the parsers): the worker's cost.
    const workCpu = components.reduce((n, c, i) => (c.root === guarded.pid ? n + cpu.components[i]! : n), 0);
    console.log(
      `cost of the process that parses: ${(workCpu / Math.max(1, ok.length)).toFixed(2)} CPU-s per document, ${((1000 * workCpu) / Math.max(1, chunks)).toFixed(1)} CPU-ms per chunk; ` +
        `load average ${os.loadavg()[0]!.toFixed(2)} at the end (other processes compete for the cores)`,
    );
    console.log(
      `memory (RSS) while parsing, peak: ${components.map((c, i) => `${c.name} ${mb(peaks.each[i]!)}`).join('; ')}; ` +
        `whole installation ${mb(peaks.total)} (before the parse request: ${mb(idleBefore.total)})`,
    );
    console.log(`resident memory by kind at the last DONE (anonymous: heaps, what a collector or malloc can give back; file: mapped code and data): ${rssKinds(components)}`);
    console.log(
      `API latency while parsing (${pollLatencies.length} progress polls, GET /datasets/{id}/documents?run=...): ` +
        `p50 ${(percentile(pollLatencies, 50)).toFixed(0)} ms, p95 ${(percentile(pollLatencies, 95)).toFixed(0)} ms, max ${Math.max(...pollLatencies).toFixed(0)} ms`,
    );

    console.log(`\n== stages, from ${runs.length} parseDocument workflow histories (server timestamps) ==`);
    const stages = stageReport(runs, ok.length);
    const closed = runs.filter((r) => r.status !== 'open');
    const firstStart = Math.min(...closed.map((r) => r.start));
    const lastEnd = Math.max(...closed.map((r) => r.end));
    const e2e = closed.map((r) => r.end - r.start);
    const firstWait = closed.map((r) => {
      const extract = r.activities.find((a) => EXTRACT_TYPES.has(a.type));
      return extract ? extract.started - r.start : NaN;
    }).filter((x) => !Number.isNaN(x));
    const stageActs = (r: WorkflowRun) => r.activities.filter((a) => isStage(a.type));
    const cleanup = closed.map((r) => r.activities.filter((a) => a.type === 'removeWorkFiles').reduce((s, a) => s + (a.closed - a.scheduled), 0));
    const overhead = closed.map((r, i) => r.end - r.start - stageActs(r).reduce((s, a) => s + (a.closed - a.scheduled), 0) - cleanup[i]!);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    console.log(`workflows: first started -> last closed ${sec(lastEnd - firstStart)}; per workflow mean ${sec(mean(e2e))}, p50 ${sec(percentile(e2e, 50))}, max ${sec(Math.max(...e2e))}`);
    console.log(
      `queue wait before extract started (workflow start -> extract Started): mean ${sec(mean(firstWait))}, p50 ${sec(percentile(firstWait, 50))}, max ${sec(Math.max(...firstWait))}`,
    );
    const startDelay = closed.map((r) => r.start - parseStartEpoch);
    console.log(
      `start delay (parse request sent -> workflow started; the request starts documents one by one): mean ${sec(mean(startDelay))}, max ${sec(Math.max(...startDelay))}`,
    );
    console.log(`cleanup activity (removeWorkFiles, Scheduled->Completed, i.e. incl. its queue wait): mean ${sec(mean(cleanup))} per workflow`);
    console.log(`orchestration (workflow time between activities: workflow tasks, scheduling): mean ${sec(mean(overhead))} per workflow`);
    timelineReport(timeline.intervals(), components, runs, (epochMs) => (epochMs - parseStartEpoch) / 1000 + (parseStart - timeline.origin) / 1000);

    const summary = new BenchSummary();
    summary.add('documents DONE', `${ok.length} of ${ids.length}`);
    summary.add('chunks, pages', `${chunks}, ${pages}`);
    summary.add('upload', `${sec(uploadMs)} (${rate(files.length, uploadMs)} files/s)`);
    summary.add('parse request (starts every workflow)', sec(parseRequestMs));
    summary.add('parse request -> last DONE', sec(parseMs));
    summary.add('throughput', `${rate(ok.length, parseMs)} docs/s, ${rate(chunks, parseMs)} chunks/s`);
    summary.add('per document (process_duration) p50 / p95', `${sec(percentile(durations, 50))} / ${sec(percentile(durations, 95))}`);
    summary.add(`stage wall share ${stages.map((f) => f.stage).join(' / ')}`, stages.map((f) => `${f.sharePct.toFixed(0)}%`).join(' / '));
    summary.add(`stage mean run ${stages.map((f) => f.stage).join(' / ')}`, stages.map((f) => sec(f.meanRunMs)).join(' / '));
    summary.add('queue wait per document, all stages', sec(stages.reduce((n, f) => n + f.queueWaitPerDocMs, 0)));
    summary.add('machine CPU busy while parsing', `${(cpu.machine * 100).toFixed(0)}% of ${os.availableParallelism()} cores`);
    components.forEach((c, i) => summary.add(`CPU while parsing: ${c.name}`, `${(cpu.components[i]! / cpu.wall).toFixed(2)} cores (${cpu.components[i]!.toFixed(1)} CPU-s)`));
    summary.add('peak RSS, whole installation', mb(peaks.total));
    summary.add('API latency while parsing p50 / p95', `${percentile(pollLatencies, 50).toFixed(0)} / ${percentile(pollLatencies, 95).toFixed(0)} ms`);
    summary.write();

    // Memory coming back: the installation left alone after its last document.
    if (opts.idleSec > 0) {
      console.log(`\n== memory (RSS) after the last DONE, idle for ${opts.idleSec} s ==`);
      console.log(`  ${'after'.padStart(6)} ${components.map((c) => pad(c.name, Math.max(12, c.name.length))).join(' ')} ${pad('total', 8)}`);
      const idleStart = performance.now();
      const idleCpuStart = cpuSnapshot(mem);
      for (let next = 0; ; next = Math.min(opts.idleSec, next + 10)) {
        const wait = idleStart + next * 1000 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const s = mem.sample();
        console.log(`  ${pad(`${next} s`, 6)} ${components.map((c, i) => pad(mb(s.rss[i]!), Math.max(12, c.name.length))).join(' ')} ${pad(mb(s.total), 8)}`);
        if (next >= opts.idleSec) break;
      }
      // What the installation costs doing nothing: a slow run (a loaded machine) pays it for longer.
      const idleCpu = cpuUse(idleCpuStart, cpuSnapshot(mem));
      console.log(`  CPU while idle: ${components.map((c, i) => `${c.name} ${((1000 * idleCpu.components[i]!) / idleCpu.wall).toFixed(0)} CPU-ms/s`).join('; ')}`);
      const health = await fetch(new URL('/api/v1/system/healthz', cairn.url)).then((r) => r.json() as Promise<Record<string, unknown>>);
      console.log(`  healthz of the API process: rss_mb ${health.rss_mb}; caches ${JSON.stringify(health.caches ?? 'not reported')}`);
    }

    // The ceiling: the model alone on the texts this run embedded (chunk texts and titles).
    if (opts.limit && ok.length > 0) {
      const texts: string[] = ok.map((d) => d.name);
      for (const d of ok) {
        for (let page = 1; ; page++) {
          const data = await api.call<{ chunks: { content: string; questions: string[] }[] }>('GET', `/datasets/${ds.id}/documents/${d.id}/chunks`, { query: { page, page_size: 100 } });
          texts.push(...data.chunks.map(embeddingText));
          if (data.chunks.length < 100) break;
        }
      }
      const limit = await measureModelLimit(texts);
      const limitChunksPerSecond = chunks / limit.seconds;
      const e2eChunksPerSecond = chunks / (parseMs / 1000);
      console.log(`\n== against the embedding model's limit on this machine (same texts, the model alone, load average ${os.loadavg()[0]!.toFixed(2)}) ==`);
      console.log(
        `model alone: ${limit.texts} texts (${chunks} chunks + ${ok.length} titles, mean ${limit.meanTokens.toFixed(0)} tokens) in ${limit.seconds.toFixed(1)} s = ` +
          `${limit.textsPerSecond.toFixed(1)} texts/s, i.e. ${limitChunksPerSecond.toFixed(1)} chunks/s and ${(pages / limit.seconds).toFixed(2)} pages/s at most`,
      );
      console.log(
        `end to end:  ${e2eChunksPerSecond.toFixed(1)} chunks/s, ${rate(pages, parseMs)} pages/s = ${((100 * e2eChunksPerSecond) / limitChunksPerSecond).toFixed(0)}% of the limit`,
      );
      // Where the rest goes: the CPU the machine gave while parsing, split by who used it.
      const capacity = cpu.wall * os.availableParallelism();
      const ours = cpu.components.reduce((n, c) => n + c, 0);
      const busy = cpu.machine * capacity;
      const pct = (x: number) => `${x.toFixed(0)} CPU-s (${((100 * x) / capacity).toFixed(0)}%)`;
      console.log(
        `the model needs ${limit.cpuSeconds.toFixed(0)} CPU-s for these texts (${((1000 * limit.cpuSeconds) / limit.texts).toFixed(1)} CPU-ms each, ` +
          `${(limit.cpuSeconds / limit.seconds).toFixed(2)} cores busy while alone). While parsing, the machine had ${capacity.toFixed(0)} CPU-s (${sec(parseMs)} x ${os.availableParallelism()} cores):`,
      );
      const embedding = byName('embedding process');
      console.log(
        `  the embedding process ${pct(embedding)}: the model's own ${pct(limit.cpuSeconds)} and ${pct(embedding - limit.cpuSeconds)} more (the model slowed by sharing the cores, tokenizing, messages); ` +
          components.filter((c) => c.name !== 'embedding process').map((c) => `${c.name} ${pct(byName(c.name))}`).join('; ') +
          `; other processes on the machine ${pct(Math.max(0, busy - ours))}; idle ${pct(Math.max(0, capacity - busy))}`,
      );
      // Independent of the neighbours' load: what share of the installation's own CPU was the model's need.
      console.log(
        `the model's own need is ${((100 * limit.cpuSeconds) / ours).toFixed(0)}% of the ${ours.toFixed(0)} CPU-s the installation used: with the cores to itself and ` +
          `never idle, end to end would reach about that share of the limit`,
      );
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
