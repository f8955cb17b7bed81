import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { harness, type Harness } from './harness.js';
import { assertConsoleBuilt, describeViolations, launchBrowser, seriousViolations, stopAtFirstFailure } from './browser.js';
import { Api } from './client.js';
import { getDoc } from './documents-helpers.js';
import { startFakes, toolRoundTrip, type Fakes } from '../fakes/index.js';

/**
 * The web console in a real browser (Debian's Chromium) against a real Cairn: each step is what a
 * person does, through the UI only. The steps build on each other: one user, and what the early steps
 * create (a dataset with a parsed document, a provider, a chat, an agent) is used by the later ones.
 */
const TRAIL_TEXT = [
  'The granite cairn marks the trail crossing near the river bend.',
  'Hikers record the weather and the state of the path in a shared logbook kept under the cairn.',
].join('\n');
const REASONING = 'The passages say where the cairn stands.';
const ANSWER = 'The granite cairn marks the trail crossing near the river bend [ID:0].';
const CHAT_MODEL = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBEDDING_MODEL = 'fake-embedding@fake@OpenAI-API-Compatible';

/**
 * Polls the public API until `done` holds for what `read` returns: a step waits on the server state it
 * depends on, never on a fixed sleep. A timeout names what was awaited and what the API last answered.
 */
async function untilApi<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${timeoutMs / 1000} s; the API last answered ${JSON.stringify(value)?.slice(0, 600)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('web console', function () {
  this.timeout(240_000);
  let h: Harness;
  let fakes: Fakes;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = `console-${process.pid}-${Date.now()}@example.com`;
  const password = 'a long console password';
  const ids: { dataset?: string; document?: string; chat?: string; agent?: string; memory?: string } = {};
  /** The public API as the console's user (the JWT the console keeps), for waiting on server state. */
  let user: Api;
  /** Uncaught errors in the page: a console that throws is broken even when the step passed. */
  const pageErrors: string[] = [];

  before(async function () {
    h = await harness();
    assertConsoleBuilt(h.config.rootDir);
    fakes = await startFakes({ answer: () => ({ reasoning: REASONING, answer: ANSWER }), tokenDelayMs: 25 });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  stopAtFirstFailure('console', () => page, () => h.config.rootDir, pageErrors);

  after(async () => {
    await browser?.close();
    await fakes?.close();
  });

  const url = (to: string) => new URL(to, h.url).toString();
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const navigateTo = (link: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
  const datasetTab = (tab: 'Documents' | 'Retrieval test' | 'Settings') => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: tab }).click();

  /** Submits a dialog's form and waits until the dialog closes (saved) or shows an error, which fails the step with its message. */
  async function submitDialog(dialog: Locator, button: string) {
    await dialog.getByRole('button', { name: button, exact: true }).click();
    await page.waitForFunction(() => {
      const open = document.querySelector('dialog[open]');
      return !open || open.querySelector('[role=alert]');
    }, undefined, { timeout: 90_000 });
    const refusal = page.locator('dialog[open] [role=alert]');
    if (await refusal.count()) assert.fail(`${button}: the console shows "${await refusal.first().textContent()}"`);
  }

  /** Drops files on the dataset's drop zone as a person does: a `drop` event carrying a DataTransfer. */
  async function dropFiles(files: { name: string; text: string; type: string }[]) {
    const dataTransfer = await page.evaluateHandle((all) => {
      const dt = new DataTransfer();
      for (const f of all) dt.items.add(new File([f.text], f.name, { type: f.type }));
      return dt;
    }, files);
    const dropzone = page.getByTestId('dropzone');
    await dropzone.dispatchEvent('dragover', { dataTransfer });
    await dropzone.dispatchEvent('drop', { dataTransfer });
  }

  async function createDataset(name: string): Promise<string> {
    await page.getByRole('button', { name: 'New dataset' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await heading(name).waitFor();
    return new URL(page.url()).pathname.split('/')[2]!;
  }

  it('a new user signs up, logs out and logs back in through the console', async () => {
    await page.goto(url('/'));
    await heading('Log in').waitFor();
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name').fill('Console tester');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await heading('Datasets').waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await heading('Log in').waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a wrong password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /password/i, 'the server\'s refusal is shown');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('Datasets').waitFor();
    const token = await page.evaluate(() => localStorage.getItem('cairn.console.token'));
    assert.ok(token, 'the console keeps its session token');
    user = new Api(h.url, token);
  });

  it('a file dropped on a new dataset uploads with its own progress bar, a refused file shows why, and parsing reaches DONE without a reload', async () => {
    ids.dataset = await createDataset('Trails');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    // Two files in one drop, one the server refuses.
    await dropFiles([
      { name: 'trail.txt', text: TRAIL_TEXT, type: 'text/plain' },
      { name: 'setup.exe', text: 'MZ', type: 'application/octet-stream' },
    ]);

    const uploads = page.getByRole('list', { name: 'Uploads' });
    await uploads.getByRole('listitem').filter({ hasText: 'trail.txt' }).and(page.locator('[data-upload-state=done]')).waitFor();
    assert.equal(await uploads.getByRole('progressbar', { name: 'Upload of trail.txt' }).getAttribute('value'), '100');
    const refused = uploads.getByRole('listitem').filter({ hasText: 'setup.exe' });
    await refused.getByRole('alert').waitFor();
    assert.match((await refused.textContent()) ?? '', /not been supported yet: exe/);

    // Parsing starts on upload; the table polls until the run is DONE.
    const row = page.locator('tr[data-document="trail.txt"]');
    await row.locator('[data-run=DONE]').waitFor({ timeout: 150_000 });
    assert.match((await row.textContent()) ?? '', /Task done: 1 chunk,/);
    // The uploaded file's line leaves the list once the table has it; the refused one stays until dismissed.
    await uploads.getByRole('listitem').filter({ hasText: 'trail.txt' }).waitFor({ state: 'detached', timeout: 15_000 });
    await refused.getByRole('button', { name: 'Dismiss setup.exe' }).click();
    await uploads.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'the page was not reloaded');
    ids.document = (await row.getByRole('link', { name: 'trail.txt' }).getAttribute('href'))!.split('/').at(-1);
  });

  it('the retrieval test ranks chunks with their three similarity scores and highlights the matched terms', async () => {
    await page.getByRole('link', { name: 'Retrieval test' }).click();
    await page.getByLabel('Question').fill('granite logbook');
    await page.getByRole('button', { name: 'Run retrieval test' }).click();
    const first = page.locator('li[data-rank="1"]');
    await first.waitFor();
    const scores = (await first.locator('.scores').textContent()) ?? '';
    assert.match(scores, /similarity \d\.\d{3}/);
    assert.match(scores, /vector \d\.\d{3}/);
    assert.match(scores, /term \d\.\d{3}/);
    const marked = await first.locator('mark').allTextContents();
    assert.ok(marked.map((m) => m.toLowerCase()).includes('granite'), `matched terms are highlighted: ${marked}`);
    assert.ok(marked.map((m) => m.toLowerCase()).includes('logbook'), `matched terms are highlighted: ${marked}`);
  });

  it('a document\'s metadata is saved from its settings, and the document downloads as it was uploaded', async () => {
    await datasetTab('Documents');
    const row = page.locator('tr[data-document="trail.txt"]');
    await row.getByRole('button', { name: 'Settings of trail.txt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Document settings: trail.txt' });
    await dialog.getByRole('button', { name: 'Add a field' }).click();
    await dialog.getByLabel('Metadata key 1').fill('region');
    await dialog.getByLabel('Metadata value 1').fill('north');
    await dialog.getByRole('button', { name: 'Add a field' }).click();
    await dialog.getByLabel('Metadata key 2').fill('elevation');
    await dialog.getByLabel('Metadata value 2').fill('1200');
    await submitDialog(dialog, 'Save');
    const saved = await untilApi('the metadata of trail.txt', () => getDoc(user, ids.dataset!, ids.document!), (d) => d.meta_fields?.region !== undefined, 30_000);
    assert.deepEqual(saved.meta_fields, { region: 'north', elevation: 1200 }, 'a number keeps its type');

    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Download trail.txt' }).click()]);
    assert.equal(download.suggestedFilename(), 'trail.txt');
    assert.equal(fs.readFileSync(await download.path(), 'utf8'), TRAIL_TEXT);
  });

  it('an OpenAI-compatible provider added with a connection check serves a chat assistant that streams its answer, reasoning apart, with a citation that opens the chunk', async () => {
    await navigateTo('Model providers');
    await heading('Model providers').waitFor();
    await page.getByLabel('Provider', { exact: true }).selectOption('OpenAI-API-Compatible');
    await page.getByLabel('Instance name').fill('fake');
    await page.getByLabel('Base URL').fill(fakes.openai.baseUrl);
    await page.getByLabel('Model 1 name').fill('fake-chat');
    await page.getByRole('button', { name: 'Add a model' }).click();
    await page.getByLabel('Model 2 name').fill('fake-embedding');
    await page.getByLabel('Model 2 type').selectOption('embedding');
    await page.getByRole('button', { name: 'Check connection' }).click();
    await page.getByText('fake-chat: Connected').waitFor();
    await page.getByText('fake-embedding: Connected').waitFor();
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByText('OpenAI-API-Compatible / fake added with 2 models.').waitFor();
    await page.getByLabel('Default chat model').selectOption(CHAT_MODEL);
    await page.getByText('Default chat model saved.').waitFor();

    await navigateTo('Chat assistants');
    await page.getByRole('button', { name: 'New chat assistant' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Trail guide');
    await dialog.getByLabel(/^Trails/).check();
    await dialog.getByLabel('Chat model').selectOption(CHAT_MODEL);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await heading('Trail guide').waitFor();
    ids.chat = new URL(page.url()).pathname.split('/')[2];
    // A chat without sessions takes a question at once: no click on "New session" first.
    await page.getByLabel('Your question').waitFor();

    // Record every text the answer shows while it streams.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { answersSeen: string[] }).answersSeen = seen;
      new MutationObserver(() => {
        const answers = document.querySelectorAll('[data-role=assistant] [data-testid=answer]');
        const text = answers[answers.length - 1]?.textContent ?? '';
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByLabel('Your question').fill('Where is the granite cairn?');
    await page.getByRole('button', { name: 'Send' }).click();
    const last = page.locator('[data-role=assistant]').last();
    await last.getByRole('button', { name: /^Source 1: trail\.txt/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Send' }).waitFor();

    const seen = await page.evaluate(() => (window as unknown as { answersSeen: string[] }).answersSeen);
    assert.ok(seen.length >= 3, `the answer grew while it streamed: ${JSON.stringify(seen)}`);
    assert.match((await last.getByTestId('answer').textContent()) ?? '', /^The granite cairn marks the trail crossing near the river bend/);
    await last.getByText('Reasoning').click();
    assert.equal((await last.getByTestId('reasoning').textContent())?.trim(), REASONING);

    await last.getByRole('button', { name: /^Source 1/ }).click();
    const cited = page.getByRole('dialog', { name: 'Source: trail.txt' });
    await cited.waitFor();
    assert.match((await cited.getByTestId('cited-chunk').textContent()) ?? '', /granite cairn marks the trail/);
    await cited.getByRole('button', { name: 'Close' }).click();

    // The first question named the session it started; "New session" opens an empty conversation beside it.
    const sessionList = page.getByRole('navigation', { name: 'Sessions' });
    await sessionList.getByRole('button', { name: 'Where is the granite cairn?', exact: true }).waitFor();
    await page.getByRole('button', { name: 'New session' }).click();
    assert.equal(await page.locator('[data-role=assistant]').count(), 0, 'the new session starts empty');
    assert.equal((await user.get(`/chats/${ids.chat}/sessions`)).body.data.length, 1, 'no session is stored before its first question');
    await sessionList.getByRole('button', { name: 'Where is the granite cairn?', exact: true }).click();
    await page.locator('[data-role=assistant]').first().waitFor();
  });

  it('dataset settings are saved, and a document being parsed is stopped, then deleted', async () => {
    await navigateTo('Datasets');
    const scratch = await createDataset('Scratch');
    await datasetTab('Settings');
    await page.getByLabel('Description').fill('Drafts that may go');
    await page.getByLabel('Embedding model').selectOption(EMBEDDING_MODEL);
    await page.getByLabel('Page rank').fill('7');
    await page.getByLabel('Chunk size (tokens)').fill('256');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = (await user.get(`/datasets/${scratch}`)).body.data;
    assert.deepEqual(
      { description: settings.description, embedding_model: settings.embedding_model, pagerank: settings.pagerank, chunk_token_num: settings.parser_config.chunk_token_num },
      { description: 'Drafts that may go', embedding_model: EMBEDDING_MODEL, pagerank: 7, chunk_token_num: 256 },
    );

    // While the fake embedder refuses, Temporal retries the embedding step: the parse stays RUNNING until stopped.
    fakes.openai.behaviour.failure = { status: 503, message: 'the fake embedder is down', path: '/v1/embeddings' };
    try {
      await datasetTab('Documents');
      await dropFiles([{ name: 'draft.txt', text: 'A draft about the basalt ridge.', type: 'text/plain' }]);
      const row = page.locator('tr[data-document="draft.txt"]');
      await row.getByRole('button', { name: 'Stop parsing draft.txt' }).click({ timeout: 60_000 });
      const draftId = (await row.getByRole('link', { name: 'draft.txt' }).getAttribute('href'))!.split('/').at(-1)!;
      await untilApi('draft.txt cancelled', () => getDoc(user, scratch, draftId), (d) => d.run !== 'RUNNING');
      assert.equal((await getDoc(user, scratch, draftId)).run, 'CANCEL');
      await row.locator('[data-run=CANCEL]').waitFor();
      assert.match((await row.textContent()) ?? '', /Cancelled/);

      await row.getByRole('button', { name: 'Delete draft.txt' }).click();
      await row.waitFor({ state: 'detached' });
      assert.equal((await user.get(`/datasets/${scratch}/documents`)).body.data.total, 0, 'the document is gone from the API too');
    } finally {
      fakes.openai.behaviour.failure = undefined;
    }
  });

  it('an agent created from a template shows its canvas nodes and streams each component\'s events when run', async () => {
    await navigateTo('Agents');
    await page.getByRole('button', { name: 'New agent from a template' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Dataset chatbot with citations').check();
    await dialog.getByLabel(/^Trails/).check();
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    await heading('Dataset chatbot with citations').waitFor();
    ids.agent = new URL(page.url()).pathname.split('/')[2];

    const canvas = page.getByRole('region', { name: 'Agent canvas' });
    await canvas.locator('.react-flow__node').first().waitFor();
    const names = await canvas.locator('.react-flow__node strong').allTextContents();
    assert.ok(names.includes('Begin') && names.includes('Dataset answerer'), `canvas nodes: ${names}`);
    assert.ok((await canvas.locator('.react-flow__edge').count()) >= 1, 'the edges are drawn');

    await page.getByLabel('Message to the agent').fill('Where is the cairn?');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const events = page.getByTestId('run-events');
    await events.getByText(/Run finished/).waitFor({ timeout: 90_000 });
    const lines = await events.locator('li').allTextContents();
    assert.ok(lines.some((l) => /Dataset answerer \(Agent\) started/.test(l)), `events: ${lines}`);
    assert.ok(lines.some((l) => /✓ Dataset answerer finished/.test(l)), `events: ${lines}`);
    assert.match((await page.locator('.run-panel [data-testid=answer]').textContent()) ?? '', /granite cairn marks the trail/);
  });

  it("a tool call of the agent lights its Tool node on the canvas, and the run lists the chunks it retrieved", async () => {
    const before = fakes.openai.behaviour.answer;
    // The model searches for the question, then answers from what came back.
    fakes.openai.behaviour.answer = toolRoundTrip('search_my_dateset', (q) => ({ query: q }), () => ANSWER);
    try {
      await page.getByLabel('Message to the agent').fill('Which cairn marks the trail crossing?');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const events = page.getByTestId('run-events');
      await events.getByText(/Run finished/).waitFor({ timeout: 90_000 });
      const lines = await events.locator('li').allTextContents();
      assert.ok(lines.some((l) => l.includes('▶ Tool search_my_dateset called: {"query":"Which cairn marks the trail crossing?"}')), `events: ${lines}`);
      assert.ok(lines.some((l) => /✓ Tool search_my_dateset: 1 chunk: trail\.txt \(\d+\.\d\d s\)/.test(l)), `events: ${lines}`);
      const tool = page.getByRole('region', { name: 'Agent canvas' }).locator('.react-flow__node[data-id="Tool:DatasetAnswererTools"] .canvas-node');
      assert.match((await tool.getAttribute('class')) ?? '', /\bfinished\b/, 'the Tool node shows it ran');
      assert.match((await tool.textContent()) ?? '', /Dataset answerer tools/);
      const retrieved = page.getByTestId('retrieved');
      assert.match((await retrieved.textContent()) ?? '', /Search: “Which cairn marks the trail crossing\?”/);
      assert.match((await retrieved.locator('ol li').first().textContent()) ?? '', /^trail\.txt The granite cairn marks the trail crossing near the river bend\./);
    } finally {
      fakes.openai.behaviour.answer = before;
    }
  });

  it("on a phone, the canvas's zoom buttons cover none of its nodes", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(url(`/agents/${ids.agent}`));
      const canvas = page.getByRole('region', { name: 'Agent canvas' });
      await canvas.locator('.react-flow__node').first().waitFor();
      // The view is fitted once the nodes are measured: wait until the viewport stops moving.
      const viewport = canvas.locator('.react-flow__viewport');
      let transform = '';
      for (let i = 0; i < 20; i++) {
        await sleep(150);
        const now = (await viewport.getAttribute('style')) ?? '';
        if (now === transform) break;
        transform = now;
      }
      const controls = (await canvas.locator('.react-flow__controls').boundingBox())!;
      for (const node of await canvas.locator('.react-flow__node').all()) {
        const box = (await node.boundingBox())!;
        const overlaps = box.x < controls.x + controls.width && controls.x < box.x + box.width && box.y < controls.y + controls.height && controls.y < box.y + box.height;
        assert.ok(!overlaps, `the zoom buttons cover ${await node.getAttribute('data-id')}`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('an agent whose DSL graph nodes have no positions (as the SDK makes them) draws its nodes on the canvas', async () => {
    // A user of its own, in a browser context of its own: the step stands alone and leaves the console's session be.
    const anon = new Api(h.url);
    const reg = await anon.post('/users', { email: `sdk-graph-${process.pid}-${Date.now()}@example.com`, nickname: 'SDK graph', password: 'a long sdk password' });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    const token = reg.headers.get('authorization')!;
    const rows: [string, string, Record<string, unknown>, string[]][] = [
      ['begin', 'Begin', { mode: 'conversational', prologue: 'Hello.' }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['Hi there.'] }, []],
    ];
    const components = Object.fromEntries(rows.map(([id, name, params, downstream]) => [id, { obj: { component_name: name, params }, downstream, upstream: rows.filter((r) => r[3].includes(id)).map((r) => r[0]) }]));
    const dsl = {
      components,
      globals: {},
      history: [],
      path: [],
      retrieval: [],
      // No positions at all, one partial one, and an edge to a node that is not there.
      graph: {
        nodes: [{ id: 'begin', data: { name: 'SDK begin' } }, { id: 'Message:Out', position: { x: 10 }, data: { name: 'SDK reply' } }],
        edges: [{ id: 'e1', source: 'begin', target: 'Message:Out' }, { id: 'e2', source: 'Message:Out', target: 'Message:Gone' }],
      },
    };
    const created = await new Api(h.url, token).post('/agents', { title: 'SDK-made agent', dsl });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const own = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await own.newPage();
      p.setDefaultTimeout(30_000);
      const errors: string[] = [];
      p.on('pageerror', (err) => errors.push(err.message));
      await p.goto(url('/'));
      await p.evaluate((t) => localStorage.setItem('cairn.console.token', t), token);
      await p.goto(url(`/agents/${created.body.data.id}`));
      await p.getByRole('heading', { level: 1, name: 'SDK-made agent' }).waitFor();
      const canvas = p.getByRole('region', { name: 'Agent canvas' });
      await canvas.locator('.react-flow__node').nth(1).waitFor();
      const names = await canvas.locator('.react-flow__node strong').allTextContents();
      assert.deepEqual(names.sort(), ['SDK begin', 'SDK reply'], `canvas nodes: ${names}`);
      await canvas.locator('.react-flow__edge').first().waitFor({ state: 'attached' });
      assert.equal(await canvas.locator('.react-flow__edge').count(), 1, 'the edge between the two nodes is drawn, the one to a missing node is not');
      assert.deepEqual(errors, [], 'the page throws nothing');
    } finally {
      await own.close();
    }
  });

  it('an invalid agent DSL is refused with the API\'s validation message, and bad JSON is named before sending', async () => {
    await page.getByRole('tab', { name: 'DSL (JSON)' }).click();
    const editor = page.getByLabel('Agent DSL');
    await editor.fill(JSON.stringify({ components: { begin: { obj: { component_name: 'NoSuchComponent', params: {} }, downstream: [], upstream: [] } } }));
    await page.getByRole('button', { name: 'Validate and save' }).click();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /unknown component 'NoSuchComponent'/);
    await editor.fill('{"components": ');
    await page.getByRole('button', { name: 'Validate and save' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor();
  });

  it('a chat and an agent show the model that answers; the built-in one says it is a tiny offline model and links to Model providers', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      try {
        await page.goto(url(`/chats/${ids.chat}`));
        const shown = page.getByTestId('answering-model');
        await shown.waitFor();
        assert.match((await shown.textContent()) ?? '', new RegExp(`Answers with ${CHAT_MODEL}`));
        assert.equal(await shown.getByRole('note').count(), 0, 'no notice for a real model');

        const builtin = (await user.post('/chats', { name: `Built-in ${width}`, dataset_ids: [ids.dataset], llm_id: 'SmolLM2-135M-Instruct@Builtin' })).body.data;
        await page.goto(url(`/chats/${builtin.id}`));
        const note = page.getByTestId('answering-model').getByRole('note');
        await note.waitFor();
        assert.match((await page.getByTestId('answering-model').textContent()) ?? '', /Answers with SmolLM2-135M-Instruct@Builtin/);
        assert.match((await note.textContent()) ?? '', /tiny .* model that runs offline, for trying Cairn out/);
        await note.getByRole('link', { name: 'Model providers' }).click();
        await heading('Model providers').waitFor();

        await page.goto(url(`/agents/${ids.agent}`));
        await page.getByTestId('answering-model').waitFor();
        assert.match((await page.getByTestId('answering-model').textContent()) ?? '', new RegExp(`Runs on ${CHAT_MODEL}`), 'the template\'s Agent runs on the workspace default');
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    }
  });

  it('a dataset that does not exist is named once, with no upload zone or list below', async () => {
    await page.goto(url(`/datasets/${'0'.repeat(32)}`));
    await page.getByRole('alert').filter({ hasText: /not found/i }).first().waitFor();
    assert.equal(await page.getByRole('alert').filter({ hasText: /not found/i }).count(), 1);
    assert.equal(await page.getByTestId('dropzone').count(), 0);
  });

  it('a chunk is disabled, edited and added from the document\'s chunk list', async () => {
    const chunks = async () => (await user.get(`/datasets/${ids.dataset}/documents/${ids.document}/chunks`, { page_size: 100 })).body.data.chunks as { content: string; available: boolean; important_keywords: string[] }[];
    await page.goto(url(`/datasets/${ids.dataset}/documents/${ids.document}`));
    await heading('Chunks of trail.txt').waitFor();
    await page.locator('li.chunk').first().waitFor();
    assert.match((await page.getByText(/\d+ chunks? · \d+ tokens? ·/).textContent()) ?? '', /^1 chunk · \d+ tokens ·/, 'one chunk is counted in the singular');
    // The switch moves at once; the server's answer is what counts, and the list shows it after reloading.
    await page.getByLabel('Enabled').first().uncheck();
    await untilApi('the chunk disabled', chunks, (cs) => cs.length === 1 && !cs[0]!.available);
    await page.locator('li.chunk.disabled').waitFor();

    await page.getByRole('button', { name: 'Edit chunk 1' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit chunk' });
    await edit.getByLabel('Keywords').fill('granite, logbook');
    await submitDialog(edit, 'Save chunk');
    await untilApi('the keywords saved', chunks, (cs) => cs[0]?.important_keywords.join(',') === 'granite,logbook', 30_000);
    await page.getByText('Keywords: granite, logbook').waitFor();

    await page.getByRole('button', { name: 'Add a chunk' }).click();
    const add = page.getByRole('dialog', { name: 'Add a chunk' });
    await add.getByLabel('Content').fill('Basalt columns line the northern ridge.');
    await submitDialog(add, 'Add chunk');
    await untilApi('the chunk added', chunks, (cs) => cs.some((c) => c.content.startsWith('Basalt')), 30_000);
    await page.locator('li.chunk').filter({ hasText: 'Basalt columns line the northern ridge.' }).waitFor();

    await page.getByLabel('Search chunks').fill('basalt');
    await page.waitForFunction(() => {
      const shown = document.querySelectorAll('li.chunk');
      return shown.length === 1 && shown[0]!.textContent!.includes('Basalt columns');
    }, undefined, { timeout: 60_000 });
  });

  it('an API key is shown once when created and leaves the list when revoked', async () => {
    await page.goto(url('/keys'));
    await heading('API keys').waitFor();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const token = (await page.getByTestId('new-api-key').textContent()) ?? '';
    assert.match(token, /^cairn-/);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ hasText: 'laptop' });
    assert.ok(!((await row.textContent()) ?? '').includes(token), 'the list shows only a prefix');
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await row.waitFor({ state: 'detached' });
  });

  it('the workspace owner adds a member by email and removes them again', async () => {
    const memberEmail = `member-${process.pid}-${Date.now()}@example.com`;
    const registered = await new Api(h.url).post('/users', { email: memberEmail, nickname: 'Trail member', password: 'another long password' });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    const tenantId = (await user.get('/users/me')).body.data.tenant_id as string;
    const members = async () => ((await user.get(`/tenants/${tenantId}/users`)).body.data as { email: string }[]).map((m) => m.email);

    await navigateTo('Members');
    await heading('Workspace members').waitFor();
    await page.getByLabel("Member's email").fill(memberEmail);
    await page.getByRole('button', { name: 'Add member' }).click();
    const row = page.getByRole('row').filter({ hasText: memberEmail });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Trail member/);
    assert.ok((await members()).includes(memberEmail), 'the API lists the new member');

    await row.getByRole('button', { name: `Remove ${memberEmail}` }).click();
    await row.waitFor({ state: 'detached' });
    assert.ok(!(await members()).includes(memberEmail), 'the API no longer lists them');
  });

  it('a conversation turn added to a memory is listed with its extraction status and found by search', async () => {
    await page.goto(url('/memories'));
    await page.getByRole('button', { name: 'New memory' }).click();
    const dialog = page.getByRole('dialog', { name: 'New memory' });
    await dialog.getByLabel('Name').fill('Hiker notes');
    await submitDialog(dialog, 'Create memory');
    await heading('Hiker notes').waitFor();
    ids.memory = new URL(page.url()).pathname.split('/')[2];
    await page.getByText('Add a conversation turn').click();
    await page.getByLabel('User said').fill('I always camp near the granite cairn.');
    await page.getByLabel('Agent answered').fill('Noted: you camp near the granite cairn.');
    await page.getByRole('button', { name: 'Add turn' }).click();

    // The extraction workflow runs on the shared worker, which may be busy: wait for its outcome through the API.
    type Listed = { message_id: number; message_type: string; task?: { progress: number; progress_msg: string } };
    const raw = async () => ((await user.get(`/memories/${ids.memory}`)).body.data?.messages?.message_list as Listed[] | undefined)?.find((m) => m.message_type === 'raw');
    const done = await untilApi('the turn\'s extraction outcome', raw, (m) => m?.task !== undefined && (m.task.progress >= 1 || m.task.progress < 0), 180_000);
    assert.equal(done!.task!.progress, 1, `extraction failed: ${done!.task!.progress_msg}`);
    // A raw-only memory extracts nothing: its workflow reports that the raw message is stored, and the page, polling, shows it.
    await page.getByRole('row').filter({ hasText: `#${done!.message_id} raw` }).getByText(/Done: raw message stored/).waitFor();

    await page.getByText('Search this memory').click();
    await page.getByLabel('Search', { exact: true }).fill('granite cairn');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('list', { name: 'Search results' }).getByText(/camp near the granite cairn/).first().waitFor();
  });

  it('the keyboard alone logs in, reaches every navigation link and works a dialog', async () => {
    const kb = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      const focused = () => kb.evaluate(() => document.activeElement?.textContent?.trim() || document.activeElement?.getAttribute('aria-label') || '');
      await kb.goto(url('/login'));
      await kb.getByRole('heading', { name: 'Log in' }).waitFor();
      await kb.keyboard.press('Tab');
      await kb.keyboard.type(email);
      await kb.keyboard.press('Tab');
      await kb.keyboard.type(password);
      await kb.keyboard.press('Enter');
      await kb.getByRole('heading', { name: 'Datasets', level: 1 }).waitFor();
      const reached: string[] = [];
      for (let i = 0; i < 12; i++) {
        await kb.keyboard.press('Tab');
        reached.push(await focused());
      }
      for (const name of ['Skip to content', 'Log out', 'Datasets', 'Chat assistants', 'Agents', 'Memories', 'Model providers', 'API keys', 'Members', 'New dataset'])
        assert.ok(reached.includes(name), `Tab reaches ${name}: ${reached.join(' | ')}`);
      await kb.getByRole('button', { name: 'New dataset' }).focus();
      await kb.keyboard.press('Enter');
      assert.equal(await kb.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent), 'Name', 'the dialog starts at its first field');
      await kb.keyboard.press('Escape');
      await kb.locator('dialog[open]').waitFor({ state: 'detached' });
    } finally {
      await kb.close();
    }
  });

  it('the main pages have no serious or critical accessibility violations and fit the screen at 1280 and 390 px', async () => {
    const pages: [string, string | RegExp][] = [
      ['/datasets', 'Datasets'],
      [`/datasets/${ids.dataset}`, 'Trails'],
      [`/datasets/${ids.dataset}/retrieval`, 'Trails'],
      [`/datasets/${ids.dataset}/settings`, 'Trails'],
      [`/datasets/${ids.dataset}/documents/${ids.document}`, 'Chunks of trail.txt'],
      ['/chats', 'Chat assistants'],
      [`/chats/${ids.chat}`, 'Trail guide'],
      [`/chats/${ids.chat}/settings`, 'Configure Trail guide'],
      ['/agents', 'Agents'],
      [`/agents/${ids.agent}`, 'Dataset chatbot with citations'],
      ['/memories', 'Memories'],
      [`/memories/${ids.memory}`, 'Hiker notes'],
      ['/models', 'Model providers'],
      ['/keys', 'API keys'],
      ['/members', 'Workspace members'],
    ];
    const problems: string[] = [];
    // Pages change inside the app (no reload), so axe is injected once; each page is checked at both widths.
    await page.goto(url('/datasets'));
    for (const [where, title] of pages) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.evaluate((to) => {
        history.pushState(null, '', to);
        dispatchEvent(new PopStateEvent('popstate'));
      }, where);
      await heading(title).waitFor();
      await page.waitForFunction(() => ![...document.querySelectorAll('[role=status]')].some((e) => e.textContent?.includes('Loading…')));
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        const violations = await seriousViolations(page);
        if (violations.length) problems.push(describeViolations(`${where} at ${width}px`, violations));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        if (overflow > 1) problems.push(`${where} at ${width}px: the page scrolls sideways by ${overflow}px`);
        // The navigation is as tall as its links, whatever the page's length: no empty band above the content.
        const slack = await page.evaluate(() => {
          const nav = document.querySelector('nav.sidebar')!;
          return Math.round(nav.getBoundingClientRect().height - nav.querySelector('ul')!.getBoundingClientRect().height);
        });
        if (width === 390 && slack > 2) problems.push(`${where} at 390px: the navigation leaves ${slack}px empty below its links`);
      }
    }
    const loggedOut = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await loggedOut.goto(url('/login'));
    await loggedOut.getByRole('heading', { name: 'Log in' }).waitFor();
    const loginViolations = await seriousViolations(loggedOut);
    if (loginViolations.length) problems.push(describeViolations('/login at 390px', loginViolations));
    await loggedOut.close();
    assert.deepEqual(problems, []);
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page during the whole walk');
  });
});
