import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { getPriority } from 'node:os';
import { DEFAULT_PARSE_LIMITS } from '../../../src/parsing/limits.js';
import { chunkDocument } from '../../../src/chunking/index.js';
import { extract } from '../../../src/parsing/index.js';
import { PARSER_NICENESS, ParserPool } from '../../../src/parsing/parser-pool.js';
import { countTokens } from '../../../src/text/tokens.js';
import { fromJsonWithBytes } from '../../../src/blobs/json-with-bytes.js';
import { makePdf } from '../../fixtures/generate.js';
import { docxBomb, heavyDocx } from '../../fixtures/hostile.js';

const GB = 1024 * 1024 * 1024;

describe('extraction in parser processes', function () {
  this.timeout(120_000);
  const pools: ParserPool[] = [];
  const pool = (options: Partial<ConstructorParameters<typeof ParserPool>[0]> = {}): ParserPool => {
    const p = new ParserPool({ processes: 2, memoryMb: 1024, timeoutSec: 60, idleSec: 60, pageTimeoutSec: 60, limits: DEFAULT_PARSE_LIMITS, ...options });
    pools.push(p);
    return p;
  };
  after(async () => {
    await Promise.all(pools.map((p) => p.stop()));
  });
  /** One pool for the tests that do not change its settings: starting a process costs seconds on a busy machine. */
  let shared: ParserPool;
  before(() => {
    shared = pool();
  });

  it('an idle parser process exits after idleSec, and the next file starts a fresh one', async () => {
    const parsers = pool({ processes: 1, idleSec: 1 });
    await parsers.extract(Buffer.from('first'), 'a.txt');
    const [first] = parsers.processes();
    assert.ok(first, 'a process ran the first file');
    const deadline = Date.now() + 20_000;
    while (parsers.processes().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.equal(parsers.processes().length, 0, 'the idle process exited');
    const doc = await parsers.extract(Buffer.from('second'), 'b.txt');
    assert.equal(doc.sections[0].text, 'second');
  });

  it('runs its processes at a lower CPU priority than the API and the embedding model', async function () {
    // A process already at a lower priority than the parsers' may not be allowed to raise its children's.
    if (getPriority() > PARSER_NICENESS) this.skip();
    const parsers = shared;
    await parsers.extract(Buffer.from('words'), 'a.txt');
    const running = parsers.processes();
    assert.ok(running.length > 0, 'a process ran the file');
    for (const { pid } of running) assert.equal(getPriority(pid), PARSER_NICENESS, `parser process ${pid} runs at nice ${PARSER_NICENESS}`);
  });

  it('returns what extract returns, for several files at once', async () => {
    const parsers = shared;
    const pdf = await makePdf({ pages: 2, paragraphsPerPage: 2 });
    const docs = await Promise.all([
      parsers.extract(pdf, 'a.pdf'),
      parsers.extract(Buffer.from('# Title\n\nBody text.'), 'b.md'),
      parsers.extract(Buffer.from('plain words'), 'c.txt'),
    ]);
    assert.equal(docs[0].pages, 2);
    assert.ok(docs[1].sections.some((s) => s.kind === 'title' && s.text === 'Title'));
    assert.equal(docs[2].sections[0].text, 'plain words');
    assert.ok(parsers.processes().length <= 2, 'never more processes than the pool size');
  });

  it('extracts and chunks in the parser process: the chunks and token count the chunker gives in this process', async () => {
    const pdf = await makePdf({ pages: 3, paragraphsPerPage: 4 });
    const request = { method: 'naive' as const, config: { chunk_token_num: 64 } };
    const chunked = await shared.extractAndChunk(pdf, 'c.pdf', request);
    const drafts = chunkDocument(await extract(pdf, 'c.pdf'), request.method, request.config, { filename: 'c.pdf' });
    assert.ok(drafts.length > 3);
    // The drafts come back as their work file's text.
    assert.deepEqual(fromJsonWithBytes(chunked.draftsJson), drafts);
    assert.deepEqual({ ...chunked, draftsJson: undefined }, { draftsJson: undefined, chunks: drafts.length, tokens: drafts.reduce((n, d) => n + countTokens(d.content), 0), pages: 3, sections: chunked.sections });
    assert.ok(chunked.sections > 0);
    await assert.rejects(shared.extractAndChunk(Buffer.from('%PDF-1.7 garbage'), 'bad.pdf', request), { name: 'CorruptFileError' });
  });

  it('reports progress from the child process', async () => {
    const seen: number[] = [];
    await shared.extract(await makePdf({ pages: 3, paragraphsPerPage: 1 }), 'p.pdf', { onProgress: (f) => seen.push(f) });
    assert.ok(seen.length > 0);
    assert.ok(seen.every((f) => f >= 0 && f <= 1));
  });

  it('keeps the error names that mark bad input', async () => {
    const parsers = shared;
    await assert.rejects(parsers.extract(Buffer.from('%PDF-1.7 garbage'), 'bad.pdf'), { name: 'CorruptFileError' });
    await assert.rejects(parsers.extract(Buffer.from('x'), 'file.xyz'), { name: 'UnsupportedFormatError' });
    await assert.rejects(parsers.extract(docxBomb(420), 'bomb.docx'), { name: 'ParseLimitError', message: /bomb\.docx was refused: .*CAIRN_PARSE_INFLATE_ENTRY_MAX_MB/ });
  });

  it('rejects at once when cancelled, and the pool keeps working afterwards', async () => {
    const parsers = shared;
    const controller = new AbortController();
    const big = await makePdf({ pages: 40, paragraphsPerPage: 6 });
    const running = parsers.extract(big, 'big.pdf', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stopped by the user')), 20);
    await assert.rejects(running, /stopped by the user/);
    const after = await parsers.extract(Buffer.from('still fine'), 'after.txt');
    assert.equal(after.sections[0].text, 'still fine');
  });

  it('kills a process that goes over the memory ceiling: the file fails naming the ceiling, the asker is unharmed', async () => {
    const parsers = pool({ processes: 1, memoryMb: 600 });
    // 240 MB of paragraphs that pass every decompression limit: only the ceiling stops mammoth here.
    const heavy = heavyDocx(240);
    const before = process.memoryUsage.rss();
    const started = Date.now();
    await assert.rejects(parsers.extract(heavy, 'heavy.docx'), {
      name: 'ParseLimitError',
      message: 'heavy.docx exceeded the parser memory ceiling of 600 MB (CAIRN_PARSE_MEMORY_MB)',
    });
    assert.ok(Date.now() - started < 60_000);
    assert.ok(process.memoryUsage.rss() - before < 100 * 1024 * 1024, 'the file was not unpacked in this process');
    assert.equal((await parsers.extract(Buffer.from('next file'), 'next.txt')).sections[0].text, 'next file');
  });

  it('kills a process that takes longer than the time ceiling', async () => {
    const parsers = pool({ processes: 1, timeoutSec: 0.5 });
    await parsers.extract(Buffer.from('warm up'), 'warm.txt');
    const big = await makePdf({ pages: 400, paragraphsPerPage: 6 });
    const started = Date.now();
    await assert.rejects(parsers.extract(big, 'slow.pdf'), {
      name: 'ParseLimitError',
      message: 'slow.pdf took longer than 0.5 s to parse (limit 0.5 s, CAIRN_PARSE_TIMEOUT_SEC)',
    });
    assert.ok(Date.now() - started < 10_000);
    assert.equal((await parsers.extract(Buffer.from('next file'), 'next.txt')).sections[0].text, 'next file');
  });

  it('refuses an oversized text file before handing it to a process', async () => {
    const parsers = pool();
    await assert.rejects(parsers.extract(Buffer.alloc(GB), 'dump.log'), { name: 'ParseLimitError', message: /dump\.log was refused: 1\.0 GB of text/ });
    assert.equal(parsers.processes().length, 0);
  });

  it('loads no parser library into the process that uses it (pdfjs replaces Array.prototype.push and JSON.stringify)', () => {
    // A fresh process: this one has loaded the parsers through other tests.
    const code = `
      const push = Array.prototype.push, stringify = JSON.stringify;
      await import('./src/parsing/parser-pool.ts');
      await import('./activities/parse/index.ts');
      process.stdout.write(JSON.stringify({ push: Array.prototype.push === push, stringify: JSON.stringify === stringify }));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), { push: true, stringify: true });
  });
});
