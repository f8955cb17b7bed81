import assert from 'node:assert/strict';
import { serviceMetrics, SOURCE_TIMEOUT_MS, type ServiceMetricSources } from '../../../src/observability/service-metrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

function sources(overrides: Partial<ServiceMetricSources> = {}) {
  const reads = { documents: 0, agentRuns: 0, extractions: 0, caches: 0 };
  const s: ServiceMetricSources = {
    documentsByRun: async () => (reads.documents++, { UNSTART: 3, RUNNING: 1, CANCEL: 0, DONE: 7, FAIL: 2 }),
    agentRunsByStatus: async () => (reads.agentRuns++, new Map([['Running', 2], ['Completed', 5], ['Paused', 1]])),
    memoryExtractionsByStatus: async () => (reads.extractions++, new Map([['Running', 0], ['Completed', 20], ['Failed', 1]])),
    caches: async () => (reads.caches++, [{ name: 'sign_bits', entries: 10, bytes: 300 }, { name: 'stems', entries: 4 }]),
    ...overrides,
  };
  return { s, reads };
}

describe('service metrics', () => {
  it('exports documents by run state, agent runs by status (every Temporal status, 0 when none) and cache sizes', async () => {
    const m = parsePrometheusText(await serviceMetrics(sources().s).metrics());
    assert.deepEqual(
      m.get('cairn_documents')!.samples.map((x) => [x.labels.run, x.value]),
      [['UNSTART', 3], ['RUNNING', 1], ['CANCEL', 0], ['DONE', 7], ['FAIL', 2]],
    );
    assert.equal(sampleValue(m, 'cairn_agent_runs', { status: 'Running' }), 2);
    assert.equal(sampleValue(m, 'cairn_agent_runs', { status: 'TimedOut' }), 0);
    assert.equal(sampleValue(m, 'cairn_agent_runs', { status: 'Paused' }), 1, 'a status Temporal adds later still shows');
    assert.equal(sampleValue(m, 'cairn_memory_extractions', { status: 'Completed' }), 20);
    assert.equal(sampleValue(m, 'cairn_memory_extractions', { status: 'Failed' }), 1, 'a failed turn is counted as such');
    assert.equal(sampleValue(m, 'cairn_memory_extractions', { status: 'Running' }), 0);
    assert.equal(sampleValue(m, 'cairn_cache_entries', { cache: 'sign_bits' }), 10);
    assert.equal(sampleValue(m, 'cairn_cache_bytes', { cache: 'sign_bits' }), 300);
    assert.equal(sampleValue(m, 'cairn_cache_bytes', { cache: 'stems' }), undefined, 'no size is made up');
    for (const source of ['metadata_store', 'temporal', 'caches']) assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source }), 1);
  });

  it('reads each source once per scrape, however many gauges it feeds', async () => {
    const { s, reads } = sources();
    const registry = serviceMetrics(s);
    await registry.metrics();
    await registry.metrics();
    assert.deepEqual(reads, { documents: 2, agentRuns: 2, extractions: 2, caches: 2 });
  });

  it('leaves out what a failing source feeds, reports it down, and still answers with the rest', async () => {
    const failures: string[] = [];
    const { s } = sources({ agentRunsByStatus: async () => Promise.reject(new Error('temporal is down')) });
    const m = parsePrometheusText(await serviceMetrics(s, (source) => failures.push(source)).metrics());
    assert.equal(m.get('cairn_agent_runs')!.samples.length, 0);
    assert.equal(sampleValue(m, 'cairn_memory_extractions', { status: 'Completed' }), 20, 'memory extractions come from the metadata store');
    assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source: 'temporal' }), 0);
    assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source: 'metadata_store' }), 1);
    assert.equal(sampleValue(m, 'cairn_documents', { run: 'DONE' }), 7);
    assert.deepEqual(failures, ['temporal']);
  });

  it(`gives up on a source that does not answer within ${SOURCE_TIMEOUT_MS} ms`, async function () {
    this.timeout(SOURCE_TIMEOUT_MS * 3);
    const { s } = sources({ documentsByRun: () => new Promise(() => {}) });
    const started = Date.now();
    const m = parsePrometheusText(await serviceMetrics(s).metrics());
    assert.ok(Date.now() - started < SOURCE_TIMEOUT_MS * 2);
    assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source: 'metadata_store' }), 0);
    assert.equal(m.get('cairn_documents')!.samples.length, 0);
  });

  it("reports the built-in models' state without loading them", async () => {
    const m = parsePrometheusText(await serviceMetrics(sources().s).metrics());
    const states = m.get('cairn_builtin_chat_model_state')!.samples;
    assert.equal(states.length, 4);
    assert.equal(states.reduce((n, x) => n + x.value, 0), 1, 'one current state');
    assert.ok(sampleValue(m, 'cairn_builtin_chat_model_memory_bytes')! >= 0);
    assert.ok(sampleValue(m, 'cairn_builtin_embedding_pending_batches')! >= 0);
  });
});
