import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { McpServerService } from '../../../src/services/mcp-servers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { DEFAULT_PRIVATE_URL_ALLOWLIST } from '../../../src/agents/io/ssrf.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

for (const profile of testProfiles()) describe(`MCP server URLs follow the outbound-address policy at registration [${profile}]`, () => {
  let db: MetaDb;
  let servers: McpServerService;
  const alice = tenantPrincipal('a'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    servers = new McpServerService(new MetaStore(db), (url) => outboundGuard({ allowPrivate: false, allowList: DEFAULT_PRIVATE_URL_ALLOWLIST })(url, 'MCP server'));
  });
  afterEach(() => db.close());

  it('refuses a private address when the server is added or its URL changed, naming the address and the setting, and stores nothing', async () => {
    await assert.rejects(servers.create(alice, { name: 'local', url: 'http://127.0.0.1:9000/mcp' }), (err: { code?: number; message: string }) => {
      assert.equal(err.code, 400);
      assert.match(err.message, /MCP server: 127\.0\.0\.1 is a loopback address; .*CAIRN_PRIVATE_URL_ALLOWLIST, e\.g\. 127\.0\.0\.1:9000/);
      return true;
    });
    assert.deepEqual(await new MetaStore(db).mcpServers.nameTaken(alice.tenantId, 'local'), false);
    const ok = (await servers.create(alice, { name: 'public', url: 'http://93.184.216.34/mcp' })) as { id: string };
    await assert.rejects(servers.update(alice, ok.id, { url: 'http://192.168.0.9/mcp' }), /192\.168\.0\.9 is a private address/);
  });
});
