import assert from 'node:assert/strict';
import { extractionCall, extractionSchema, gleaningCall } from '../../../src/enrichment/graph/prompts.js';
import { parseExtraction } from '../../../src/enrichment/graph/answers.js';

describe('graph extraction on the built-in model: held to a JSON Schema', () => {
  it('the schema asks for entities of the chosen types (and relations unless the method is ner), bounded', () => {
    const schema = extractionSchema(['person', 'place'], true) as any;
    assert.deepEqual(schema.required, ['entities', 'relations']);
    assert.deepEqual(schema.properties.entities.items.properties.type, { enum: ['person', 'place'] });
    assert.ok(schema.properties.entities.maxItems > 0 && schema.properties.relations.maxItems > 0);
    assert.deepEqual((extractionSchema(['person'], false) as any).required, ['entities']);
  });

  it('the extraction and gleaning calls carry it, and an answer that fills it parses', () => {
    const call = extractionCall('Ada met Charles in London.', ['person', 'place'], 'general');
    assert.ok(call.builtinSchema);
    assert.equal(gleaningCall(call, '{}').builtinSchema, call.builtinSchema);
    const answer = JSON.stringify({
      entities: [{ name: 'Ada', type: 'person', description: 'Met Charles.' }, { name: 'Charles', type: 'person', description: 'Met Ada.' }],
      relations: [{ source: 'Ada', target: 'Charles', description: 'They met in London.', weight: 7 }],
    });
    const parsed = parseExtraction(answer);
    assert.deepEqual(parsed.entities.map((e) => e.name), ['Ada', 'Charles']);
    assert.equal(parsed.relations.length, 1);
  });
});
