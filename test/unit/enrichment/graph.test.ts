import assert from 'node:assert/strict';
import { parseCommunityReport, parseExtraction, parseResolution } from '../../../src/enrichment/graph/answers.js';
import { entityId, mergeExtractions, MAX_FRAGMENTS, nameKey, UNKNOWN_TYPE } from '../../../src/enrichment/graph/merge.js';
import { applyMerges, boundedEditDistance, resolutionCandidates } from '../../../src/enrichment/graph/resolution.js';
import { communities, pagerank } from '../../../src/enrichment/graph/algorithms.js';
import { batchSegments, chunksPerBatch, MAX_BATCHES } from '../../../src/enrichment/graph/batches.js';
import { extractionUnits } from '../../../src/enrichment/graph/units.js';
import { graphSettings, callTimeoutMs, DEFAULT_ENTITY_TYPES } from '../../../src/enrichment/graph/settings.js';
import { extractionCall, gleaningCall } from '../../../src/enrichment/graph/prompts.js';
import { formatGraphContext, matchEntities, rankRelations } from '../../../src/enrichment/graph/context.js';
import type { Graph, GraphEntity, UnitExtraction } from '../../../src/enrichment/graph/types.js';

const entity = (name: string, type: string, description = '') => ({ name, type, description });
const relation = (source: string, target: string, description = '', weight = 1) => ({ source, target, description, weight });
const unit = (seq: number, chunkIds: string[], entities: UnitExtraction['entities'], relations: UnitExtraction['relations'] = []): UnitExtraction => ({ seq, chunkIds, entities, relations });

function node(id: string, mentions = 1, type = 'person', name = id): GraphEntity {
  return { id, name, type, description: `${name} description`, sourceIds: [`c-${id}`], mentions, pagerank: 0, community: -1 };
}

describe('knowledge graph: reading extraction answers', () => {
  it('reads the JSON object, fenced or with chatter around it, and normalises names, types and weights', () => {
    const answer = 'Here is the graph:\n```json\n{"entities": [{"name": " \\"Ada Lovelace\\" ", "type": "PERSON", "description": "A mathematician."}, {"name": "Analytical Engine", "type": "Category", "description": "A machine."}],'
      + ' "relations": [{"source": "Ada Lovelace", "target": "Analytical Engine", "description": "wrote notes on", "weight": "8"}, {"source": "Ada Lovelace", "target": "Analytical Engine", "weight": 99}]}\n```';
    const parsed = parseExtraction(answer);
    assert.equal(parsed.malformed, false);
    assert.equal(parsed.skipped, 0);
    assert.deepEqual(parsed.entities, [entity('Ada Lovelace', 'person', 'A mathematician.'), entity('Analytical Engine', 'category', 'A machine.')]);
    assert.deepEqual(parsed.relations.map((r) => r.weight), [8, 10], 'a weight is a number from the answer, capped at 10');
  });

  it('skips and counts items without a name, relations missing an end or pointing at themselves', () => {
    const parsed = parseExtraction(JSON.stringify({
      entities: [{ name: 'Paris', type: 'geo' }, { type: 'geo' }, 'London', { name: '' }],
      relations: [{ source: 'Paris', target: 'France' }, { source: 'Paris' }, { source: 'Paris', target: 'paris' }, 7],
    }));
    assert.deepEqual(parsed.entities.map((e) => e.name), ['Paris']);
    assert.deepEqual(parsed.relations.map((r) => [r.source, r.target, r.weight]), [['Paris', 'France', 1]]);
    assert.equal(parsed.skipped, 6);
    assert.equal(parsed.malformed, false);
  });

  it('salvages the complete items of an answer cut off in the middle, and says it was malformed', () => {
    const answer = '{"entities": [{"name": "Bergen", "type": "geo", "description": "A city {by the sea}."}, {"name": "Norway", "type": "geo"}], "relations": [{"source": "Bergen", "target": "Norway", "weight": 6}, {"source": "Bergen", "targ';
    const parsed = parseExtraction(answer);
    assert.equal(parsed.malformed, true);
    assert.deepEqual(parsed.entities.map((e) => e.name), ['Bergen', 'Norway']);
    assert.equal(parsed.entities[0]!.description, 'A city {by the sea}.', 'braces inside strings do not cut an item');
    assert.deepEqual(parsed.relations.map((r) => [r.source, r.target, r.weight]), [['Bergen', 'Norway', 6]]);
  });

  it("reads GraphRAG's tuple format when the model answers that way", () => {
    const answer = '("entity"<|>ACME<|>organization<|>A company)##("entity"<|>BOB<|>person<|>Its founder)##("relationship"<|>BOB<|>ACME<|>founded<|>9)<|COMPLETE|>';
    const parsed = parseExtraction(answer);
    assert.equal(parsed.malformed, true);
    assert.deepEqual(parsed.entities.map((e) => [e.name, e.type]), [['ACME', 'organization'], ['BOB', 'person']]);
    assert.deepEqual(parsed.relations.map((r) => [r.source, r.target, r.weight]), [['BOB', 'ACME', 9]]);
  });

  it('an answer with nothing usable gives nothing and is counted as malformed; an empty answer is not', () => {
    assert.deepEqual(parseExtraction('I cannot help with that.'), { entities: [], relations: [], skipped: 0, malformed: true });
    assert.deepEqual(parseExtraction('<think>hmm</think>'), { entities: [], relations: [], skipped: 0, malformed: false });
  });

  it('the ner method keeps entities only', () => {
    const parsed = parseExtraction(JSON.stringify({ entities: [{ name: 'A', type: 'x' }], relations: [{ source: 'A', target: 'B' }] }), false);
    assert.equal(parsed.relations.length, 0);
    assert.equal(parsed.skipped, 0);
  });

  it('reads resolution answers line by line; unanswered or out-of-range pairs are not confirmed', () => {
    assert.deepEqual([...parseResolution('1: yes\n2. No\n**3**: maybe\n4) YES\n9: yes', 4)].sort(), [0, 3]);
    assert.deepEqual([...parseResolution('garbage', 3)], []);
  });

  it('reads a community report and refuses one without a title or summary', () => {
    const report = parseCommunityReport('```json\n{"title": "Bees", "summary": "About bees.", "findings": [{"summary": "Honey", "explanation": "They make it."}, "Wax"], "rating": 12}\n```');
    assert.deepEqual(report, { title: 'Bees', summary: 'About bees.', findings: [{ summary: 'Honey', explanation: 'They make it.' }, { summary: 'Wax', explanation: '' }], rating: 10 });
    assert.equal(parseCommunityReport('{"title": "No summary"}'), undefined);
    assert.equal(parseCommunityReport('not json'), undefined);
  });
});

describe('knowledge graph: merging extractions', () => {
  it('the same normalised name and type is one node: descriptions merged, chunks and mentions counted', () => {
    const graph = mergeExtractions([
      unit(1, ['c2'], [entity('ACME  Corp', 'organization', 'Makes anvils.')]),
      unit(0, ['c1'], [entity('Acme Corp', 'organization', 'A company.'), entity('Acme Corp', 'person', 'A nickname.')]),
      unit(2, ['c3'], [entity('acme corp', 'organization', 'a company.')]),
    ]);
    assert.equal(graph.entities.length, 2, 'another type is another node');
    const org = graph.entities.find((e) => e.type === 'organization')!;
    assert.equal(org.name, 'Acme Corp', 'the first spelling in dataset order is kept');
    assert.equal(org.id, entityId(nameKey('ACME Corp'), 'organization'));
    assert.equal(org.description, 'A company.\nMakes anvils.', 'distinct descriptions, in dataset order');
    assert.deepEqual(org.sourceIds, ['c1', 'c2', 'c3']);
    assert.equal(org.mentions, 3);
  });

  it('the same pair is one edge whatever its direction, weights summed; unknown ends become nodes', () => {
    const graph = mergeExtractions([
      unit(0, ['c1'], [entity('Alice', 'person'), entity('Bob', 'person')], [relation('Alice', 'Bob', 'friends', 3)]),
      unit(1, ['c2'], [entity('Bob', 'person')], [relation('bob', 'ALICE', 'colleagues', 2), relation('Bob', 'Carol', 'knows', 1)]),
    ]);
    assert.equal(graph.relations.length, 2);
    const ab = graph.relations[0]!;
    assert.equal(ab.weight, 5);
    assert.equal(ab.description, 'friends\ncolleagues');
    assert.deepEqual([ab.source, ab.target], [entityId('alice', 'person'), entityId('bob', 'person')], 'kept in the direction first seen');
    const carol = graph.entities.find((e) => e.name === 'Carol')!;
    assert.equal(carol.type, UNKNOWN_TYPE);
  });

  it("a relation's end takes the type its own answer gave the name, else the name's most mentioned type", () => {
    const graph = mergeExtractions([
      unit(0, ['c1'], [entity('Jordan', 'geo'), entity('Jordan', 'geo')]),
      unit(1, ['c2'], [entity('Jordan', 'person'), entity('Nike', 'organization')], [relation('Jordan', 'Nike', 'endorses')]),
      unit(2, ['c3'], [entity('Amman', 'geo')], [relation('Amman', 'Jordan', 'capital of')]),
    ]);
    const ends = graph.relations.map((r) => [r.source, r.target]);
    assert.deepEqual(ends, [
      [entityId('jordan', 'person'), entityId('nike', 'organization')],
      [entityId('amman', 'geo'), entityId('jordan', 'geo')],
    ]);
  });

  it(`keeps at most ${MAX_FRAGMENTS} description fragments`, () => {
    const units = Array.from({ length: MAX_FRAGMENTS + 3 }, (_, i) => unit(i, [`c${i}`], [entity('X', 't', `fact ${i}`)]));
    assert.equal(mergeExtractions(units).entities[0]!.description.split('\n').length, MAX_FRAGMENTS);
  });

  it('gives the same graph for the same units in any order', () => {
    const units = [
      unit(0, ['a'], [entity('A', 't', 'one')], [relation('A', 'B', 'x', 2)]),
      unit(1, ['b'], [entity('B', 't', 'two')], [relation('B', 'A', 'y', 1)]),
      unit(2, ['c'], [entity('A', 't', 'three')]),
    ];
    assert.deepEqual(mergeExtractions([...units].reverse()), mergeExtractions(units));
  });
});

describe('knowledge graph: entity resolution', () => {
  const graphOf = (entities: GraphEntity[], relations: Graph['relations'] = []): Graph => ({ entities, relations });

  it('pairs the same letters and digits, and plural stems, by rule; close spellings for the model; only within a type', () => {
    const g = graphOf([
      node('a', 1, 'organization', 'Open AI'),
      node('b', 1, 'organization', 'OpenAI'),
      node('c', 1, 'event', 'Bank Holidays'),
      node('d', 1, 'event', 'bank holiday'),
      node('e', 1, 'organization', 'Acme Corporation'),
      node('f', 1, 'organization', 'Acme Corporatoin'),
      node('g', 1, 'person', 'Acme Corporation'),
      node('h', 1, 'organization', 'University'),
      node('i', 1, 'organization', 'Universal'),
      node('j', 1, 'organization', 'Bob'),
      node('k', 1, 'organization', 'Rob'),
    ]);
    const { rule, fuzzy } = resolutionCandidates(g);
    assert.deepEqual(rule, [['a', 'b'], ['c', 'd']]);
    assert.deepEqual(fuzzy, [['e', 'f']], 'transposed letters are 2 edits apart; short names and other types are never paired');
  });

  it('the edit distance stops early but is exact within the bound', () => {
    assert.equal(boundedEditDistance('kitten', 'sitting', 3), 3);
    assert.equal(boundedEditDistance('kitten', 'sitting', 1), 2);
    assert.equal(boundedEditDistance('abc', 'abc', 0), 0);
  });

  it('merging keeps the most mentioned node, combines the rest and re-points edges (weights summed, self-loops dropped)', () => {
    const g = graphOf([node('a', 1), node('b', 3), node('c', 1), node('d', 1)], [
      { source: 'a', target: 'c', description: 'x', weight: 2, sourceIds: ['s1'] },
      { source: 'b', target: 'c', description: 'y', weight: 1, sourceIds: ['s2'] },
      { source: 'a', target: 'b', description: 'z', weight: 4, sourceIds: ['s3'] },
      { source: 'c', target: 'd', description: 'w', weight: 1, sourceIds: ['s4'] },
    ]);
    const merged = applyMerges(g, [['a', 'b']]);
    assert.deepEqual(merged.entities.map((e) => e.id), ['b', 'c', 'd']);
    const b = merged.entities[0]!;
    assert.equal(b.mentions, 4);
    assert.equal(b.description, 'a description\nb description');
    assert.deepEqual(b.sourceIds, ['c-a', 'c-b']);
    assert.deepEqual(merged.relations.map((r) => [r.source, r.target, r.weight, r.description]), [['b', 'c', 3, 'x\ny'], ['c', 'd', 1, 'w']]);
  });

  it('merges transitively and gives the same result whatever the order of the pairs', () => {
    const g = graphOf([node('a'), node('b'), node('c')]);
    assert.deepEqual(applyMerges(g, [['a', 'b'], ['b', 'c']]), applyMerges(g, [['b', 'c'], ['a', 'b']]));
    assert.equal(applyMerges(g, [['a', 'b'], ['b', 'c']]).entities.length, 1);
  });
});

describe('knowledge graph: ranking and communities', () => {
  /** Two triangles joined by one light edge, plus a node alone. */
  function twoTriangles(): Graph {
    const ids = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'alone'];
    const edge = (source: string, target: string, weight = 5) => ({ source, target, description: '', weight, sourceIds: [] });
    return {
      entities: ids.map((id) => node(id)),
      relations: [edge('a1', 'a2'), edge('a2', 'a3'), edge('a1', 'a3'), edge('b1', 'b2'), edge('b2', 'b3'), edge('b1', 'b3'), edge('a3', 'b1', 1)],
    };
  }

  it('PageRank sums to 1 and ranks the hub of a star first', () => {
    const star: Graph = { entities: ['hub', 'x', 'y', 'z'].map((id) => node(id)), relations: ['x', 'y', 'z'].map((t) => ({ source: 'hub', target: t, description: '', weight: 1, sourceIds: [] })) };
    const ranks = pagerank(star);
    assert.ok(Math.abs([...ranks.values()].reduce((s, r) => s + r, 0) - 1) < 1e-9);
    assert.ok(ranks.get('hub')! > ranks.get('x')!);
    assert.equal(ranks.get('x'), ranks.get('z'));
  });

  it('Louvain finds the two triangles; a node alone has no community', () => {
    const found = communities(twoTriangles(), 42);
    assert.equal(found.get('a1'), found.get('a2'));
    assert.equal(found.get('a1'), found.get('a3'));
    assert.equal(found.get('b1'), found.get('b3'));
    assert.notEqual(found.get('a1'), found.get('b1'));
    assert.equal(found.get('alone'), -1);
  });

  it('the same graph and seed always give the same communities', () => {
    // A graph with many near-ties, where the node order decides.
    const n = 60;
    const entities = Array.from({ length: n }, (_, i) => node(`n${i}`));
    const relations = Array.from({ length: n * 2 }, (_, i) => ({ source: `n${i % n}`, target: `n${(i * 7 + 3) % n}`, description: '', weight: 1 + (i % 3), sourceIds: [] })).filter((r) => r.source !== r.target);
    const g = { entities, relations };
    const first = [...communities(g, 7).entries()];
    for (let i = 0; i < 5; i++) assert.deepEqual([...communities(g, 7).entries()], first);
    assert.ok(new Set(first.map(([, c]) => c)).size > 1);
  });
});

describe('knowledge graph: batches, units and settings', () => {
  it('cuts the dataset into batches across documents, in order, each chunk once', () => {
    const docs = [{ id: 'd1', chunks: 5 }, { id: 'd2', chunks: 1 }, { id: 'd3', chunks: 7 }];
    const all = [0, 1, 2, 3].flatMap((b) => batchSegments(docs, 4, b));
    assert.deepEqual(batchSegments(docs, 4, 1), [{ documentId: 'd1', offset: 4, count: 1 }, { documentId: 'd2', offset: 0, count: 1 }, { documentId: 'd3', offset: 0, count: 2 }]);
    assert.equal(all.reduce((n, s) => n + s.count, 0), 13);
    assert.deepEqual(batchSegments(docs, 4, 4), []);
    assert.equal(chunksPerBatch(10), 32);
    assert.ok(Math.ceil(1_000_000 / chunksPerBatch(1_000_000)) <= MAX_BATCHES);
  });

  it("groups consecutive chunks of one document up to the token budget and cuts a chunk longer than it", () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
    const units = extractionUnits([
      { id: 'a', documentId: 'd1', content: words(30) },
      { id: 'b', documentId: 'd1', content: words(30) },
      { id: 'c', documentId: 'd1', content: words(30) },
      { id: 'd', documentId: 'd2', content: words(5) },
      { id: 'e', documentId: 'd2', content: '   ' },
      { id: 'f', documentId: 'd2', content: words(500) },
    ], 150);
    assert.deepEqual(units.map((u) => u.chunkIds), [['a', 'b'], ['c'], ['d'], ['f']]);
    assert.ok(units[3]!.text.length < words(500).length);
  });

  it('reads graphrag settings with defaults, the knowledge_graph entity types, and derives call timeouts', () => {
    const defaults = graphSettings({});
    assert.equal(defaults.enabled, false);
    assert.deepEqual(defaults.entityTypes, DEFAULT_ENTITY_TYPES);
    assert.equal(defaults.method, 'light');
    assert.equal(callTimeoutMs(defaults, 1), 600_000, 'build_subgraph_min_timeout_seconds');
    assert.equal(callTimeoutMs(defaults, 3), 900_000, 'build_subgraph_timeout_per_chunk_seconds × chunks');
    const kg = graphSettings({ entity_types: ['Person', 'person', 'Time'], llm_id: 'm@p', graphrag: { use_graphrag: true, method: 'general', resolution: true, community: true, retry_attempts: 5 } });
    assert.deepEqual(kg.entityTypes, ['person', 'time']);
    assert.deepEqual([kg.enabled, kg.method, kg.resolution, kg.community, kg.retryAttempts, kg.llmId], [true, 'general', true, true, 5, 'm@p']);
    assert.deepEqual(graphSettings({ entity_types: ['time'], graphrag: { entity_types: ['geo'] } }).entityTypes, ['geo']);
  });

  it('the prompt names the entity types; ner asks for no relations; the second pass continues the first', () => {
    const call = extractionCall('Some text.', ['person', 'geo'], 'light');
    assert.match(call.messages[0]!.content, /Entity types: person, geo\./);
    assert.match(call.messages[0]!.content, /"relations"/);
    assert.doesNotMatch(extractionCall('Some text.', ['person'], 'ner').messages[0]!.content, /"relations"/);
    const glean = gleaningCall(call, '{"entities": []}');
    assert.deepEqual(glean.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
    assert.notEqual(glean.kind, call.kind);
  });
});

describe('knowledge graph: the use_kg chunk', () => {
  const indexed = (e: GraphEntity, name: string[], description: string[]) => ({ entity: e, ord: 0, buildId: 'b', datasetId: 'd', name: new Set(name), description: new Set(description) });

  it('matches entities by the words of their names (and descriptions) in the question, weighed by pagerank', () => {
    const ada = { ...node('ada', 1, 'person', 'Ada Lovelace'), pagerank: 0.1 };
    const engine = { ...node('engine', 1, 'category', 'Analytical Engine'), pagerank: 0.4 };
    const other = { ...node('other', 1, 'geo', 'London'), pagerank: 0.5 };
    const matches = matchEntities('What did Lovelace write about the engine?', [
      indexed(ada, ['ada', 'lovelac'], ['mathematician']),
      indexed(engine, ['analyt', 'engin'], ['machin']),
      indexed(other, ['london'], ['citi']),
    ]);
    assert.deepEqual(matches.map((m) => m.entity.id), ['engine', 'ada']);
    assert.equal(matches[1]!.similarity, 0.35);
  });

  it('ranks relations by both ends and weight, and writes RAGFlow-style CSV sections within the token budget', () => {
    const rels = [
      { source: 'ada', target: 'engine', description: 'wrote notes, "famous"', weight: 9, sourceIds: [] },
      { source: 'x', target: 'y', description: 'unrelated', weight: 10, sourceIds: [] },
      { source: 'engine', target: 'z', description: 'built by', weight: 1, sourceIds: [] },
    ];
    const ranked = rankRelations(rels, new Map([['ada', 0.7], ['engine', 0.35]]));
    assert.deepEqual(ranked.map((r) => r.relation.target), ['engine', 'z']);
    const text = formatGraphContext(
      [{ entity: node('ada', 1, 'person', 'Ada Lovelace'), similarity: 0.7, score: 0.52, buildId: 'b', datasetId: 'd' }],
      ranked.map((r) => ({ ...r, sourceName: r.relation.source, targetName: r.relation.target })),
      [{ id: 0, entityIds: ['ada'], weight: 1, title: 'Computing', summary: 'Early computing.', findings: [{ summary: 'Notes', explanation: 'first program' }], rating: 8 }],
    );
    assert.equal(text, [
      '',
      '---- Entities ----',
      ',Entity,Score,Description',
      '0,Ada Lovelace,0.52,Ada Lovelace description',
      '',
      '---- Relations ----',
      ',From Entity,To Entity,Score,Description',
      '0,ada,engine,1.00,"wrote notes, ""famous"""',
      '1,engine,z,0.19,built by',
      '',
      '---- Community Report ----',
      '# 1. Computing',
      '## Content',
      'Early computing.',
      '## Evidences',
      '- Notes: first program',
      '',
    ].join('\n'));
    const tight = formatGraphContext([{ entity: node('ada', 1, 'person', 'Ada Lovelace'), similarity: 0.7, score: 0.52, buildId: 'b', datasetId: 'd' }], [], [], 3);
    assert.equal(tight, '', 'nothing fits in 3 tokens');
  });
});
