import assert from 'node:assert/strict';
import { enrichChunks, enrichmentLabel, keywordSettings, keywordsCall, questionsCall, type EnrichmentProgress } from '../../../src/enrichment/keywords.js';
import type { EnrichmentRepo } from '../../../src/store/enrichment.js';
import type { ChatMessage, ChatModel } from '../../../src/models/types.js';
import { countTokens } from '../../../src/text/tokens.js';

function memoryCache(): EnrichmentRepo {
  const values = new Map<string, string>();
  return {
    cached: async (keys: string[]) => new Map(keys.filter((k) => values.has(k)).map((k) => [k, values.get(k)!])),
    remember: async (entries: { key: string; value: string }[]) => {
      for (const e of entries) if (!values.has(e.key)) values.set(e.key, e.value);
    },
  } as unknown as EnrichmentRepo;
}

/** Answers keywords as "<first word>, topic" and questions as "What is <first word>?"; records what it was asked. */
function scriptedModel(answer?: (system: string, passage: string) => string) {
  const asked: { system: string; passage: string }[] = [];
  const model = {
    id: 'scripted@Test',
    async complete(messages: ChatMessage[]) {
      const system = messages[0]!.content;
      const passage = messages.at(-1)!.content;
      asked.push({ system, passage });
      if (answer) return answer(system, passage);
      const word = passage.split(/\s+/)[0];
      return /keywords/.test(system) ? `${word}, topic` : `What is ${word}?`;
    },
    stream() {
      throw new Error('not used');
    },
  } as unknown as ChatModel;
  return { model, asked };
}

describe('chunk keywords and questions', () => {
  it('reads auto_keywords / auto_questions from parser_config, capped at 32 / 10, anything else meaning none', () => {
    assert.deepEqual(keywordSettings({ auto_keywords: 5, auto_questions: 2 }), { keywords: 5, questions: 2 });
    assert.deepEqual(keywordSettings({ auto_keywords: 99, auto_questions: 40 }), { keywords: 32, questions: 10 });
    assert.deepEqual(keywordSettings({ auto_keywords: '3', auto_questions: -1 }), { keywords: 0, questions: 0 });
    assert.deepEqual(keywordSettings({}), { keywords: 0, questions: 0 });
    assert.equal(enrichmentLabel({ keywords: 3, questions: 0 }), 'keywords');
    assert.equal(enrichmentLabel({ keywords: 3, questions: 1 }), 'keywords and questions');
  });

  it('asks for the number wanted, and cuts a very long chunk to fit the model context', () => {
    assert.match(keywordsCall('granite', 7).messages[0]!.content, /7 most important keywords/);
    assert.match(questionsCall('granite', 3).messages[0]!.content, /3 questions/);
    const long = 'granite '.repeat(10_000);
    assert.ok(countTokens(keywordsCall(long, 3).messages[1]!.content) <= 3000);
  });

  it('adds the generated keywords and questions to each chunk, after those the chunk method set', async () => {
    const { model } = scriptedModel();
    const { drafts } = await enrichChunks(
      [{ content: 'granite ridge' }, { content: 'snow field', important_keywords: ['winter', 'Snow'], questions: ['When does it snow?'] }],
      { keywords: 2, questions: 1 },
      { cache: memoryCache(), tenantId: 't1', model, concurrency: 2 },
    );
    assert.deepEqual(drafts.map((d) => [d.important_keywords, d.questions]), [
      [['granite', 'topic'], ['What is granite?']],
      [['winter', 'Snow', 'topic'], ['When does it snow?', 'What is snow?']],
    ]);
  });

  it('asks only for what is turned on, and nothing for a chunk without text', async () => {
    const { model, asked } = scriptedModel();
    const { drafts } = await enrichChunks([{ content: 'granite' }, { content: '  ' }], { keywords: 0, questions: 2 }, { cache: memoryCache(), tenantId: 't1', model, concurrency: 1 });
    assert.equal(asked.length, 1);
    assert.match(asked[0]!.system, /questions/);
    assert.deepEqual(drafts[0]!.important_keywords, []);
    assert.deepEqual(drafts[1]!.questions, []);
  });

  it('an unusable answer gives the chunk nothing instead of failing', async () => {
    const { model } = scriptedModel(() => 'I am sorry but I cannot help with extracting keywords from this particular passage today');
    const { drafts } = await enrichChunks([{ content: 'granite' }], { keywords: 3, questions: 0 }, { cache: memoryCache(), tenantId: 't1', model, concurrency: 1 });
    assert.deepEqual(drafts[0]!.important_keywords, []);
  });

  it('reports progress after each batch, counting model calls and cached answers', async () => {
    const cache = memoryCache();
    const chunks = Array.from({ length: 5 }, (_, i) => ({ content: `stone${i} marker` }));
    const reports: EnrichmentProgress[] = [];
    const first = await enrichChunks(chunks, { keywords: 2, questions: 1 }, { cache, tenantId: 't1', model: scriptedModel().model, concurrency: 3, batchSize: 2, onProgress: (p) => void reports.push(p) });
    assert.deepEqual(reports.map((p) => [p.done, p.total]), [[2, 5], [4, 5], [5, 5]]);
    assert.equal(first.progress.model_calls, 10);
    assert.equal(first.progress.cached_calls, 0);
    assert.ok(first.progress.tokens > 0);

    const again = scriptedModel();
    const second = await enrichChunks(chunks, { keywords: 2, questions: 1 }, { cache, tenantId: 't1', model: again.model, concurrency: 3 });
    assert.equal(again.asked.length, 0, 'a re-run is answered from the cache');
    assert.equal(second.progress.cached_calls, 10);
    assert.deepEqual(second.drafts, first.drafts);
  });

  it('a model failure rejects with the model error', async () => {
    const { model } = scriptedModel(() => {
      throw new Error('provider down');
    });
    await assert.rejects(enrichChunks([{ content: 'granite' }], { keywords: 3, questions: 0 }, { cache: memoryCache(), tenantId: 't1', model, concurrency: 1 }), /provider down/);
  });
});
