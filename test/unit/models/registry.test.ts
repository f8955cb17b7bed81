import assert from 'node:assert/strict';
import { BuiltinEmbeddingModel } from '../../../src/models/builtin/embedding-model.js';
import { BUILTIN_EMBEDDING_MODEL_ID } from '../../../src/models/builtin/spec.js';
import { OllamaChatModel, OllamaEmbeddingModel } from '../../../src/models/ollama.js';
import { OpenAIChatModel, OpenAIEmbeddingModel } from '../../../src/models/openai-compat.js';
import { createModel, listFactories, openAIBaseUrl, xinferenceRoot } from '../../../src/models/registry.js';
import { HttpRerankModel } from '../../../src/models/rerank.js';
import { ModelError } from '../../../src/models/types.js';

describe('models/registry', () => {
  const base = 'http://127.0.0.1:1';

  it('returns the client for each factory and type', () => {
    assert.ok(createModel({ factory: 'OpenAI-API-Compatible', model_name: 'm', model_type: 'chat', base_url: base }) instanceof OpenAIChatModel);
    assert.ok(createModel({ factory: 'openai', model_name: 'm', model_type: 'embedding' }) instanceof OpenAIEmbeddingModel);
    assert.ok(createModel({ factory: 'VLLM', model_name: 'm', model_type: 'rerank', base_url: base }) instanceof HttpRerankModel);
    assert.ok(createModel({ factory: 'Ollama', model_name: 'm', model_type: 'chat', base_url: base }) instanceof OllamaChatModel);
    assert.ok(createModel({ factory: 'Ollama', model_name: 'm', model_type: 'embedding', base_url: base }) instanceof OllamaEmbeddingModel);
    assert.ok(createModel({ factory: 'Xinference', model_name: 'm', model_type: 'rerank', base_url: base }) instanceof HttpRerankModel);
    const builtin = createModel({ factory: 'Builtin', model_name: 'BAAI/bge-small-en-v1.5', model_type: 'embedding' });
    assert.ok(builtin instanceof BuiltinEmbeddingModel);
    assert.equal(builtin.id, BUILTIN_EMBEDDING_MODEL_ID);
    assert.equal(createModel({ factory: 'Builtin', model_name: 'bge-small-en-v1.5', model_type: 'embedding' }), builtin, 'one shared instance');
  });

  it('ids default to model_name@factory', () => {
    assert.equal(createModel({ factory: 'ollama', model_name: 'llama3.2', model_type: 'chat', base_url: base }).id, 'llama3.2@Ollama');
    assert.equal(createModel({ factory: 'Ollama', model_name: 'x', model_type: 'chat', base_url: base, id: 'x@Local@Ollama' }).id, 'x@Local@Ollama');
  });

  it('rejects unknown providers, unsupported types, missing base URLs and unknown built-in models', () => {
    assert.throws(() => createModel({ factory: 'unknown', model_name: 'embedding-3', model_type: 'embedding' }), {
      message: 'Provider unknown not found for model embedding-3.',
    });
    assert.throws(() => createModel({ factory: 'Ollama', model_name: 'm', model_type: 'rerank', base_url: base }), /Ollama: rerank models are not supported/);
    assert.throws(() => createModel({ factory: 'OpenAI-API-Compatible', model_name: 'm', model_type: 'chat' }), /base_url is required/);
    assert.throws(() => createModel({ factory: 'Builtin', model_name: 'BAAI/bge-large', model_type: 'embedding' }), (err: unknown) => {
      assert.ok(err instanceof ModelError);
      assert.match(err.message, /no built-in model 'BAAI\/bge-large'/);
      return true;
    });
  });

  it('normalises base URLs', () => {
    assert.equal(openAIBaseUrl('http://h:8000'), 'http://h:8000/v1');
    assert.equal(openAIBaseUrl('http://h:8000/v1/'), 'http://h:8000/v1');
    assert.equal(openAIBaseUrl('https://h/api/v4'), 'https://h/api/v4');
    assert.equal(openAIBaseUrl('http://h:8000/v1/rerank'), 'http://h:8000/v1');
    assert.equal(xinferenceRoot('http://h:9997/v1/rerank'), 'http://h:9997');
    assert.equal(xinferenceRoot('http://h:9997/v1'), 'http://h:9997');
    assert.equal(xinferenceRoot('http://h:9997/'), 'http://h:9997');
  });

  it('lists the factories', () => {
    const names = listFactories().map((f) => f.name);
    for (const n of ['OpenAI', 'OpenAI-API-Compatible', 'Ollama', 'Xinference', 'Builtin']) assert.ok(names.includes(n));
  });
});
