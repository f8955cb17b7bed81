import assert from 'node:assert/strict';
import { systemRoutes } from '../../../src/api/routers/system.js';
import type { RouteContext } from '../../../src/api/routes.js';

/** Calls the healthz handler with a response that records what it sends. */
async function healthz(temporalUiUrl?: string): Promise<Record<string, unknown>> {
  const route = systemRoutes([{ name: 'database', check: async () => {} }], () => [], temporalUiUrl).find((r) => r.path === '/system/healthz')!;
  let sent = '';
  const res = {
    status() {
      return res;
    },
    type() {
      return res;
    },
    send(body: string) {
      sent = body;
      return res;
    },
  };
  await route.handler({ res } as unknown as RouteContext);
  return JSON.parse(sent);
}

describe('healthz and the Temporal UI', () => {
  it('reports where the Temporal UI is when it is known, for the console to link to', async () => {
    const body = await healthz('http://127.0.0.1:8233');
    assert.equal(body.temporal_ui, 'http://127.0.0.1:8233');
    assert.equal(body.status, 'ok');
  });

  it('says nothing about a Temporal UI when none runs', async () => {
    const body = await healthz(undefined);
    assert.equal('temporal_ui' in body, false);
  });
});
