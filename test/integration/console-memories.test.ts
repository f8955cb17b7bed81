import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { harness, type Harness } from './harness.js';
import { assertConsoleBuilt, describeViolations, openConsole, seriousViolations, stopAtFirstFailure } from './browser.js';
import { Api, eventually } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeOpenAI } from '../fakes/index.js';

/**
 * Correcting and retracting a memory's extracted items in a real browser (Debian's Chromium) against a
 * real Cairn: the memory and its turn are set up through the API (the fake model extracts two facts),
 * the rest through the memory page. The steps build on each other, as in console.test.ts.
 */
const DOG = 'The user has a dog named Rex.';
const HOME = 'The user lives in Oslo.';
const CORRECTED = 'The user has a dog named Max.';

/** Extraction answers the two facts for the marked turn; anything else gets no items. */
const answers: AnswerScript = (messages) => {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  if (!system.includes('## OUTPUT FORMAT')) return { answer: 'ok' };
  const semantic = lastUserMessage(messages).includes('pets-and-home') ? [{ content: DOG }, { content: HOME }] : [];
  return { answer: JSON.stringify({ semantic, episodic: [], procedural: [] }) };
};

interface Item {
  message_id: number;
  content?: string;
  invalid_at: number | null;
  replaced_by: number | null;
}

describe('web console: correcting and retracting memory items', function () {
  this.timeout(180_000);
  let h: Harness;
  let fake: FakeOpenAI;
  let browser: Browser;
  let page: Page;
  let user: Api;
  let memoryId: string;
  const ids: { dog?: number; home?: number; corrected?: number } = {};
  const pageErrors: string[] = [];

  /** The turn's extracted items as the API lists them (current only unless `history`), with their texts. */
  async function items(history = false): Promise<Item[]> {
    const list = (await user.get(`/memories/${memoryId}`, { page_size: 100, ...(history ? { include_invalid: true } : {}) })).body.data.messages.message_list as { message_type: string; extract: Item[] }[];
    const extracted = list.filter((m) => m.message_type === 'raw').flatMap((m) => m.extract);
    for (const item of extracted) item.content = (await user.get(`/messages/${memoryId}:${item.message_id}/content`)).body.data.content;
    return extracted;
  }

  before(async () => {
    h = await harness();
    assertConsoleBuilt(h.config.rootDir);
    fake = await startFakeOpenAI({ answer: answers, dims: 64 });
    const reg = await new Api(h.url).post('/users', { email: `console-memory-${process.pid}-${Date.now()}@example.com`, nickname: 'Memory tester', password: 'a long memory password' });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    const token = reg.headers.get('authorization')!;
    user = new Api(h.url, token);
    await addModelServer(user, fake.baseUrl, { embedding: 'fake-embed' });
    const mem = await user.post('/memories', { name: 'Pet notes', memory_type: ['raw', 'semantic'], embd_id: 'fake-embed@fake@OpenAI-API-Compatible', llm_id: 'fake-chat@fake@OpenAI-API-Compatible' });
    assert.equal(mem.status, 200, JSON.stringify(mem.body));
    memoryId = mem.body.data.id;
    const turn = await user.post('/messages', { memory_id: [memoryId], agent_id: 'console', session_id: 'console', user_input: 'pets-and-home: my dog Rex and I live in Oslo.', agent_response: 'Noted.' });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    // Extraction runs on the worker shared with other suites: wait for its items through the API.
    const extracted = await eventually(async () => {
      const found = await items();
      return found.length === 2 ? found : undefined;
    }, 180_000, 250);
    ids.dog = extracted.find((i) => i.content === DOG)!.message_id;
    ids.home = extracted.find((i) => i.content === HOME)!.message_id;

    ({ browser, page } = await openConsole(h.url, token, pageErrors));
  });

  stopAtFirstFailure('console memories', () => page, () => h.config.rootDir, pageErrors);
  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  const itemRow = (id: number) => page.getByRole('listitem', { name: `Item ${id}`, exact: true });
  const history = () => page.getByRole('checkbox', { name: 'Show history' });

  it("a message's extracted items open with their texts and Correct / Retract actions", async () => {
    await page.goto(new URL(`/memories/${memoryId}`, h.url).toString());
    await page.getByRole('heading', { level: 1, name: 'Pet notes' }).waitFor();
    await page.getByText('2 items: semantic').click();
    await itemRow(ids.dog!).getByText(DOG).waitFor();
    await itemRow(ids.home!).getByText(HOME).waitFor();
    for (const id of [ids.dog!, ids.home!]) {
      assert.ok(await itemRow(id).getByRole('button', { name: `Correct item ${id}` }).isEnabled());
      assert.ok(await itemRow(id).getByRole('button', { name: `Retract item ${id}` }).isEnabled());
    }
    const violations = await seriousViolations(page);
    assert.deepEqual(violations, [], describeViolations('memory page with items open', violations));
  });

  it('Correct saves the edited text as a new item: it is listed, the old one only with history, marked replaced by it', async () => {
    await itemRow(ids.dog!).getByRole('button', { name: `Correct item ${ids.dog}` }).click();
    const dialog = page.getByRole('dialog', { name: `Correct item #${ids.dog}` });
    const text = dialog.getByLabel('Corrected text');
    assert.equal(await text.inputValue(), DOG, 'the dialog starts from the current text');
    await text.fill(CORRECTED);
    await dialog.getByRole('button', { name: 'Save correction' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const now = await eventually(async () => {
      const found = await items();
      return found.some((i) => i.content === CORRECTED) ? found : undefined;
    });
    ids.corrected = now.find((i) => i.content === CORRECTED)!.message_id;
    await itemRow(ids.corrected).getByText(CORRECTED).waitFor();
    await itemRow(ids.dog!).waitFor({ state: 'detached' });
    assert.equal(await page.getByText(DOG).count(), 0, 'the old text is not shown by default');

    await history().check();
    const old = itemRow(ids.dog!);
    await old.getByText(`replaced by #${ids.corrected}`).waitFor();
    await old.getByText(DOG).waitFor();
    assert.equal(await old.getByRole('button', { name: `Correct item ${ids.dog}` }).count(), 0, 'a replaced item offers no correction');
    const stored = (await items(true)).find((i) => i.message_id === ids.dog)!;
    assert.equal(stored.replaced_by, ids.corrected);
    assert.ok(stored.invalid_at !== null);
  });

  it('Retract, once confirmed, takes the item off the default list; history shows it invalid, nothing replacing it', async () => {
    await history().uncheck();
    await itemRow(ids.dog!).waitFor({ state: 'detached' });
    await itemRow(ids.home!).getByRole('button', { name: `Retract item ${ids.home}` }).click();
    await itemRow(ids.home!).waitFor({ state: 'detached' });
    assert.equal(await page.getByText(HOME).count(), 0);
    assert.deepEqual((await items()).map((i) => i.content), [CORRECTED], 'the API lists only the corrected item as current');
    const stored = (await items(true)).find((i) => i.message_id === ids.home)!;
    assert.equal(stored.replaced_by, null);
    assert.ok(stored.invalid_at !== null);

    await history().check();
    await itemRow(ids.home!).getByText(/^invalid since /).waitFor();
    await itemRow(ids.home!).getByText(HOME).waitFor();
    await history().uncheck();
  });

  it("a correction the server refuses shows its reason in the dialog (the item was corrected elsewhere meanwhile)", async () => {
    await itemRow(ids.corrected!).getByRole('button', { name: `Correct item ${ids.corrected}` }).click();
    const dialog = page.getByRole('dialog', { name: `Correct item #${ids.corrected}` });
    const elsewhere = await user.post(`/messages/${memoryId}:${ids.corrected}/correct`, { content: 'The user has a dog named Bella.' });
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    await dialog.getByLabel('Corrected text').fill('The user has a dog named Fido.');
    await dialog.getByRole('button', { name: 'Save correction' }).click();
    await dialog.getByRole('alert').getByText(/is no longer current .*replaced by message/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.ok(!(await items()).some((i) => i.content?.includes('Fido')), 'nothing was stored');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });
});
