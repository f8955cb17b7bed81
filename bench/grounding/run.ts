/**
 * The grounding check on the built-in models (prints numbers; not a timed test).
 *
 *   npx tsx bench/grounding/run.ts [--runs 2]
 *
 * Starts a real Cairn (with its worker) on a fresh data dir, parses the grounded question set's documents
 * (test/fixtures/grounded) with the built-in embedder, and asks every question `runs` times of two chats on
 * the built-in chat model: one with prompt_config.grounding_check false, one with it on (the default). Prints,
 * for each: the answer time (median, p90), answers stating the right figure or name, answers stating a number
 * the documents do not, and the share of the model's sentences the check replaced or dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadavg } from 'node:os';
import { apiCall, argument, percentile } from '../common.js';
import { sleep, startBenchCairn } from '../cairn-server.js';

const RUNS = Number(argument('runs', '2'));
const FIXTURES = path.resolve(new URL('../../test/fixtures/grounded', import.meta.url).pathname);
const FILES = ['trail-guide.md', 'stove-sheet.md', 'club-rules.md'];
const QUESTIONS: { question: string; answer: string }[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'questions.json'), 'utf8'));
const corpusNumbers = new Set(FILES.flatMap((f) => fs.readFileSync(path.join(FIXTURES, f), 'utf8').match(/\d+/g) ?? []));

const cairn = await startBenchCairn('grounding', { CAIRN_EMBEDDED_WORKER: 'true' });
const call = async (method: string, route: string, body?: unknown) => (await apiCall(`${cairn.api}${route}`, method, body, cairn.key)).json.data;

try {
  const dataset = await call('POST', '/datasets', { name: 'grounded' });
  const form = new FormData();
  for (const f of FILES) form.append('file', new Blob([fs.readFileSync(path.join(FIXTURES, f))]), f);
  const uploaded = await fetch(`${cairn.api}/datasets/${dataset.id}/documents`, { method: 'POST', headers: { Authorization: cairn.key }, body: form });
  const docs: { id: string }[] = ((await uploaded.json()) as { data: { id: string }[] }).data;
  await call('POST', `/datasets/${dataset.id}/chunks`, { document_ids: docs.map((d) => d.id) });
  for (;;) {
    const listed = await call('GET', `/datasets/${dataset.id}/documents?page_size=10`);
    if (listed.docs.every((d: { run: string }) => d.run === 'DONE')) break;
    await sleep(500);
  }
  console.log(`grounding check, built-in models, ${QUESTIONS.length} questions x ${RUNS} runs; load ${loadavg()[0]!.toFixed(1)}`);
  for (const check of [false, true]) {
    const chat = await call('POST', '/chats', { name: `check-${check}`, dataset_ids: [dataset.id], prompt_config: { grounding_check: check } });
    const times: number[] = [];
    let right = 0;
    let wrongNumber = 0;
    let replaced = 0;
    let sentences = 0;
    for (let run = 0; run < RUNS; run++) {
      for (const q of QUESTIONS) {
        const started = performance.now();
        const { answer, reference } = await call('POST', '/chat/completions', { chat_id: chat.id, stream: false, messages: [{ role: 'user', content: q.question }] });
        times.push(performance.now() - started);
        if (answer.includes(q.answer)) right++;
        if ((answer.replace(/\[ID:\d+\]/g, '').match(/\d+/g) ?? []).some((n: string) => !corpusNumbers.has(n))) wrongNumber++;
        const report = reference.grounding ?? { replaced: [] };
        replaced += report.replaced.length;
        sentences += answer.split(/(?<=[.!?])\s+/).filter((s: string) => s.trim()).length + report.replaced.filter((r: { replacement: string }) => !r.replacement).length - (report.added ? 1 : 0);
      }
    }
    const n = times.length;
    console.log(
      `  check ${check ? 'on ' : 'off'}: answer ${(percentile(times, 50) / 1000).toFixed(2)} s median, ${(percentile(times, 90) / 1000).toFixed(2)} s p90; ` +
        `right ${right}/${n}; stating a number not in the documents ${wrongNumber}/${n}; sentences replaced or dropped ${replaced}/${sentences} (${((100 * replaced) / Math.max(1, sentences)).toFixed(0)}%)`,
    );
  }
} finally {
  await cairn.stop();
}
