import assert from 'node:assert/strict';
import { BuiltinEmbeddingModel } from '../../../src/models/builtin/embedding-model.js';
import { builtinModelSettings, useBuiltinModelSettings } from '../../../src/models/builtin/settings.js';
import { loadConfig } from '../../../src/config.js';
import fs from 'node:fs';
import { EMBEDDING_MMAP_THRESHOLD, EMBEDDING_SEMI_SPACE_MB, embeddingProcessStatus } from '../../../src/models/builtin/host.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The built-in embedding model's process ends when idle (CAIRN_EMBED_IDLE_SEC), giving its memory back, and starts again on use. */
describe('models/builtin embedding model: its process ends when idle', function () {
  this.timeout(120_000);
  const texts = ['The cat sleeps on the sofa.', 'Interest rates were raised by the central bank.'];

  it('ends the process after the idle period and starts a new one, with the same vectors, on the next request', async () => {
    const model = new BuiltinEmbeddingModel({ idleSec: 0.5 });
    const before = await model.embed(texts);
    const first = embeddingProcessStatus().pid!;
    assert.ok(alive(first));
    await until(() => !embeddingProcessStatus().running && !alive(first), 5000);
    const after = await model.embed(texts);
    assert.deepEqual(after, before);
    assert.notEqual(embeddingProcessStatus().pid, first, 'a new process');
    await until(() => !embeddingProcessStatus().running, 5000);
  });

  it('keeps the process while requests keep coming within the idle period', async () => {
    const model = new BuiltinEmbeddingModel({ idleSec: 1.5 });
    await model.embed(texts);
    const pid = embeddingProcessStatus().pid;
    for (let i = 0; i < 6; i++) {
      await sleep(500);
      assert.equal(embeddingProcessStatus().pid, pid, `the same process after ${(i + 1) * 0.5} s of use`);
      await model.embed([texts[i % 2]!]);
    }
    await until(() => !embeddingProcessStatus().running, 5000);
  });

  it('takes the idle period from CAIRN_EMBED_IDLE_SEC (through Config, as openBackends passes it)', async () => {
    const saved = builtinModelSettings();
    useBuiltinModelSettings(loadConfig({ CAIRN_EMBED_IDLE_SEC: '0.5' }).builtinModels);
    try {
      const model = new BuiltinEmbeddingModel();
      await model.embed(texts);
      const answeredAt = Date.now();
      await until(() => !embeddingProcessStatus().running, 5000);
      assert.ok(Date.now() - answeredAt < 3000, 'ended after about half a second, not the default 30 s');
    } finally {
      useBuiltinModelSettings(saved);
    }
  });

  it('fails the requests of a process that dies with a clear error, and serves the next one with a new process', async () => {
    const model = new BuiltinEmbeddingModel({ idleSec: 5 });
    await model.embed(texts);
    const pid = embeddingProcessStatus().pid!;
    const long = Array.from({ length: 2000 }, (_, i) => `sentence number ${i} about the weather in the mountains`);
    const pending = model.embed(long);
    await sleep(200);
    process.kill(pid, 'SIGKILL');
    await assert.rejects(pending, /embedding process exited \(SIGKILL\)/);
    assert.equal((await model.embed(texts)).length, 2);
    assert.notEqual(embeddingProcessStatus().pid, pid);
  });

  it('runs the model with its own mmap threshold, not the one Cairn itself may run with (which costs the model ~25% CPU)', async function () {
    if (process.platform !== 'linux') this.skip();
    await until(() => !embeddingProcessStatus().running, 10_000);
    const saved = process.env.MALLOC_MMAP_THRESHOLD_;
    process.env.MALLOC_MMAP_THRESHOLD_ = '131072';
    try {
      await new BuiltinEmbeddingModel({ idleSec: 0.5 }).embed(texts);
      const environ = fs.readFileSync(`/proc/${embeddingProcessStatus().pid}/environ`, 'utf8').split('\0');
      assert.deepEqual(environ.filter((e) => e.startsWith('MALLOC_MMAP_THRESHOLD_=')), [`MALLOC_MMAP_THRESHOLD_=${EMBEDDING_MMAP_THRESHOLD}`]);
      assert.ok(environ.some((e) => e.startsWith('PATH=')), 'the rest of the environment is passed on');
    } finally {
      if (saved === undefined) delete process.env.MALLOC_MMAP_THRESHOLD_;
      else process.env.MALLOC_MMAP_THRESHOLD_ = saved;
    }
  });

  it('runs the model with a small V8 young generation (less resident memory at the same CPU per text)', async function () {
    if (process.platform !== 'linux') this.skip();
    await new BuiltinEmbeddingModel({ idleSec: 0.5 }).embed(texts);
    const args = fs.readFileSync(`/proc/${embeddingProcessStatus().pid}/cmdline`, 'utf8').split('\0');
    assert.ok(args.includes(`--max-semi-space-size=${EMBEDDING_SEMI_SPACE_MB}`), args.join(' '));
  });
});
