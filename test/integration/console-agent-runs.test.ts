import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { harness, type Harness } from './harness.js';
import { assertConsoleBuilt, describeViolations, openConsole, seriousViolations, stopAtFirstFailure } from './browser.js';
import { Api, eventually } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { canvas, createAgent } from './agent-helpers.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';

/**
 * The agent page's run panel in a real browser (Debian's Chromium) against a real Cairn: a session's runs,
 * a run's components with their inputs and outputs, a replay from a component; readable, clickable canvas
 * nodes; the Begin node's webhook URL. Agents and the fake model are set up through the API, the rest
 * through the UI. The steps build on each other, as in console.test.ts.
 */
/** Begin → LLM:Draft → LLM:Polish → Message:Out: the second component (Draft) is where the replay starts. */
const twoLlmCanvas = () =>
  canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: 'Hi.' }, ['LLM:Draft']],
    ['LLM:Draft', 'LLM', { sys_prompt: 'Draft.', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['LLM:Polish']],
    ['LLM:Polish', 'LLM', { sys_prompt: 'Polish.', prompts: [{ role: 'user', content: 'Polish: {LLM:Draft@content}' }] }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{LLM:Polish@content}'] }, []],
  ]);

const webhookCanvas = () =>
  canvas([
    ['begin', 'Begin', { mode: 'Webhook', prologue: '', methods: ['POST'], content_types: 'application/json', execution_mode: 'Streaming', security: { auth_type: 'none', allow_anonymous: true } }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['Received.'] }, []],
  ]);

describe('web console: agent runs, replay and readable canvas nodes', function () {
  this.timeout(180_000);
  let h: Harness;
  let fake: FakeOpenAI;
  let browser: Browser;
  let page: Page;
  let user: Api;
  const ids: { agent?: string; webhookAgent?: string; session?: string; firstRun?: string } = {};
  const pageErrors: string[] = [];

  before(async () => {
    h = await harness();
    assertConsoleBuilt(h.config.rootDir);
    fake = await startFakeOpenAI();
    const reg = await new Api(h.url).post('/users', { email: `console-runs-${process.pid}-${Date.now()}@example.com`, nickname: 'Run tester', password: 'a long runs password' });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    const token = reg.headers.get('authorization')!;
    user = new Api(h.url, token);
    await addModelServer(user, fake.baseUrl);
    ids.agent = await createAgent(user, twoLlmCanvas(), 'Draft and polish');
    ids.webhookAgent = await createAgent(user, webhookCanvas(), 'Webhook receiver');

    ({ browser, page } = await openConsole(h.url, token, pageErrors));
  });

  stopAtFirstFailure('console agent runs', () => page, () => h.config.rootDir, pageErrors);
  after(async () => {
    await browser?.close();
    await fake?.close();
  });

  const url = (to: string) => new URL(to, h.url).toString();
  const canvasRegion = () => page.getByRole('region', { name: 'Agent canvas' });
  const node = (id: string) => canvasRegion().locator(`.react-flow__node[data-id="${id}"] .canvas-node`);

  it('canvas nodes are at least 180 px wide with name and type in a font of 12 px or more at 100% zoom, and do not overlap', async () => {
    await page.goto(url(`/agents/${ids.agent}`));
    await page.getByRole('heading', { level: 1, name: 'Draft and polish' }).waitFor();
    await node('LLM:Polish').waitFor();
    // The fitted view may zoom: a node's size at 100% is its on-screen size divided by the viewport's scale.
    const scale = await canvasRegion()
      .locator('.react-flow__viewport')
      .evaluate((el) => new DOMMatrixReadOnly(getComputedStyle(el).transform).a);
    const boxes: Record<string, { x: number; y: number; width: number; height: number }> = {};
    for (const id of ['begin', 'LLM:Draft', 'LLM:Polish', 'Message:Out']) {
      const box = (await node(id).boundingBox())!;
      boxes[id] = { x: box.x / scale, y: box.y / scale, width: box.width / scale, height: box.height / scale };
      assert.ok(boxes[id]!.width >= 180, `${id} is ${boxes[id]!.width} px wide at 100% zoom`);
      const fonts = await node(id).evaluate((el) => [...el.querySelectorAll('strong, .muted')].map((t) => parseFloat(getComputedStyle(t).fontSize)));
      assert.equal(fonts.length, 2, `${id} shows its name and type`);
      for (const f of fonts) assert.ok(f >= 12, `${id}'s text is ${f} px`);
    }
    assert.equal(await node('LLM:Draft').locator('strong').textContent(), 'node LLM:Draft');
    assert.equal(await node('LLM:Draft').locator('.muted').textContent(), 'LLM');
    const order = ['begin', 'LLM:Draft', 'LLM:Polish', 'Message:Out'];
    for (let i = 1; i < order.length; i++) {
      const [a, b] = [boxes[order[i - 1]!]!, boxes[order[i]!]!];
      assert.ok(a.x + a.width < b.x, `${order[i - 1]} ends before ${order[i]} starts`);
    }
  });

  it('a turn run from the panel is listed with its status, start, duration and trigger; opening it shows each component with its inputs and outputs', async () => {
    await page.getByLabel('Message to the agent').fill('hello');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const runs = page.getByTestId('runs-list');
    await runs.locator('li').first().waitFor();
    const session = await eventually(async () => {
      const list = (await user.get(`/agents/${ids.agent}/sessions`)).body.data as { id: string }[];
      return list[0]?.id;
    });
    ids.session = session;
    const recorded = await eventually(async () => {
      const res = await user.get(`/agents/${ids.agent}/sessions/${session}/runs`);
      const [run] = res.body.data;
      return run?.status === 'finished' ? run : undefined;
    });
    ids.firstRun = recorded.id;
    const row = runs.locator(`button[data-run-id="${recorded.id}"]`);
    await row.waitFor();
    // The list was loaded when the stream ended; the row says the run finished.
    await eventually(async () => /finished/.test((await row.textContent()) ?? ''), 10_000);
    assert.match((await row.textContent()) ?? '', /finished .* · \d+\.\d\d s · completion/);

    await row.click();
    const steps = page.getByTestId('run-steps');
    const order = await steps.locator('li').evaluateAll((els) => els.map((e) => e.getAttribute('data-component-id')));
    assert.deepEqual(order, ['begin', 'LLM:Draft', 'LLM:Polish', 'Message:Out'], 'the components in the order they ran');
    for (const text of await steps.locator('li > button').allTextContents()) assert.match(text, /\(\w+\) · finished · \d+\.\d\d s$/, text);
  });

  it("selecting a component in the run shows its inputs and outputs as JSON and highlights its node; clicking a node on the canvas selects its step", async () => {
    const steps = page.getByTestId('run-steps');
    await steps.locator('li[data-component-id="LLM:Polish"] > button').click();
    const detail = page.getByTestId('run-step-detail');
    await detail.waitFor();
    const outputs = detail.getByRole('region', { name: /^Outputs of/ });
    assert.match((await outputs.textContent()) ?? '', /Echo: Polish: Echo: hello/);
    const inputs = detail.getByRole('region', { name: /^Inputs of/ });
    assert.match((await inputs.textContent()) ?? '', /Polish: Echo: hello/, 'the resolved prompt the LLM received');
    assert.match((await node('LLM:Polish').getAttribute('class')) ?? '', /selected/);

    await node('LLM:Draft').click();
    await steps.locator('li.selected[data-component-id="LLM:Draft"]').waitFor();
    assert.match((await node('LLM:Draft').getAttribute('class')) ?? '', /selected/);
    assert.doesNotMatch((await node('LLM:Polish').getAttribute('class')) ?? '', /selected/);
    assert.match((await page.getByTestId('run-step-detail').getByRole('region', { name: /^Outputs of/ }).textContent()) ?? '', /Echo: hello/);
  });

  it('"Replay from here" on the second component streams a new run into the panel, and the runs list shows it as a replay of the first', async () => {
    const modelCalls = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const before = modelCalls();
    await page.getByTestId('run-step-detail').getByRole('button', { name: 'Replay from here' }).click();
    const events = page.getByTestId('run-events');
    await events.getByText(/Run finished/).waitFor();
    const lines = await events.locator('li').allTextContents();
    assert.ok(lines.some((l) => /Draft \(LLM\) started/.test(l)), `events: ${lines}`);
    assert.match((await page.locator('.message.assistant').textContent()) ?? '', /Echo: Polish: Echo: hello/);
    assert.equal(modelCalls() - before, 2, 'Draft and Polish ran again');
    const replay = page.getByTestId('runs-list').locator('button', { hasText: `replay of ${ids.firstRun} from LLM:Draft` });
    await replay.waitFor();
    const runs = (await user.get(`/agents/${ids.agent}/sessions/${ids.session}/runs`)).body.data;
    assert.equal(runs.length, 2);
    assert.deepEqual([runs[0].trigger, runs[0].replay_of, runs[0].from_component], ['replay', ids.firstRun, 'LLM:Draft']);
    await eventually(async () => /finished/.test((await replay.textContent()) ?? ''), 10_000);
  });

  it("a Webhook-mode agent's Begin node shows the webhook's full URL with a copy button", async () => {
    await page.goto(url(`/agents/${ids.webhookAgent}`));
    await page.getByRole('heading', { level: 1, name: 'Webhook receiver' }).waitFor();
    const hook = node('begin').getByTestId('webhook-url');
    await hook.waitFor();
    assert.equal(await hook.locator('code').textContent(), `${new URL(h.url).origin}/api/v1/agents/${ids.webhookAgent}/webhook`);
    await hook.getByRole('button', { name: 'Copy URL' }).waitFor();
    // The conversational agent's Begin shows none.
    await page.goto(url(`/agents/${ids.agent}`));
    await node('begin').waitFor();
    assert.equal(await node('begin').getByTestId('webhook-url').count(), 0);
    assert.deepEqual(pageErrors, []);
  });

  it('an output over 4 KB shows its start and size, and "Load full value" fetches the whole of it; the open run has no serious accessibility violation', async () => {
    const long = `${'granite '.repeat(700)}end of the draft`;
    fake.behaviour = { ...fake.behaviour, answer: () => ({ answer: long }) };
    // A new page load starts a new session.
    await page.goto(url(`/agents/${ids.agent}`));
    await node('LLM:Draft').waitFor();
    await page.getByLabel('Message to the agent').fill('a long one');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByTestId('run-events').getByText(/Run finished/).waitFor();
    // Clicking a node with no run open opens the newest run at that component's step.
    await node('LLM:Draft').click();
    const detail = page.getByTestId('run-step-detail');
    await detail.waitFor();
    const outputs = detail.getByRole('region', { name: /^Outputs of/ });
    assert.match((await outputs.textContent()) ?? '', /abridged: \d/);
    assert.doesNotMatch((await outputs.textContent()) ?? '', /end of the draft/, 'the listing shows only the start');
    await outputs.getByRole('button', { name: 'Load full value' }).click();
    await outputs.getByText(/end of the draft/).waitFor();
    assert.equal(await outputs.getByRole('button', { name: 'Load full value' }).count(), 0);
    const violations = await seriousViolations(page);
    assert.deepEqual(violations, [], describeViolations('the agent page with a run step open', violations));
    assert.deepEqual(pageErrors, []);
  });
});
