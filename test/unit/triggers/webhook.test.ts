import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { webhookConfig, parseBodySize } from '../../../src/triggers/webhook-config.js';
import { webhookPayload, type RawWebhookRequest } from '../../../src/triggers/webhook-request.js';
import { checkIpWhitelist, checkWebhookAuth } from '../../../src/triggers/webhook-security.js';
import { ApiError } from '../../../src/errors.js';

const open = { auth_type: 'none', allow_anonymous: true };

/** Asserts an ApiError with the status and a message matching `pattern`. */
async function refused(fn: () => unknown, status: number, pattern: RegExp) {
  await assert.rejects(async () => fn(), (err: unknown) => err instanceof ApiError && err.status === status && pattern.test(err.message));
}

function request(over: Partial<RawWebhookRequest> = {}): RawWebhookRequest {
  return { method: 'POST', contentType: 'application/json', query: {}, headers: {}, body: Buffer.from('{}'), ...over };
}

describe('webhook settings (the Begin in Webhook mode)', () => {
  it('reads RAGFlow defaults: any method, 10MB, 60 calls a minute, Immediately with status 200', () => {
    const c = webhookConfig({ mode: 'Webhook', security: open });
    assert.deepEqual(c.methods, []);
    assert.equal(c.security.maxBodyBytes, 10 * 1024 * 1024);
    assert.deepEqual(c.security.rateLimit, { limit: 60, windowSeconds: 60 });
    assert.equal(c.executionMode, 'Immediately');
    assert.equal(c.response.status, 200);
  });

  it('refuses every setting it could not enforce, naming it', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ methods: ['TRACE'] }, /'methods' .*TRACE/],
      [{ content_types: 'application/xml' }, /'content_types'/],
      [{ security: { auth_type: 'hmac' } }, /'security\.auth_type'/],
      [{ security: { auth_type: 'token', token: { token_header: 'X-T' } } }, /'security\.token' .*token_value/],
      [{ security: { auth_type: 'jwt', jwt: { secret: 's', required_claims: ['exp'] } } }, /reserved claim\(s\) exp/],
      [{ security: { ...open, max_body_size: '20MB' } }, /at most 10MB/],
      [{ security: { ...open, ip_whitelist: ['10.0.0.0/33'] } }, /'security\.ip_whitelist'/],
      [{ security: { ...open, rate_limit: { limit: 0 } } }, /'security\.rate_limit\.limit'/],
      [{ schema: { body: { properties: { f: { type: 'file' } } } } }, /no file uploads/],
      [{ schema: { body: { properties: {}, required: ['x'] } } }, /names 'x', which is not among its properties/],
      [{ response: { status: 500 } }, /'response\.status' .*200 to 399/],
      [{ execution_mode: 'Later' }, /'execution_mode'/],
    ];
    for (const [params, pattern] of cases) await refused(() => webhookConfig({ mode: 'Webhook', security: open, ...params }), 400, pattern);
  });

  it('reads body sizes in KB and MB', () => {
    assert.equal(parseBodySize('512KB'), 512 * 1024);
    assert.equal(parseBodySize('1mb'), 1024 * 1024);
  });
});

describe('webhook request payload (query, headers, body by the schema)', () => {
  const config = webhookConfig({
    mode: 'Webhook',
    security: open,
    schema: {
      query: { properties: { page: { type: 'number' } } },
      headers: { properties: { 'X-Event': { type: 'string' } }, required: ['X-Event'] },
      body: { properties: { ok: { type: 'boolean' }, tags: { type: 'array<string>' }, meta: { type: 'object' }, note: { type: 'string' } } },
    },
  });

  it('keeps only declared fields, casts text to their types and fills defaults for optional ones', () => {
    const payload = webhookPayload(request({ query: { page: '2', other: 'x' }, headers: { 'x-event': 'push' }, body: Buffer.from('{"ok":"true","tags":["a"],"meta":{"k":1},"extra":1}') }), config);
    assert.deepEqual(payload, { query: { page: 2 }, headers: { 'X-Event': 'push' }, body: { ok: true, tags: ['a'], meta: { k: 1 }, note: '' } });
  });

  it('a missing required field or a wrong type is a 400 naming the field', async () => {
    await refused(() => webhookPayload(request(), config), 400, /headers is missing the required field 'X-Event'/);
    await refused(() => webhookPayload(request({ headers: { 'x-event': 'a' }, body: Buffer.from('{"tags":[1]}') }), config), 400, /body\.tags must be array<string>/);
    await refused(() => webhookPayload(request({ headers: { 'x-event': 'a' }, query: { page: 'two' } }), config), 400, /query\.page must be number/);
  });

  it('text bodies are read as JSON objects when they are, else as nothing (as RAGFlow)', () => {
    const plain = webhookConfig({ mode: 'Webhook', security: open, schema: { body: { properties: { a: { type: 'number' } } } } });
    assert.deepEqual(webhookPayload(request({ contentType: 'text/plain', body: Buffer.from('{"a":1}') }), plain).body, { a: 1 });
    assert.deepEqual(webhookPayload(request({ contentType: 'text/plain', body: Buffer.from('hello') }), plain).body, { a: 0 });
  });
});

describe('webhook guards', () => {
  const security = (s: Record<string, unknown>) => webhookConfig({ mode: 'Webhook', security: s }).security;

  it('the IP whitelist takes addresses and CIDR ranges, IPv4-mapped peers included', async () => {
    const s = security({ ...open, ip_whitelist: ['192.168.1.0/24', '::1'] });
    checkIpWhitelist(s, '::ffff:192.168.1.7');
    checkIpWhitelist(s, '::1');
    await refused(() => checkIpWhitelist(s, '10.1.1.1'), 403, /IP 10\.1\.1\.1 is not allowed/);
  });

  it('jwt with an RS256 public key verifies tokens signed by its private key only', async () => {
    const { generateKeyPair, exportSPKI } = await import('jose');
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const s = security({ auth_type: 'jwt', jwt: { secret: await exportSPKI(publicKey), algorithm: 'rs256', issuer: 'billing' } });
    const token = (key: CryptoKey, iss = 'billing') => new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(iss).sign(key);
    await checkWebhookAuth(s, { authorization: `Bearer ${await token(privateKey)}` });
    await refused(async () => checkWebhookAuth(s, { authorization: `Bearer ${await token(other.privateKey)}` }), 401, /Invalid JWT/);
    await refused(async () => checkWebhookAuth(s, { authorization: `Bearer ${await token(privateKey, 'someone')}` }), 401, /Invalid JWT/);
    await refused(() => checkWebhookAuth(s, {}), 401, /Missing Bearer token/);
  });
});
