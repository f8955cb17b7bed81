import assert from 'node:assert/strict';
import type { PageRange } from '../../../src/parsing/checkpoint.js';
import { DEFAULT_PARSE_LIMITS } from '../../../src/parsing/limits.js';
import { ParserPool } from '../../../src/parsing/parser-pool.js';
import { makePdf } from '../../fixtures/generate.js';
import { fakeJpeg, pageTreePdf } from '../../fixtures/page-tree-pdf.js';

describe('page limits and checkpoints in the parser processes', function () {
  this.timeout(90_000);
  const pools: ParserPool[] = [];
  const pool = (options: Partial<ConstructorParameters<typeof ParserPool>[0]> = {}): ParserPool => {
    const p = new ParserPool({ processes: 1, memoryMb: 1024, timeoutSec: 60, idleSec: 60, pageTimeoutSec: 60, limits: DEFAULT_PARSE_LIMITS, ...options });
    pools.push(p);
    return p;
  };
  after(async () => {
    await Promise.all(pools.map((p) => p.stop()));
  });

  it('a PDF whose page tree lists 300,000 pages fails on the page limit within seconds, naming the limit and its setting', async () => {
    const bytes = pageTreePdf(300_000);
    assert.ok(bytes.length < 3 * 1024 * 1024, 'a small file');
    const parsers = pool();
    // The process started and pdfjs loaded first: the bound is on the file, not on a cold start of a busy machine.
    await parsers.extract(await makePdf({ pages: 1, paragraphsPerPage: 1 }), 'warm.pdf');
    const started = Date.now();
    await assert.rejects(parsers.extract(bytes, 'tree.pdf'), (error: Error) => {
      assert.equal(error.name, 'ParseLimitError');
      assert.match(error.message, /^tree\.pdf was refused: it has 300000 pages, more than the limit of 10000 pages \(CAIRN_PARSE_MAX_PAGES\)$/);
      return true;
    });
    assert.ok(Date.now() - started < 20_000, `failed after ${Date.now() - started} ms`);
  });

  it('a JPEG of random data behind valid magic bytes is refused before decoding, naming the pixel limit', async () => {
    const started = Date.now();
    await assert.rejects(pool().extract(fakeJpeg(), 'fake.jpg'), /^ParseLimitError: fake\.jpg was refused: its image header gives no size, .*\(CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS\)$/);
    assert.ok(Date.now() - started < 20_000, `failed after ${Date.now() - started} ms`);
  });

  it('a page that takes longer than the page time limit fails the file, naming the limit and its setting', async () => {
    // A fresh process loads pdfjs before the first page is reported: far more than 50 ms.
    await assert.rejects(pool({ pageTimeoutSec: 0.05 }).extract(await makePdf({ pages: 2, paragraphsPerPage: 1 }), 'slow.pdf'), (error: Error) => {
      assert.equal(error.name, 'ParseLimitError');
      assert.match(error.message, /^slow\.pdf took longer than 0\.05 s on one page \(limit 0\.05 s per page, CAIRN_PARSE_PAGE_TIMEOUT_SEC\)$/);
      return true;
    });
  });

  it('a parse resumed after its parser process died skips the finished page ranges and gives the same document', async () => {
    const parsers = pool({ limits: { ...DEFAULT_PARSE_LIMITS, checkpointPages: 20 } });
    const pdf = await makePdf({ pages: 400, paragraphsPerPage: 1 });
    const whole = await parsers.extract(pdf, 'long.pdf');

    const saved: PageRange[] = [];
    const first = parsers.extract(pdf, 'long.pdf', {
      checkpoints: {
        done: [],
        save: (range) => {
          saved.push(range);
          // The restart: the process dies mid-file, after its second range.
          if (saved.length === 2) process.kill(parsers.processes()[0]!.pid, 'SIGKILL');
        },
      },
    });
    await assert.rejects(first, /ended unexpectedly/);
    const finished = saved.slice(0, 2);
    assert.deepEqual(finished.map((r) => [r.from, r.to]), [[1, 20], [21, 40]]);

    const pagesRead: number[] = [];
    const resumed = await parsers.extract(pdf, 'long.pdf', {
      checkpoints: { done: finished, save: () => undefined },
      onProgress: (_fraction, message) => {
        const m = /^Reading page (\d+) of 400$/.exec(message);
        if (m) pagesRead.push(Number(m[1]));
      },
    });
    assert.equal(pagesRead[0], 41, 'the resumed parse starts after the last finished range');
    assert.equal(pagesRead.length, 360, 'pages 1-40 were not parsed again');
    assert.deepEqual(resumed, whole);
  });
});
