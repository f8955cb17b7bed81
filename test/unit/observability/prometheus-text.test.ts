import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

/** The test reader must refuse what Prometheus refuses, or the /metrics tests prove nothing. */
describe('the Prometheus text reader used by the tests', () => {
  it("reads prom-client's output: types, escaped label values, histogram buckets", async () => {
    const registry = new Registry();
    new Counter({ name: 'c_total', help: 'A counter\\with "help"', labelNames: ['path'], registers: [registry] }).inc({ path: 'a "quoted"\\path\nnext' }, 2);
    new Histogram({ name: 'h_seconds', help: 'h', buckets: [0.1, 1], registers: [registry] }).observe(0.5);
    const m = parsePrometheusText(await registry.metrics());
    assert.equal(m.get('c_total')!.type, 'counter');
    assert.equal(sampleValue(m, 'c_total', { path: 'a "quoted"\\path\nnext' }), 2);
    assert.equal(sampleValue(m, 'h_seconds_bucket', { le: '0.1' }), 0);
    assert.equal(sampleValue(m, 'h_seconds_bucket', { le: '+Inf' }), 1);
    assert.equal(sampleValue(m, 'h_seconds_count'), 1);
  });

  const refuses = (text: string, why: RegExp) => assert.throws(() => parsePrometheusText(text), why);

  it('refuses samples without a TYPE, bad names, labels and values, and repeated series', () => {
    refuses('x 1\n', /without a # TYPE/);
    refuses('# TYPE 1x gauge\n', /invalid metric name/);
    refuses('# TYPE x gauge\nx{a="b} 1\n', /unterminated|expected/);
    refuses('# TYPE x gauge\nx{a="\\q"} 1\n', /invalid escape/);
    refuses('# TYPE x gauge\nx{a="1",a="2"} 1\n', /repeated label/);
    refuses('# TYPE x gauge\nx one\n', /invalid value/);
    refuses('# TYPE x gauge\nx{a="1"} 1\nx{a="1"} 2\n', /repeated series/);
    refuses('# TYPE x gauge\nx 1\n# TYPE x counter\n', /TYPE after samples/);
  });

  it('refuses histograms whose buckets are not cumulative or disagree with _count', () => {
    const histogram = (b1: number, inf: number, count: number) =>
      `# TYPE h histogram\nh_bucket{le="1"} ${b1}\nh_bucket{le="+Inf"} ${inf}\nh_sum 1\nh_count ${count}\n`;
    assert.doesNotThrow(() => parsePrometheusText(histogram(1, 2, 2)));
    refuses(histogram(3, 2, 2), /not cumulative/);
    refuses(histogram(1, 2, 3), /differs from _count/);
    refuses('# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /no \+Inf bucket/);
  });
});
