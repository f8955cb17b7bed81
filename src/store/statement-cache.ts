import type BetterSqlite3 from 'better-sqlite3';

/** Distinct SQL texts kept prepared; queries with a variable number of parameters (`in (?, ?, …)`) make more. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * What Kysely's SQLite dialect needs of a connection, with each SQL text prepared once and reused:
 * Kysely asks for a new statement on every query, and preparing costs as much as running a short one.
 * A statement still being iterated (a streamed select) is busy and cannot run again meanwhile, so a
 * fresh one is prepared for that call. The least recently used text is dropped beyond `max`.
 * `close` closes the connection unless it belongs to someone else (`owned: false`).
 */
export function cachedStatements(sqlite: BetterSqlite3.Database, opts: { owned: boolean; max?: number }) {
  const max = opts.max ?? STATEMENT_CACHE_SIZE;
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(query: string): BetterSqlite3.Statement {
      const known = statements.get(query);
      if (known && !known.busy) {
        // Most recently used last: Map keeps insertion order.
        statements.delete(query);
        statements.set(query, known);
        return known;
      }
      const statement = sqlite.prepare(query);
      if (known) return statement;
      statements.set(query, statement);
      if (statements.size > max) statements.delete(statements.keys().next().value!);
      return statement;
    },
    close(): void {
      statements.clear();
      if (opts.owned) sqlite.close();
    },
  };
}
