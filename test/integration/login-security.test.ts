import assert from 'node:assert/strict';
import http from 'node:http';
import { harness } from './harness.js';
import { Api } from './client.js';

/**
 * Log-in as users see it (docs/security.md): throttled per account and per client address, one message
 * for an unknown e-mail and a wrong password, a minimum password length. Each test logs in from its own
 * loopback address (127.0.0.x), so its failures count against that address only.
 */

interface LoginAnswer {
  status: number;
  body: { code: number; message: string; data?: unknown };
  retryAfter: string | undefined;
}

/** POST /auth/login from a given local address (the client address the throttle sees). */
function loginFrom(url: string, localAddress: string, email: string, password: string): Promise<LoginAnswer> {
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = http.request(new URL('/api/v1/auth/login', url), { method: 'POST', localAddress, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 0;

describe('log-in: throttling, one refusal message, minimum password length', () => {
  let url: string;
  let anon: Api;
  const PASSWORD = 'correct horse battery';
  const register = async () => {
    const email = `login-sec-${process.pid}-${++seq}-${Date.now()}@example.com`;
    const res = await anon.post('/users', { email, nickname: 'login', password: PASSWORD });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return email;
  };
  before(async () => {
    url = (await harness()).url;
    anon = new Api(url);
  });

  it('answers an unknown e-mail and a wrong password with the same 401 message', async () => {
    const email = await register();
    const unknown = await loginFrom(url, '127.0.0.11', `nobody-${Date.now()}@example.com`, PASSWORD);
    const wrong = await loginFrom(url, '127.0.0.11', email, 'not the password');
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    assert.deepEqual(unknown.body, wrong.body);
    assert.equal(wrong.body.message, 'Email and password do not match!');
    assert.equal((await loginFrom(url, '127.0.0.11', email, PASSWORD)).status, 200);
  });

  it('refuses a password shorter than CAIRN_MIN_PASSWORD_LENGTH (8) at sign-up, accepts one of 8', async () => {
    const email = `short-${process.pid}-${Date.now()}@example.com`;
    const short = await anon.post('/users', { email, nickname: 'short', password: 'x' });
    assert.equal(short.status, 400);
    assert.equal(short.body.code, 400);
    assert.equal(short.body.message, 'Password must be at least 8 characters (CAIRN_MIN_PASSWORD_LENGTH).');
    assert.equal((await anon.post('/users', { email, nickname: 'short', password: '7 chars' })).status, 400);
    assert.equal((await anon.post('/users', { email, nickname: 'short', password: '8 chars!' })).status, 200);
  });

  it('after three free failures each wrong password closes the account for a back-off (429, Retry-After, even for the right password); the right one works once it has passed', async () => {
    const email = await register();
    for (let i = 0; i < 4; i++) assert.equal((await loginFrom(url, '127.0.0.12', email, `wrong ${i}`)).status, 401, `failure ${i + 1}`);
    const throttled = await loginFrom(url, '127.0.0.12', email, PASSWORD);
    assert.equal(throttled.status, 429);
    assert.equal(throttled.retryAfter, '1');
    assert.equal(throttled.body.code, 429);
    assert.match(throttled.body.message, /Too many failed log-ins for this account or from this address: try again in 1 s/);
    await sleep(1100);
    const ok = await loginFrom(url, '127.0.0.12', email, PASSWORD);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    // the success cleared the counters: a wrong password is a plain 401 again
    assert.equal((await loginFrom(url, '127.0.0.12', email, 'wrong again')).status, 401);
  });

  it('an address hammering an account shuts itself out for longer; the owner at another address gets in once the account back-off has passed', async () => {
    const victim = await register();
    const other = await register();
    for (let i = 0; i < 4; i++) await loginFrom(url, '127.0.0.13', victim, `guess ${i}`);
    const ownerEarly = await loginFrom(url, '127.0.0.14', victim, PASSWORD);
    assert.equal(ownerEarly.status, 429, 'the account is in back-off for everyone');
    await sleep(Number(ownerEarly.retryAfter) * 1000 + 100);
    assert.equal((await loginFrom(url, '127.0.0.14', victim, PASSWORD)).status, 200, 'the owner gets in');
    // The attacker's fifth failure doubles its address's back-off, not the (reset) account's.
    assert.equal((await loginFrom(url, '127.0.0.13', victim, 'guess 5')).status, 401);
    const attacker = await loginFrom(url, '127.0.0.13', other, PASSWORD);
    assert.equal(attacker.status, 429, 'the hammering address is shut, whatever the account');
    assert.equal(attacker.retryAfter, '2');
    assert.equal((await loginFrom(url, '127.0.0.14', victim, PASSWORD)).status, 200, 'the owner is not');
  });
});
