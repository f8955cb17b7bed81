/** Chunk methods, RAGFlow's parser ids. `naive` is the "General" method and the default. */
export const CHUNK_METHODS = [
  'naive',
  'qa',
  'table',
  'one',
  'manual',
  'paper',
  'book',
  'laws',
  'presentation',
  'picture',
  'email',
  'tag',
] as const;

export type ChunkMethod = (typeof CHUNK_METHODS)[number];

export function isChunkMethod(value: unknown): value is ChunkMethod {
  return typeof value === 'string' && (CHUNK_METHODS as readonly string[]).includes(value);
}
