import type { MemoryType } from '../../memories/types.js';
import type { MemoryMessage } from './memory-index.js';
import { fromFloat32Blob } from '../vectors/vector-codec.js';

/** A memory message as both memory indexes store it in SQL (the embedded index, the scale-out ledger). */
export interface MessageRow {
  message_id: number;
  memory_id: string;
  tenant_id: string;
  message_type: string;
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  valid_at: number;
  invalid_at: number | null;
  replaced_by: number | null;
  forget_at: number | null;
  /** 1 enabled, 0 disabled. */
  status: number;
  size: number;
  create_time: number;
  /** float32; null when the message has no vector. */
  vector: Buffer | null;
}

export function toMessage(r: MessageRow): MemoryMessage {
  return {
    message_id: r.message_id,
    memory_id: r.memory_id,
    tenant_id: r.tenant_id,
    message_type: r.message_type as MemoryType,
    source_id: r.source_id,
    user_id: r.user_id,
    agent_id: r.agent_id,
    session_id: r.session_id,
    content: r.content,
    vector: r.vector ? fromFloat32Blob(r.vector) : [],
    valid_at: r.valid_at,
    invalid_at: r.invalid_at,
    replaced_by: r.replaced_by ?? null,
    forget_at: r.forget_at,
    status: r.status === 1,
    size: r.size,
    create_time: r.create_time,
  };
}
