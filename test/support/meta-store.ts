import { openDatabase, type MetaDb } from '../../src/store/db.js';
import { sharedPostgres } from './postgres.js';

/** embedded: SQLite metadata; scale-out: PostgreSQL metadata. */
export type TestProfile = 'embedded' | 'scale-out';

const PROFILES: TestProfile[] = ['embedded', 'scale-out'];

/** The profiles store-level tests run on: the one CAIRN_TEST_PROFILE names, or both. */
export function testProfiles(): TestProfile[] {
  const chosen = process.env.CAIRN_TEST_PROFILE;
  if (!chosen) return PROFILES;
  if (!PROFILES.includes(chosen as TestProfile)) throw new Error(`CAIRN_TEST_PROFILE must be one of ${PROFILES.join(', ')}, not '${chosen}'`);
  return [chosen as TestProfile];
}

/** A URL of a fresh, empty metadata database of the profile. */
export async function freshDatabaseUrl(profile: TestProfile): Promise<string> {
  return profile === 'scale-out' ? (await sharedPostgres()).createDatabase() : ':memory:';
}

/** A fresh metadata database of the profile, migrated; close it after. */
export async function openTestMetaDb(profile: TestProfile): Promise<MetaDb> {
  return openDatabase(await freshDatabaseUrl(profile));
}

/** Environment for a whole Cairn (integration harness): PostgreSQL metadata when CAIRN_TEST_PROFILE=scale-out. */
export async function profileEnv(): Promise<Record<string, string>> {
  const [only] = testProfiles();
  return testProfiles().length === 1 && only === 'scale-out' ? { CAIRN_DATABASE_URL: await freshDatabaseUrl('scale-out') } : {};
}
