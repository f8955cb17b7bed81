import { ApiError } from '../errors.js';
import { ModelError } from '../models/types.js';

/** What a failure in the middle of a streamed answer tells the caller (unexpected errors are logged, not shown). */
export function describeFailure(err: unknown): { status: number; message: string } {
  if (err instanceof ApiError) return { status: err.status, message: err.message };
  if (err instanceof ModelError) return { status: err.status, message: err.message };
  return { status: 500, message: 'Internal Server Error: the failure was logged' };
}
