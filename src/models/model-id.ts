import { ModelError } from './types.js';

/** A parsed model identifier: `name@factory` or RAGFlow's composite `name@instance@factory`. */
export interface ModelId {
  name: string;
  /** Provider instance (RAGFlow's middle part), absent in the 2-part form. */
  instance?: string;
  factory: string;
}

export const MODEL_ID_MAX_LENGTH = 255;

/** Raised for a malformed model identifier; status 400. */
export class InvalidModelIdError extends ModelError {
  constructor(message: string) {
    super(message, 'model id', 400);
    this.name = 'InvalidModelIdError';
  }
}

/**
 * Parses `model_name@model_factory` or `model_name@instance@model_factory` (surrounding whitespace is
 * stripped). Model names may contain `/` and `:` (e.g. `BAAI/bge-small-en-v1.5`, `qwen3:8b`) but not `@`.
 */
export function parseModelId(raw: string): ModelId {
  if (typeof raw !== 'string') throw new InvalidModelIdError('model identifier must be a string');
  const id = raw.trim();
  if (id.length > MODEL_ID_MAX_LENGTH) {
    throw new InvalidModelIdError(`model identifier is ${id.length} characters, more than ${MODEL_ID_MAX_LENGTH}`);
  }
  if (!id.includes('@')) {
    throw new InvalidModelIdError('model identifier must follow <model_name>@<provider> format');
  }
  const parts = id.split('@');
  if (parts.length > 3) {
    throw new InvalidModelIdError(
      'model identifier must be <model_name>@<provider> or <model_name>@<instance>@<provider>',
    );
  }
  if (parts.some((p) => p.trim() === '')) {
    throw new InvalidModelIdError('both model_name and provider must be non-empty strings');
  }
  if (parts.some((p) => p !== p.trim())) {
    throw new InvalidModelIdError('model identifier parts must not start or end with whitespace');
  }
  return parts.length === 2
    ? { name: parts[0]!, factory: parts[1]! }
    : { name: parts[0]!, instance: parts[1]!, factory: parts[2]! };
}

export function formatModelId(id: ModelId): string {
  return id.instance ? `${id.name}@${id.instance}@${id.factory}` : `${id.name}@${id.factory}`;
}
