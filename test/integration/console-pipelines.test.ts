import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { harness, type Harness } from './harness.js';
import { assertConsoleBuilt, describeViolations, openConsole, seriousViolations, stopAtFirstFailure } from './browser.js';
import { Api } from './client.js';
import { getDoc } from './documents-helpers.js';
import { useFakeProviders } from './providers-helpers.js';
import { callGate, lastUserMessage, startFakes, type CallGate, type Fakes } from '../fakes/index.js';

/**
 * The console's ingestion pipelines in a real browser (Debian's Chromium) against a real Cairn: a dataset
 * created to ingest through a pipeline, a document's steps shown live as it ingests, and the pipeline in the
 * agents list. The pipeline and the fake models are set up through the API; the rest is done through the UI.
 * The steps build on each other, as in console.test.ts.
 */
const NOTES = [
  'The granite cairn marks the trail crossing near the river bend.',
  'Hikers record the weather in a logbook kept under the cairn.',
].join('\n');
const PIPELINE_TITLE = 'Summarized trail notes';
/** As the console lists it (model@instance@provider). */
const EMBEDDING_MODEL = 'fake-embed@fake@OpenAI-API-Compatible';
const STEPS = ['Parser:Reader', 'TokenChunker:Slicer', 'Extractor:Gist', 'Tokenizer:Index'];

describe('web console: ingestion pipelines', function () {
  this.timeout(240_000);
  let h: Harness;
  let fakes: Fakes;
  let browser: Browser;
  let page: Page;
  let user: Api;
  let gate: CallGate | undefined;
  const ids: { pipeline?: string; dataset?: string; document?: string } = {};
  const pageErrors: string[] = [];

  before(async () => {
    h = await harness();
    assertConsoleBuilt(h.config.rootDir);
    // The Extractor's model: a summary of each chunk, naming its first words.
    fakes = await startFakes({ answer: (messages) => ({ answer: `Gist: ${lastUserMessage(messages).split(/\s+/).slice(0, 4).join(' ')}` }) });
    const reg = await new Api(h.url).post('/users', { email: `console-pipelines-${process.pid}-${Date.now()}@example.com`, nickname: 'Pipeline tester', password: 'a long pipeline password' });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    const token = reg.headers.get('authorization')!;
    user = new Api(h.url, token);
    await useFakeProviders(user, fakes);
    const fixture = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'pipelines', 'summarized_chunks.json'), 'utf8'));
    const created = await user.post('/agents', { title: PIPELINE_TITLE, canvas_type: 'Ingestion Pipeline', canvas_category: 'dataflow_canvas', dsl: fixture.dsl });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    ids.pipeline = created.body.data.id;

    ({ browser, page } = await openConsole(h.url, token, pageErrors));
  });

  afterEach(() => gate?.release());
  stopAtFirstFailure('console pipelines', () => page, () => h.config.rootDir, pageErrors);
  after(async () => {
    gate?.release();
    await browser?.close();
    await fakes?.close();
  });

  const url = (to: string) => new URL(to, h.url).toString();
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  it('a dataset created with an ingestion pipeline instead of a chunk method ingests through it', async () => {
    await page.goto(url('/datasets'));
    await heading('Datasets').waitFor();
    await page.getByRole('button', { name: 'New dataset' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Trail notes');
    // A chunk method is the default; choosing a pipeline replaces its select with the pipelines'.
    assert.ok(await dialog.getByRole('radio', { name: 'A chunk method' }).isChecked());
    await dialog.getByRole('radio', { name: 'An ingestion pipeline' }).check();
    assert.equal(await dialog.getByLabel('Chunk method', { exact: true }).count(), 0);
    await dialog.getByLabel('Ingestion pipeline', { exact: true }).selectOption({ label: PIPELINE_TITLE });
    await dialog.getByLabel('Embedding model').selectOption(EMBEDDING_MODEL);
    const violations = await seriousViolations(page);
    assert.deepEqual(violations, [], describeViolations('the new dataset dialog', violations));
    await dialog.getByRole('button', { name: 'Create dataset' }).click();
    await heading('Trail notes').waitFor();
    ids.dataset = new URL(page.url()).pathname.split('/')[2]!;
    const ds = (await user.get(`/datasets/${ids.dataset}`)).body.data;
    assert.deepEqual({ pipeline_id: ds.pipeline_id, parse_type: ds.parse_type, embedding_model: ds.embedding_model }, { pipeline_id: ids.pipeline, parse_type: 1, embedding_model: EMBEDDING_MODEL });

    // The datasets list says how it ingests.
    await page.getByRole('link', { name: 'Datasets' }).first().click();
    const row = page.getByRole('row').filter({ hasText: 'Trail notes' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Ingestion pipeline/);
  });

  it("a document's pipeline steps show live while it ingests: the Extractor runs while the steps before it are done, then every step turns DONE", async () => {
    await page.goto(url(`/datasets/${ids.dataset}`));
    await heading('Trail notes').waitFor();
    // The Extractor's model calls wait until released: the run stays at that step meanwhile.
    gate = callGate();
    fakes.openai.behaviour.gate = gate;
    const dataTransfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'notes.txt', { type: 'text/plain' }));
      return dt;
    }, NOTES);
    const dropzone = page.getByTestId('dropzone');
    await dropzone.dispatchEvent('dragover', { dataTransfer });
    await dropzone.dispatchEvent('drop', { dataTransfer });

    const row = page.locator('tr[data-document="notes.txt"]');
    const steps = row.getByRole('list', { name: 'Ingestion steps of notes.txt' });
    const step = (id: string) => steps.locator(`li[data-step="${id}"]`);
    await step('Extractor:Gist').and(page.locator('[data-status=RUNNING]')).waitFor({ timeout: 120_000 });
    await row.locator('[data-run=RUNNING]').waitFor();
    assert.equal(await step('Parser:Reader').getAttribute('data-status'), 'DONE');
    assert.match((await step('Parser:Reader').textContent()) ?? '', /Parser:Reader \d+\.\d\d s · \d+ pages? · \d+ sections?/);
    assert.match((await step('TokenChunker:Slicer').textContent()) ?? '', /\d+\.\d\d s · \d+ chunks? · \d+ tokens?/);
    assert.match((await step('Extractor:Gist').textContent()) ?? '', /Running.*running…/);
    assert.equal(await step('Tokenizer:Index').count(), 0, 'a step not yet started is not listed');
    ids.document = (await row.getByRole('link', { name: 'notes.txt' }).getAttribute('href'))!.split('/').at(-1);
    assert.equal((await getDoc(user, ids.dataset!, ids.document!)).run, 'RUNNING');

    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    gate.release();
    await row.locator('[data-run=DONE]').waitFor({ timeout: 120_000 });
    await page.waitForFunction(
      (ids) => ids.every((id) => document.querySelector(`tr[data-document="notes.txt"] li[data-step="${id}"]`)?.getAttribute('data-status') === 'DONE'),
      STEPS,
      { timeout: 30_000 },
    );
    assert.deepEqual(await steps.locator('li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-step'))), STEPS);
    assert.match((await step('Extractor:Gist').textContent()) ?? '', /Done Extractor:Gist \d+\.\d\d s · \d+ chunks? · \d+ model calls? · 0 cached calls/);
    assert.match((await step('Tokenizer:Index').textContent()) ?? '', /Done Tokenizer:Index \d+\.\d\d s · \d+ chunks?/);
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'the page was not reloaded');

    // The chunks are the pipeline's: each shows the Extractor's summary.
    const chunks = (await user.get(`/datasets/${ids.dataset}/documents/${ids.document}/chunks`)).body.data.chunks as { content: string }[];
    assert.ok(chunks.length > 0 && chunks.every((c) => c.content.startsWith('Gist: ')), JSON.stringify(chunks));
    const violations = await seriousViolations(page);
    assert.deepEqual(violations, [], describeViolations('the documents page with steps', violations));
    assert.deepEqual(pageErrors, []);
  });

  it('the agents list marks the pipeline; its page shows the canvas and the datasets using it, with nothing to run', async () => {
    await page.goto(url('/agents'));
    const card = page.getByRole('article', { name: PIPELINE_TITLE });
    await card.waitFor();
    assert.match((await card.textContent()) ?? '', /Ingestion pipeline/);
    await card.getByRole('link', { name: PIPELINE_TITLE }).click();
    await heading(PIPELINE_TITLE).waitFor();
    const canvas = page.getByRole('region', { name: 'Agent canvas' });
    await canvas.locator('.react-flow__node').nth(4).waitFor();
    assert.equal(await canvas.locator('.react-flow__node').count(), 5, 'File and the four steps');
    const note = page.getByTestId('pipeline-note');
    assert.match((await note.textContent()) ?? '', /Ingestion pipeline.*Used by Trail notes/);
    assert.equal(await page.getByLabel('Message to the agent').count(), 0, 'no run panel');
    assert.equal(await page.getByRole('tab', { name: 'Sessions' }).count(), 0, 'no sessions');
    await note.getByRole('link', { name: 'Trail notes' }).click();
    await heading('Trail notes').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
