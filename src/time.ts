/** Milliseconds since the epoch, the stored form of every timestamp. */
export function nowMs(): number {
  return Date.now();
}

/** Unix seconds, the API form of timestamps (spec: "Timestamps are Unix seconds unless stated"). */
export function toSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** RFC 7231 date, as RAGFlow's create_date / update_date. */
export function toHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/** "YYYY-MM-DD HH:MM:SS" in UTC, the chunk create_time format. */
export function toDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** `p`, or a rejection naming the limit when it has not settled within `ms` (p itself runs on). */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}
