/**
 * Runs one bench once per profile (embedded, then scale-out) and prints their key figures side by side.
 *
 *   npx tsx bench/profiles.ts retrieval [bench options]    # in-process retrieval at 10k chunks
 *   npx tsx bench/profiles.ts retrieval --http [options]   # the same through a real Cairn over HTTP
 *   npx tsx bench/profiles.ts ingest [bench options]       # ~10k chunks ingested end to end
 *
 * Each run is a child process (`bench/<name>/run.ts --profile P --summary FILE`, its output passed
 * through), so the two profiles do not share memory, caches or a warmed-up JIT. Options given here go to
 * both runs and win over the defaults below, which size each bench at about 10,000 chunks and bound its
 * time (bench/retrieval/README.md and bench/ingest/README.md have the measurements). A run that fails stops
 * the comparison.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROFILES, type BenchProfile } from './profile.js';
import { readSummary, type SummaryRows } from './summary.js';

const DEFAULTS: Record<string, string[]> = {
  // 10k chunks; on milvus-lite a hybrid query takes about a second, so each measurement is bounded by time.
  retrieval: ['--sizes', '10000', '--queries', '200', '--seconds', '90', '--recall', '30'],
  // 100 PDFs of 10 pages + 100 DOCX: ~9,800 chunks. The model's own limit and the idle memory watch are
  // the same on both profiles, so they are skipped here.
  ingest: ['--pdfs', '100', '--docx', '100', '--no-limit', '--idle', '0', '--timeout', '30'],
};

const [bench, ...given] = process.argv.slice(2);
if (!bench || !DEFAULTS[bench]) {
  console.error(`usage: npx tsx bench/profiles.ts ${Object.keys(DEFAULTS).join('|')} [options of that bench]`);
  process.exit(2);
}

/** The defaults whose option the caller did not give (bench arguments take the first occurrence of an option). */
function withDefaults(defaults: string[], args: string[]): string[] {
  const out = [...args];
  for (let i = 0; i < defaults.length; i++) {
    const option = defaults[i]!;
    const hasValue = i + 1 < defaults.length && !defaults[i + 1]!.startsWith('--');
    if (!args.includes(option)) out.push(option, ...(hasValue ? [defaults[i + 1]!] : []));
    if (hasValue) i++;
  }
  return out;
}

function runBench(profile: BenchProfile, summaryFile: string): Promise<void> {
  const script = new URL(`./${bench}/run.ts`, import.meta.url).pathname;
  const args = [...withDefaults(DEFAULTS[bench]!, given), '--profile', profile, '--summary', summaryFile];
  console.log(`\n######## ${bench}, profile ${profile}: ${args.join(' ')}\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'inherit' });
  // Ctrl-C reaches the child with the whole process group; a SIGTERM sent to this process alone is passed on.
  const forward = () => child.kill('SIGTERM');
  process.on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', forward);
      if (code === 0) resolve();
      else reject(new Error(`${bench} on the ${profile} profile failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

/**
 * A Markdown table: one row per figure, one column per profile. A figure only one profile has (the
 * scale-out services' CPU) goes right after the figure it follows in that profile's run.
 */
function sideBySide(results: [BenchProfile, SummaryRows][]): string {
  const figures: string[] = [];
  for (const [, rows] of results) {
    rows.forEach(([figure], i) => {
      if (figures.includes(figure)) return;
      const after = i === 0 ? -1 : figures.indexOf(rows[i - 1]![0]);
      figures.splice(after + 1, 0, figure);
    });
  }
  const lines = [`| | ${results.map(([p]) => p).join(' | ')} |`, `|---|${results.map(() => '---').join('|')}|`];
  for (const figure of figures) {
    lines.push(`| ${figure} | ${results.map(([, rows]) => rows.find(([f]) => f === figure)?.[1] ?? '-').join(' | ')} |`);
  }
  return lines.join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-profiles-'));
try {
  const results: [BenchProfile, SummaryRows][] = [];
  for (const profile of PROFILES) {
    const file = join(dir, `${profile}.json`);
    await runBench(profile, file);
    results.push([profile, readSummary(file)]);
  }
  console.log(`\n######## ${bench}: the profiles side by side (${[bench, ...given].join(' ')})\n`);
  console.log(sideBySide(results));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
