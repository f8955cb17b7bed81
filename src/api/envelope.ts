import type { Response } from 'express';
import { clip } from '../text/summary.js';

/**
 * The longest error message an answer carries. Messages name the first few offenders themselves
 * (validation.ts, partial.ts); this cut is the last resort for one that still grew with its request.
 */
export const MAX_ERROR_MESSAGE = 2048;

/** Writes the success envelope {"code":0,"data":...} (extra top-level keys allowed, e.g. total). */
export function sendOk(res: Response, data: unknown, extra: Record<string, unknown> = {}): void {
  res.status(200).type('application/json').send(safeJson({ code: 0, data, ...extra }));
}

export function sendError(res: Response, status: number, code: number, message: string, data?: unknown): void {
  const body: Record<string, unknown> = { code, message: clip(message, MAX_ERROR_MESSAGE) };
  if (data !== undefined) body.data = data;
  res.status(status).type('application/json').send(safeJson(body));
}

/** JSON that never carries NaN or Infinity: non-finite numbers become 0 (spec: NaN scores must serialize). */
export function safeJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? 0 : v));
}
