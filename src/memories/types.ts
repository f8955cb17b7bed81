/** Memory constants and the memory-type bitmask (RAGFlow: raw=1, semantic=2, episodic=4, procedural=8). */

export const MEMORY_TYPES = ['raw', 'semantic', 'episodic', 'procedural'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** The types a chat model extracts from a conversation (everything but raw). */
export const EXTRACTED_TYPES = ['semantic', 'episodic', 'procedural'] as const;
export type ExtractedType = (typeof EXTRACTED_TYPES)[number];

const BIT: Record<MemoryType, number> = { raw: 1, semantic: 2, episodic: 4, procedural: 8 };

export function isMemoryType(value: unknown): value is MemoryType {
  return typeof value === 'string' && (MEMORY_TYPES as readonly string[]).includes(value);
}

/** The bitmask of a list of types (unknown names must be rejected before). */
export function typeMask(types: Iterable<MemoryType>): number {
  let mask = 0;
  for (const t of types) mask |= BIT[t];
  return mask;
}

/** The types of a bitmask, in the canonical order raw, semantic, episodic, procedural. */
export function typesOf(mask: number): MemoryType[] {
  return MEMORY_TYPES.filter((t) => (mask & BIT[t]) !== 0);
}

export function extractedTypesOf(mask: number): ExtractedType[] {
  return EXTRACTED_TYPES.filter((t) => (mask & BIT[t]) !== 0);
}

/** Spec "Memory": default and largest memory_size, in bytes. */
export const DEFAULT_MEMORY_SIZE = 5 * 1024 * 1024;
export const MAX_MEMORY_SIZE = 10 * 1024 * 1024;
export const MAX_MEMORY_NAME = 128;
export const MAX_AVATAR = 65535;
export const FORGETTING_POLICIES = ['FIFO'] as const;
export const STORAGE_TYPES = ['table'] as const;
export const DEFAULT_TEMPERATURE = 0.5;

/** At most this many items of each type are kept from one extraction (the prompt asks for the same). */
export const MAX_ITEMS_PER_TYPE = 5;

/** What the extraction workflow of one raw message works on (its id is derived from both). */
export interface MemoryExtractionInput {
  memoryId: string;
  messageId: number;
}

/** Starts extraction workflows (implemented on Temporal in src/engine/memory-tasks.ts). */
export interface MemoryTasks {
  /** Hands one raw message to its memory's extraction workflow (started when none runs); a message handed twice is extracted once. */
  startExtraction(input: MemoryExtractionInput): Promise<void>;
}
