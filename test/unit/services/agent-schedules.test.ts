import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { AgentService } from '../../../src/services/agents.js';
import { AgentScheduleService, type AgentScheduleControl, type ScheduleIds, type ScheduleState } from '../../../src/services/agent-schedules.js';
import type { ScheduleTiming } from '../../../src/triggers/schedule-spec.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const DSL = {
  components: {
    begin: { obj: { component_name: 'Begin', params: { mode: 'task', prologue: '' } }, downstream: ['Message:Out'], upstream: [] },
    'Message:Out': { obj: { component_name: 'Message', params: { content: ['Tick.'] } }, downstream: [], upstream: ['begin'] },
  },
  globals: {},
  history: [],
  path: [],
  retrieval: [],
};

/** Temporal's side: schedules by id, with their timing and paused state. */
class FakeSchedules implements AgentScheduleControl {
  readonly live = new Map<string, { timing: ScheduleTiming; paused: boolean }>();
  failNextCreate = false;
  async create(ids: ScheduleIds, timing: ScheduleTiming, paused: boolean) {
    if (this.failNextCreate) {
      this.failNextCreate = false;
      throw new Error('temporal is down');
    }
    this.live.set(ids.scheduleId, { timing, paused });
  }
  async describe(ids: ScheduleIds): Promise<ScheduleState | undefined> {
    const s = this.live.get(ids.scheduleId);
    return s && { paused: s.paused, nextRunTimes: [Date.UTC(2030, 0, 1)], runsTaken: 0 };
  }
  async setPaused(ids: ScheduleIds, paused: boolean) {
    this.live.get(ids.scheduleId)!.paused = paused;
  }
  async delete(ids: ScheduleIds) {
    this.live.delete(ids.scheduleId);
  }
}

for (const profile of testProfiles()) describe(`AgentScheduleService [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  let temporal: FakeSchedules;
  let schedules: AgentScheduleService;
  let agentId: string;
  const owner = tenantPrincipal('a'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    const agents = new AgentService(store);
    temporal = new FakeSchedules();
    schedules = new AgentScheduleService(store, agents, temporal);
    agentId = ((await agents.create(owner, { title: 'ticker', dsl: DSL })) as { id: string }).id;
  });
  afterEach(() => db.close());

  it('a created schedule is in Temporal and shows its timing, inputs and state', async () => {
    const s = await schedules.create(owner, agentId, { cron: '0 9 * * MON', timezone: 'Europe/Paris', inputs: { topic: 'tides', n: { value: 2 } } });
    assert.deepEqual(temporal.live.get(s.id)?.timing, { cron: '0 9 * * MON', timezone: 'Europe/Paris' });
    assert.deepEqual(s.inputs, { topic: { value: 'tides' }, n: { value: 2 } });
    assert.equal(s.paused, false);
    assert.deepEqual(s.next_run_times, [Date.UTC(2030, 0, 1) / 1000]);
  });

  it('a schedule Temporal refuses leaves no row behind', async () => {
    temporal.failNextCreate = true;
    await assert.rejects(schedules.create(owner, agentId, { interval: 60 }), /temporal is down/);
    assert.equal((await schedules.list(owner, agentId)).total, 0);
  });

  it('restoreMissing creates in Temporal the schedules it lacks, paused as they were last, and drops those of deleted agents', async () => {
    const running = await schedules.create(owner, agentId, { interval: '1h' });
    const paused = await schedules.create(owner, agentId, { interval: '2h' });
    await schedules.setPaused(owner, agentId, paused.id, true);
    temporal.live.clear(); // a fresh Temporal, e.g. after cairn migrate-to
    assert.equal(await schedules.restoreMissing(), 2);
    assert.deepEqual(temporal.live.get(running.id), { timing: { intervalSeconds: 3600, timezone: 'UTC' }, paused: false });
    assert.equal(temporal.live.get(paused.id)?.paused, true);
    assert.equal(await schedules.restoreMissing(), 0, 'nothing twice');
    await store.agents.delete(agentId);
    temporal.live.clear();
    assert.equal(await schedules.restoreMissing(), 0);
    assert.deepEqual(await store.agentTriggers.allSchedules(), []);
  });

  it("forgetAgent deletes the agent's schedules from Temporal and its rows", async () => {
    await schedules.create(owner, agentId, { interval: 60 });
    await schedules.create(owner, agentId, { interval: 120 });
    await schedules.forgetAgent(agentId);
    assert.equal(temporal.live.size, 0);
    assert.deepEqual(await store.agentTriggers.schedulesOfAgent(agentId), []);
  });
});
