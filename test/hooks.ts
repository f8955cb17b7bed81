import { stopHarness } from './integration/harness.js';
import { stopSharedMilvus } from './support/milvus-server.js';
import { stopSharedPostgres } from './support/postgres.js';
import { stopSharedS3 } from './support/shared-s3.js';

/** Root hooks: whatever the run started is always stopped. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopHarness();
    await stopSharedPostgres();
    await stopSharedMilvus();
    await stopSharedS3();
  },
};
