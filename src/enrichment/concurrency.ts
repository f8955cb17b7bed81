import { configEnv, type SettingsEnv } from '../config-schema.js';

/** Default of CAIRN_ENRICH_CONCURRENCY: small, so one document's enrichment does not flood a provider. */
export const DEFAULT_ENRICH_CONCURRENCY = 4;

/** Model calls one enrichment step (per document or per batch of a dataset job) makes at once. */
export function enrichConcurrency(env: SettingsEnv = configEnv()): number {
  const value = env.CAIRN_ENRICH_CONCURRENCY?.trim();
  return value ? Number(value) : DEFAULT_ENRICH_CONCURRENCY;
}
