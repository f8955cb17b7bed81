/**
 * How the API answers while `cairn start` parses one large document: the tree at `--root` (default this one;
 * another worktree with its dist/node built compares versions) is started as `make run` starts it, with a fake
 * OpenAI-compatible embedding server (test/fakes: answers at once, so the parse is Cairn's own work), and one text
 * file of `--paragraphs` lines (~165 bytes each) is uploaded and parsed (`chunk_token_num` 128) while the
 * document is read through the API every 20 ms until it is DONE.
 *
 *   npx tsx bench/ingest/large-document.ts [--paragraphs 30000] [--root DIR] [--cpu-prof DIR] [--idle SECONDS]
 *
 * Prints the parse's time and chunks, and the API's answer times: p50, p99 and the slowest (the longest the
 * Cairn process's event loop went without a turn, at most, plus the request itself). `--cpu-prof DIR` writes a V8
 * CPU profile of the `cairn start` process into DIR (one file per thread, when it exits). Also prints the resident
 * memory of the whole installation (Cairn, its parser and embedding processes, the Temporal dev server): its peak
 * while parsing and, with `--idle SECONDS`, what it is after that long without work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFakeOpenAI } from '../../test/fakes/openai.js';
import { addModelServer, FACTORY } from '../../test/integration/chat-helpers.js';
import { Api } from '../../test/integration/client.js';
import { longText, upload } from '../../test/integration/documents-helpers.js';
import { argument, percentile } from '../common.js';
import { mb, MemoryWatch } from '../processes.js';
import { startEmbeddedCairn } from './embedded.js';

const root = resolve(argument('root', '.'));
const paragraphs = Number(argument('paragraphs', '30000'));
const POLL_MS = 20;
const cpuProfileDir = argument('cpu-prof', '');
const idleSeconds = Number(argument('idle', '0'));

const fake = await startFakeOpenAI();
const dataDir = mkdtempSync(join(tmpdir(), 'cairn-large-document-'));
const cairn = await startEmbeddedCairn(root, dataDir, `large-document-${Date.now()}`, {}, cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : []);
const memory = new MemoryWatch([{ name: 'installation', root: cairn.child.pid! }]);
try {
  const api = new Api(cairn.url, cairn.adminKey);
  await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed', setDefault: false });
  const dataset = (await api.post('/datasets', { name: 'large', embedding_model: `fake-embed@fake@${FACTORY}`, parser_config: { chunk_token_num: 128 } })).body.data.id;
  const bytes = longText(paragraphs);
  const doc = (await upload(api, dataset, [{ name: 'large.txt', bytes }])).body.data[0];
  console.log(`${root}: one text file of ${(bytes.byteLength / 2 ** 20).toFixed(1)} MB; load average ${loadavg()[0]!.toFixed(1)}`);
  memory.resetPeaks();
  await api.post(`/datasets/${dataset}/chunks`, { document_ids: [doc.id] });
  const start = performance.now();
  const answers: number[] = [];
  let last: { run: string; chunk_count: number; progress_msg: string };
  for (;;) {
    const asked = performance.now();
    last = (await api.get(`/datasets/${dataset}/documents`, { id: doc.id })).body.data.docs[0];
    answers.push(performance.now() - asked);
    if (['DONE', 'FAIL', 'CANCEL'].includes(last.run)) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const ms = (p: number) => `${percentile(answers, p).toFixed(0)} ms`;
  console.log(`${last.run}: ${last.chunk_count} chunks in ${((performance.now() - start) / 1000).toFixed(1)} s (${last.progress_msg})`);
  console.log(`the API while parsing, ${answers.length} answers: p50 ${ms(50)}, p99 ${ms(99)}, slowest ${Math.max(...answers).toFixed(0)} ms`);
  console.log(`memory (RSS) of the whole installation: peak while parsing ${mb(memory.peakTotal)}, at DONE ${mb(memory.sample().total)}`);
  if (idleSeconds > 0) {
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    console.log(`after ${idleSeconds} s idle: ${mb(memory.sample().total)}`);
  }
} finally {
  memory.stop();
  await cairn.stop();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
}
