/**
 * Web console first-load benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/console/run.ts [--loads 5]
 *
 * Starts its own Temporal dev server and Cairn on a temporary data directory, as the other benches do,
 * then opens `/` in headless Chromium (Debian's, as the console test uses) `loads` times in each of two
 * situations, every load in a fresh browser context (an empty cache, as a first visit):
 *   - a visitor without a session: `/` becomes the log-in page;
 *   - a returning user (the console's token already in localStorage): `/` becomes the datasets page,
 *     which asks the API for the user and the datasets before it shows the table.
 * For each load it counts what the browser fetched (CDP Network events: every response, its type and its
 * bytes on the wire, headers included) and gzips the JS and CSS bodies (zlib, default level): Cairn sends
 * them uncompressed, a gzip-serving proxy in front of it would send the gzipped size.
 *
 * Times are in ms from navigation start, in the page's own clock:
 *   - FCP: the first contentful paint (Paint Timing);
 *   - ready: the page's form or table is in the DOM (a MutationObserver installed before any script runs
 *     notes the first mutation after which it is there); React attaches its event handlers before that
 *     commit, so the controls answer from then on;
 *   - TTI: time to interactive, max(FCP, ready, end of the last long task (>50 ms, Long Tasks API)) once
 *     the main thread has been free of long tasks for 1 s after ready; a simplified form of Lighthouse's
 *     definition (which waits 5 s and also for the network to settle).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { apiCall, argument, percentile } from '../common.js';
import { loadConfig } from '../../src/config.js';
import { startCairn } from '../../src/server.js';
import { startDevServer } from '../../src/engine/dev-server.js';
import { assertConsoleBuilt, launchBrowser } from '../../test/integration/browser.js';

const loads = Number(argument('loads', '5'));
const QUIET_MS = 1000;

type Situation = 'login' | 'datasets';

interface Fetched {
  url: string;
  type: string;
  wireBytes: number;
}

interface Load {
  fetched: Fetched[];
  fcp: number;
  ready: number;
  tti: number;
  longTasks: number;
  longest: number;
}

/**
 * Runs in the page before its scripts (CDP injects it, so the console's CSP does not apply). Plain
 * JavaScript text: a function passed from here would carry tsx's helpers, which the page lacks.
 */
function observer(situation: Situation): string {
  const ready =
    situation === 'login'
      ? `title === 'Log in' && document.querySelector('form input[type=email]') !== null`
      : `title === 'Datasets' && document.querySelector('main table tbody tr') !== null`;
  return `(() => {
    const state = { longTasks: [], ready: undefined };
    window.__bench = state;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) state.longTasks.push([e.startTime, e.startTime + e.duration]);
    }).observe({ type: 'longtask', buffered: true });
    const watcher = new MutationObserver(() => {
      const title = document.querySelector('h1')?.textContent;
      if (state.ready === undefined && ${ready}) {
        state.ready = performance.now();
        watcher.disconnect();
      }
    });
    watcher.observe(document, { subtree: true, childList: true, characterData: true });
  })();`;
}

/** In the page: waits until no long task for `quietMs` after ready and after the last long task; the times then. */
const SETTLED = `(async (quietMs) => {
  const state = window.__bench;
  const ready = state.ready;
  const lastEnd = () => Math.max(ready, ...state.longTasks.map((t) => t[1]));
  while (performance.now() - lastEnd() < quietMs) await new Promise((r) => setTimeout(r, 100));
  const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN;
  const longest = Math.max(0, ...state.longTasks.map((t) => t[1] - t[0]));
  return { fcp, ready, tti: Math.max(fcp, lastEnd()), longTasks: state.longTasks.length, longest };
})(${QUIET_MS})`;

async function loadOnce(browser: Browser, url: string, situation: Situation, token?: string): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    if (token) await context.addInitScript((t) => localStorage.setItem('cairn.console.token', t), token);
    await context.addInitScript({ content: observer(situation) });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const responses = new Map<string, { url: string; type: string }>();
    const fetched: Fetched[] = [];
    cdp.on('Network.responseReceived', (e) => responses.set(e.requestId, { url: e.response.url, type: e.type }));
    cdp.on('Network.loadingFinished', (e) => {
      const r = responses.get(e.requestId);
      if (r) fetched.push({ ...r, wireBytes: e.encodedDataLength });
    });
    await cdp.send('Network.enable');
    await page.goto(url);
    await page.waitForFunction(() => (window as unknown as { __bench: { ready?: number } }).__bench.ready !== undefined, undefined, { timeout: 60_000 });
    const times = (await page.evaluate(SETTLED)) as Omit<Load, 'fetched'>;
    return { fetched, ...times };
  } finally {
    await context.close();
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (values: number[]) => `median ${percentile(values, 50).toFixed(0)} ms (min ${Math.min(...values).toFixed(0)}, max ${Math.max(...values).toFixed(0)})`;

/** The gzipped size of each JS and CSS file the browser fetched (the bytes are the same on every load). */
async function gzippedSizes(fetched: Fetched[]): Promise<Map<string, { raw: number; gzip: number }>> {
  const sizes = new Map<string, { raw: number; gzip: number }>();
  for (const f of fetched) {
    if ((f.type !== 'Script' && f.type !== 'Stylesheet') || sizes.has(f.url)) continue;
    const body = Buffer.from(await (await fetch(f.url)).arrayBuffer());
    sizes.set(f.url, { raw: body.length, gzip: gzipSync(body).length });
  }
  return sizes;
}

async function report(title: string, runs: Load[]) {
  const first = runs[0]!;
  const sizes = await gzippedSizes(first.fetched);
  console.log(`${title}`);
  for (const f of first.fetched) {
    const size = sizes.get(f.url);
    const file = new URL(f.url).pathname + new URL(f.url).search;
    console.log(`  ${f.type.padEnd(10)} ${file.padEnd(44)} ${kb(f.wireBytes).padStart(9)} on the wire${size ? `, ${kb(size.gzip)} gzipped` : ''}`);
  }
  const assets = first.fetched.filter((f) => sizes.has(f.url));
  const wire = assets.reduce((n, f) => n + f.wireBytes, 0);
  const raw = [...sizes.values()].reduce((n, s) => n + s.raw, 0);
  const gzip = [...sizes.values()].reduce((n, s) => n + s.gzip, 0);
  const total = first.fetched.reduce((n, f) => n + f.wireBytes, 0);
  console.log(`  JS + CSS: ${assets.length} files, ${kb(raw)} (${kb(wire)} on the wire, uncompressed), ${kb(gzip)} gzipped; everything fetched: ${first.fetched.length} responses, ${kb(total)}`);
  if (runs.some((r) => r.fetched.length !== first.fetched.length)) console.log(`  (responses per load varied: ${runs.map((r) => r.fetched.length).join(', ')})`);
  console.log(`  FCP   ${ms(runs.map((r) => r.fcp))}`);
  console.log(`  ready ${ms(runs.map((r) => r.ready))}`);
  console.log(`  TTI   ${ms(runs.map((r) => r.tti))}`);
  console.log(`  long tasks per load: median ${percentile(runs.map((r) => r.longTasks), 50)}, the longest ${ms(runs.map((r) => r.longest))}`);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-console-'));
const base = loadConfig({ ...process.env, CAIRN_DATA_DIR: dataDir });
assertConsoleBuilt(base.rootDir);
const temporal = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
const cairn = await startCairn({ ...base, port: 0, temporalAddress: temporal.address, embeddedWorker: false }, { log: pino({ level: 'warn' }) });
const browser = await launchBrowser();
try {
  const api = `${cairn.url}/api/v1`;
  const email = `bench-${process.pid}@example.com`;
  const password = 'a long bench password';
  await apiCall(`${api}/users`, 'POST', { email, nickname: 'Bench', password });
  const token = (await apiCall(`${api}/auth/login`, 'POST', { email, password })).json.data.access_token as string;
  await apiCall(`${api}/datasets`, 'POST', { name: 'Trails' }, `Bearer ${token}`);

  const url = `${cairn.url}/`;
  // One load first, not counted: Chromium and the server warm up (disk cache of the binary, JIT).
  await loadOnce(browser, url, 'login');
  const anonymous: Load[] = [];
  const returning: Load[] = [];
  for (let i = 0; i < loads; i++) {
    anonymous.push(await loadOnce(browser, url, 'login'));
    returning.push(await loadOnce(browser, url, 'datasets', token));
  }
  console.log(`web console first load: ${loads} cold loads each (fresh browser context), headless Chromium ${browser.version()}, ${os.availableParallelism()} CPUs`);
  await report('/ without a session (the log-in page):', anonymous);
  await report('/ with a session (the datasets page, after GET /users/me and GET /datasets):', returning);
} finally {
  await browser.close();
  await cairn.stop();
  await temporal.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
