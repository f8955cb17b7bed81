import { openDatabase, type MetaDb } from '../../src/store/db.js';
import { sharedPostgres } from './postgres.js';
import { sharedMilvus } from './milvus-server.js';
import { sharedS3 } from './shared-s3.js';

/**
 * embedded: SQLite metadata, the embedded index, files on disk. scale-out: PostgreSQL metadata (store-level
 * tests use only this part), a Milvus index and files on S3 (whole Cairns: `scaleOutEnv`).
 */
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

let installations = 0;

/**
 * Environment of one scale-out installation, to give every process of it (API replicas, `cairn worker`s):
 * a fresh PostgreSQL database, a fresh database on the shared milvus-lite server and a fresh bucket on the
 * shared moto S3 server, so installations of one test run never see each other's data.
 */
export async function scaleOutEnv(): Promise<Record<string, string>> {
  const [databaseUrl, milvus, s3] = await Promise.all([freshDatabaseUrl('scale-out'), sharedMilvus(), sharedS3()]);
  const bucket = `cairn-${process.pid}-${++installations}`;
  await s3.createBucket(bucket);
  return { CAIRN_DATABASE_URL: databaseUrl, ...milvus.env(milvus.freshLocation()), ...s3.env(bucket, 'files') };
}

/** Environment for the integration harness's shared Cairn: the whole scale-out profile when CAIRN_TEST_PROFILE=scale-out, else none (embedded). */
export async function profileEnv(): Promise<Record<string, string>> {
  const [only] = testProfiles();
  return testProfiles().length === 1 && only === 'scale-out' ? scaleOutEnv() : {};
}
