import type { MetaDb } from '../../store/db.js';
import { countRows } from './tables.js';

/**
 * The settings row that marks a target database as the migration of one source installation. Written
 * before the first row is copied, so a rerun after a failure recognises its own partial copy.
 */
export const MARKER_KEY = 'migrated-from';

interface Marker {
  source_data_dir: string;
  started_at: string;
  finished_at: string | null;
}

/**
 * `fresh`: the database holds no row (migrations applied at most). `resume`: it holds an unfinished
 * migration of the same source, which a rerun copies over. Anything else is refused:
 * - another installation: merging two is not a migration (admin users, API keys and names would clash
 *   or mix), and overwriting one is not something to do by a flag;
 * - a finished migration: a Cairn may have served from it since, and copying the source over it again
 *   would undo what was written there.
 */
export async function inspectTarget(db: MetaDb, sourceDataDir: string): Promise<'fresh' | 'resume'> {
  const counts = await countRows(db);
  const filled = Object.entries(counts).filter(([, n]) => n > 0);
  if (filled.length === 0) return 'fresh';
  const marker = await readMarker(db);
  const advice = 'migrate into a new, empty database (CREATE DATABASE …)';
  if (marker?.source_data_dir === sourceDataDir) {
    if (!marker.finished_at) return 'resume';
    throw new Error(`the target database already holds a finished migration of ${sourceDataDir} (finished at ${marker.finished_at}); a Cairn may have used it since, so it is not copied over; to migrate again, ${advice}`);
  }
  const what = filled.map(([table, n]) => `${table} ${n}`).join(', ');
  const origin = marker ? `a migration of ${marker.source_data_dir}` : 'another Cairn installation';
  throw new Error(`the target database is not empty: it holds ${origin} (${what}); ${advice}`);
}

export async function writeMarker(db: MetaDb, sourceDataDir: string, finished: boolean): Promise<void> {
  const before = await readMarker(db);
  const value: Marker = {
    source_data_dir: sourceDataDir,
    started_at: before?.started_at ?? new Date().toISOString(),
    finished_at: finished ? new Date().toISOString() : null,
  };
  await db.kysely
    .insertInto('settings')
    .values({ key: MARKER_KEY, value: JSON.stringify(value), create_time: Date.now() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value) }))
    .execute();
}

async function readMarker(db: MetaDb): Promise<Marker | undefined> {
  const row = await db.kysely.selectFrom('settings').select('value').where('key', '=', MARKER_KEY).executeTakeFirst();
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as Marker;
  } catch {
    return undefined;
  }
}
