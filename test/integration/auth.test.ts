import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';

describe('authentication and tenancy', () => {
  let anon: Api;
  before(async () => {
    anon = new Api((await harness()).url);
  });

  it('answers 401 without credentials', async () => {
    const res = await anon.get('/datasets');
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 401);
    assert.match(res.body.message, /Authorization/);
  });

  it('answers 401 for an unknown API key and for a forged token', async () => {
    const h = await harness();
    for (const key of ['cairn-not-a-real-key', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl']) {
      const res = await new Api(h.url, key).get('/datasets');
      assert.equal(res.status, 401, key);
    }
  });

  it('logs in with email and password and returns a token in the Authorization header', async () => {
    const h = await harness();
    const email = `login-${Date.now()}@example.com`;
    assert.equal((await anon.post('/users', { email, nickname: 'login', password: 'pw-123456' })).status, 200);
    const wrong = await anon.post('/auth/login', { email, password: 'nope' });
    assert.equal(wrong.status, 401);
    const res = await anon.post('/auth/login', { email, password: 'pw-123456' });
    assert.equal(res.status, 200);
    const token = res.headers.get('authorization')!;
    assert.ok(token);
    const me = await new Api(h.url, token).get('/users/me');
    assert.equal(me.body.data.email, email);
  });

  it('rejects a duplicate registration and an invalid email', async () => {
    const email = `dup-${Date.now()}@example.com`;
    assert.equal((await anon.post('/users', { email, nickname: 'dup', password: 'pw-123456' })).status, 200);
    assert.equal((await anon.post('/users', { email, nickname: 'dup', password: 'pw-123456' })).status, 400);
    assert.equal((await anon.post('/users', { email: 'not-an-email', nickname: 'x', password: 'pw-123456' })).status, 400);
  });

  it('lists API keys without revealing them, and a revoked key stops working', async () => {
    const { api } = await newUser('keys');
    const created = await api.post('/system/tokens');
    const token: string = created.body.data.token;
    assert.match(token, /^cairn-/);
    const list = await api.get('/system/tokens');
    assert.equal(list.body.data.length, 2);
    for (const k of list.body.data) assert.ok(!k.token.includes(token.slice(12)), 'full token is never listed');
    const second = new Api(api.url, token);
    assert.equal((await second.get('/datasets')).status, 200);
    assert.equal((await api.delete(`/system/tokens/${token}`)).status, 200);
    assert.equal((await second.get('/datasets')).status, 401);
  });

  it('keeps two users apart: another tenant’s dataset is never shown', async () => {
    const alice = await newUser('alice');
    const bob = await newUser('bob');
    const ds = (await alice.api.post('/datasets', { name: 'private' })).body.data;
    assert.equal((await bob.api.get('/datasets')).body.data.length, 0);
    assert.equal((await bob.api.get(`/datasets/${ds.id}`)).status, 404);
    assert.equal((await bob.api.get('/datasets', { id: ds.id })).status, 404);
    assert.equal((await bob.api.put(`/datasets/${ds.id}`, { name: 'stolen' })).status, 404);
    assert.equal((await bob.api.delete('/datasets', { ids: [ds.id] })).status, 404);
    assert.equal((await alice.api.get(`/datasets/${ds.id}`)).body.data.name, 'private');
  });

  describe('team datasets', () => {
    let owner: Awaited<ReturnType<typeof newUser>>;
    let member: Awaited<ReturnType<typeof newUser>>;
    let outsider: Awaited<ReturnType<typeof newUser>>;
    before(async () => {
      owner = await newUser('owner');
      member = await newUser('member');
      outsider = await newUser('outsider');
      const add = await owner.api.post(`/tenants/${owner.userId}/users`, { email: member.email });
      assert.equal(add.status, 200);
    });

    it('lets a member list and manage a team dataset', async () => {
      const ds = (await owner.api.post('/datasets', { name: 'shared', permission: 'team' })).body.data;
      const list = await member.api.get('/datasets');
      assert.ok(list.body.data.some((d: any) => d.id === ds.id));
      const upd = await member.api.put(`/datasets/${ds.id}`, { description: 'edited by member' });
      assert.equal(upd.status, 200);
      assert.equal(upd.body.data.description, 'edited by member');
      assert.equal((await outsider.api.get(`/datasets/${ds.id}`)).status, 404);
    });

    it('answers 403 when a member touches the owner’s private dataset', async () => {
      const ds = (await owner.api.post('/datasets', { name: 'owner-only' })).body.data;
      assert.ok(!(await member.api.get('/datasets')).body.data.some((d: any) => d.id === ds.id));
      const res = await member.api.put(`/datasets/${ds.id}`, { description: 'x' });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 403);
    });

    it('lets only the owner change a dataset’s permission', async () => {
      const ds = (await owner.api.post('/datasets', { name: 'perm', permission: 'team' })).body.data;
      assert.equal((await member.api.put(`/datasets/${ds.id}`, { permission: 'me' })).status, 403);
      assert.equal((await owner.api.put(`/datasets/${ds.id}`, { permission: 'me' })).status, 200);
    });

    it('lets only the owner manage members', async () => {
      assert.equal((await member.api.post(`/tenants/${owner.userId}/users`, { email: outsider.email })).status, 403);
      assert.equal((await outsider.api.get(`/tenants/${owner.userId}/users`)).status, 404);
      const members = await member.api.get(`/tenants/${owner.userId}/users`);
      assert.deepEqual(members.body.data.map((m: any) => m.role).sort(), ['normal', 'owner']);
    });

    it('removes a member, who then loses access', async () => {
      const temp = await newUser('temp');
      await owner.api.post(`/tenants/${owner.userId}/users`, { email: temp.email });
      const ds = (await owner.api.post('/datasets', { name: 'revoke-me', permission: 'team' })).body.data;
      assert.equal((await temp.api.get(`/datasets/${ds.id}`)).status, 200);
      assert.equal((await owner.api.delete(`/tenants/${owner.userId}/users/${temp.userId}`)).status, 200);
      assert.equal((await temp.api.get(`/datasets/${ds.id}`)).status, 404);
    });
  });
});
