import { BuiltinEmbeddingModel } from './src/models/builtin/embedding-model.js';
const mode = process.argv[2] ?? 'seq';
for (let i = 0; i < 12; i++) {
  const m = new BuiltinEmbeddingModel({ threads: 1 + (i % 2) });
  await m.embed(Array.from({ length: 40 }, (_, k) => `text ${k} `.repeat(30)));
  if (mode === 'overlap') { const m2 = new BuiltinEmbeddingModel({ threads: 1 }); await m2.embed(['x']); await Promise.all([m.close(), m2.close()]); }
  else await m.close();
  console.log('iter', i);
}
console.log('done');
