/**
 * Memory size accounting and the FIFO forgetting policy (pure: no I/O).
 *
 * A message counts its content's UTF-8 bytes plus 8 bytes per embedding dimension (spec "Memory": "content
 * plus dimensions times 8"). When adding messages would take a memory past its memory_size, FIFO removes
 * messages until they fit: forgotten messages first (earliest forget_at first, equal ones oldest valid_at
 * first), then the others, oldest valid_at first; last ties by message id (older first).
 */

export const BYTES_PER_DIMENSION = 8;

export function messageSize(content: string, dims: number): number {
  return Buffer.byteLength(content, 'utf8') + Math.max(0, dims) * BYTES_PER_DIMENSION;
}

/** What FIFO needs to know of a stored message. */
export interface FifoCandidate {
  message_id: number;
  size: number;
  forget_at: number | null;
  valid_at: number;
}

/** The FIFO removal order: forgotten first by forget_at, then by valid_at, then by message id. */
export function fifoOrder(a: FifoCandidate, b: FifoCandidate): number {
  const af = a.forget_at !== null;
  const bf = b.forget_at !== null;
  if (af !== bf) return af ? -1 : 1;
  if (af && bf && a.forget_at !== b.forget_at) return a.forget_at! - b.forget_at!;
  return a.valid_at - b.valid_at || a.message_id - b.message_id;
}

export class MemoryFullError extends Error {
  constructor(
    message: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(message);
    this.name = 'MemoryFullError';
  }
}

/**
 * The messages to remove, taken from `candidates` (already in FIFO order; consumed lazily, so a database
 * cursor can stop early) until `used - removed + incoming <= limit`. Throws MemoryFullError when the
 * incoming bytes alone exceed the limit, or when removing every candidate would not be enough.
 */
export function planEviction(used: number, incoming: number, limit: number, candidates: Iterable<{ message_id: number; size: number }>): number[] {
  if (incoming > limit) throw new MemoryFullError(`${incoming} bytes is larger than the memory (memory_size ${limit} bytes)`, incoming, limit);
  let excess = used + incoming - limit;
  const evict: number[] = [];
  if (excess <= 0) return evict;
  for (const c of candidates) {
    evict.push(c.message_id);
    excess -= c.size;
    if (excess <= 0) return evict;
  }
  throw new MemoryFullError(`${incoming} bytes do not fit in the memory (memory_size ${limit} bytes) even after removing every message`, incoming, limit);
}
