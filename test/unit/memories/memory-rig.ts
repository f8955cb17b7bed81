import type { MetaDb } from '../../../src/store/db.js';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { openTestMetaDb, type TestProfile } from '../../support/meta-store.js';
import { MetaStore } from '../../../src/store/index.js';
import { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import { ProviderService } from '../../../src/services/providers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { ModelClients } from '../../../src/services/model-clients.js';
import { MemoryService } from '../../../src/services/memories.js';
import { MemoryExtractor } from '../../../src/services/memory-extractor.js';
import { MemoryBatchExtractor } from '../../../src/services/memory-batches.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { MemoryExtractionInput } from '../../../src/memories/types.js';

/** The fake server's models, as the tenant registered them. */
export const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
export const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';

/**
 * The memory service and extractor on a test database and an in-memory index, with the tenant's models on
 * the fake OpenAI server at `baseUrl` and `startExtraction` instead of Temporal.
 */
export async function memoryRig(profile: TestProfile, tenant: string, baseUrl: string, startExtraction: (input: MemoryExtractionInput) => Promise<void>) {
  const db: MetaDb = await openTestMetaDb(profile);
  const store = new MetaStore(db);
  const providers = new ProviderService(store, outboundGuard({ allowPrivate: true }));
  await providers.createInstance(tenantPrincipal(tenant), 'OpenAI-API-Compatible', {
    instance_name: 'fake',
    base_url: baseUrl,
    model_info: [{ model_name: 'fake-chat', model_type: 'chat' }, { model_name: 'fake-embed', model_type: 'embedding' }],
  });
  const models = new ModelClients(providers);
  const indexDb = openIndexDatabase(':memory:');
  const index = new SqliteMemoryIndex(indexDb);
  return {
    index,
    service: new MemoryService(store, index, models, { startExtraction }),
    extractor: new MemoryExtractor(store, index, models),
    /** The batch steps, extracting at most `maxTurns` turns per model call. */
    batches: (maxTurns: number) => new MemoryBatchExtractor(store, index, models, maxTurns),
    store,
    async close() {
      await db.close();
      indexDb.close();
    },
  };
}
