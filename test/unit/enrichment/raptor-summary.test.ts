import assert from 'node:assert/strict';
import { summaryCall, summaryText, SUMMARY_CALL_KIND } from '../../../src/enrichment/raptor/summary.js';
import { DEFAULT_RAPTOR_PROMPT, raptorEnabled, raptorSettings, RAPTOR_DEFAULTS } from '../../../src/enrichment/raptor/settings.js';
import { raptorMark } from '../../../src/enrichment/raptor/mark.js';
import { countTokens } from '../../../src/text/tokens.js';

const settings = { prompt: 'Summarise:\n{cluster_content}\nEnd.', maxToken: 512 };

describe('RAPTOR summary calls and settings', () => {
  it("puts the cluster's texts, one per line, where the prompt has {cluster_content}, with max_tokens = max_token", () => {
    const call = summaryCall(['first text', 'second text'], settings, 8192);
    assert.equal(call.kind, SUMMARY_CALL_KIND);
    assert.deepEqual(call.messages.map((m) => m.role), ['system', 'user']);
    assert.equal(call.messages[1]!.content, 'Summarise:\nfirst text\nsecond text\nEnd.');
    assert.deepEqual(call.options, { temperature: 0.3, max_tokens: 512 });
  });

  it('takes texts literally (no $-patterns) and appends them to a prompt without the placeholder', () => {
    assert.equal(summaryCall(["costs $& and $1 and $'"], settings, 8192).messages[1]!.content, "Summarise:\ncosts $& and $1 and $'\nEnd.");
    assert.equal(summaryCall(['a', 'b'], { prompt: 'Sum up.', maxToken: 512 }, 8192).messages[1]!.content, 'Sum up.\n\na\nb');
  });

  it("cuts each text to an equal share of the context left after the prompt and the answer", () => {
    const long = 'word '.repeat(3000);
    const content = summaryCall([long, long], settings, 2048).messages[1]!.content;
    const tokens = countTokens(content);
    assert.ok(tokens < 2048 - 512, `${tokens} tokens`);
    assert.ok(tokens > 1000, `${tokens} tokens: the context is used`);
    const short = summaryCall(['short one', 'short two'], settings, 2048).messages[1]!.content;
    assert.ok(short.includes('short one\nshort two'), 'short texts are kept whole');
  });

  it('the same cluster gives the same call (a cache hit on a re-run)', () => {
    assert.deepEqual(summaryCall(['x', 'y'], settings, 4096), summaryCall(['x', 'y'], settings, 4096));
  });

  it("keeps the answer after a model's reasoning, trimmed; a blank answer is no summary", () => {
    assert.equal(summaryText('<think>hmm</think>\n Title\nSummary  '), 'Title\nSummary');
    assert.equal(summaryText('  plain  '), 'plain');
    assert.equal(summaryText(' \n '), '');
  });

  it("reads parser_config.raptor with RAGFlow's defaults", () => {
    assert.deepEqual(raptorSettings({}), RAPTOR_DEFAULTS);
    assert.equal(RAPTOR_DEFAULTS.prompt, DEFAULT_RAPTOR_PROMPT);
    assert.deepEqual(
      raptorSettings({ raptor: { use_raptor: true, prompt: 'P {cluster_content}', max_token: 1024, clustering_threshold: 0.5, clustering_ratio: 0.25, max_cluster: 8, random_seed: 7, scope: 'dataset', auto_disable_for_structured_data: true } }),
      { prompt: 'P {cluster_content}', maxToken: 1024, threshold: 0.5, ratio: 0.25, maxCluster: 8, seed: 7, scope: 'dataset', skipStructured: true },
    );
    assert.equal(raptorEnabled({ raptor: { use_raptor: true } }), true);
    assert.equal(raptorEnabled({ raptor: { use_raptor: false } }), false);
    assert.equal(raptorEnabled({}), false);
  });

  it('marks summaries in the wire format (raptor_kwd, raptor_layer) and nothing else', () => {
    assert.deepEqual(raptorMark({ raptor_layer: 2 }), { raptor_kwd: 'raptor', raptor_layer: 2 });
    assert.deepEqual(raptorMark({}), {});
  });
});
