import assert from 'node:assert/strict';
import { InvalidModelIdError, formatModelId, parseModelId } from '../../../src/models/model-id.js';

describe('models/model-id', () => {
  it('parses name@factory', () => {
    assert.deepEqual(parseModelId('gpt-4o-mini@OpenAI'), { name: 'gpt-4o-mini', factory: 'OpenAI' });
  });

  it('parses the 3-part name@instance@factory form', () => {
    assert.deepEqual(parseModelId('BAAI/bge-small-en-v1.5@Local@Builtin'), {
      name: 'BAAI/bge-small-en-v1.5',
      instance: 'Local',
      factory: 'Builtin',
    });
  });

  it('keeps / and : in model names and strips surrounding whitespace', () => {
    assert.deepEqual(parseModelId('  qwen/qwen3:8b@Ollama '), { name: 'qwen/qwen3:8b', factory: 'Ollama' });
  });

  it('rejects ids without @, with empty parts or with too many parts', () => {
    assert.throws(() => parseModelId('gpt-4o'), /must follow <model_name>@<provider> format/);
    assert.throws(() => parseModelId('@OpenAI'), /both model_name and provider must be non-empty/);
    assert.throws(() => parseModelId('gpt@'), /both model_name and provider must be non-empty/);
    assert.throws(() => parseModelId('a@ @b'), /non-empty/);
    assert.throws(() => parseModelId('a@b@c@d'), InvalidModelIdError);
    assert.throws(() => parseModelId('a @b'), /whitespace/);
  });

  it('accepts 255 characters and rejects 256', () => {
    const ok = `${'m'.repeat(248)}@OpenAI`;
    assert.equal(ok.length, 255);
    assert.equal(parseModelId(ok).factory, 'OpenAI');
    assert.throws(() => parseModelId(`m${ok}`), /more than 255/);
  });

  it('errors are 400 ModelErrors', () => {
    try {
      parseModelId('nope');
      assert.fail('expected an error');
    } catch (err) {
      assert.ok(err instanceof InvalidModelIdError);
      assert.equal(err.status, 400);
    }
  });

  it('formats back', () => {
    for (const id of ['a@B', 'x/y@inst@Z']) assert.equal(formatModelId(parseModelId(id)), id);
  });
});
