import assert from 'node:assert/strict';
import { DEFAULT_THROTTLE, LoginThrottle } from '../../../src/services/login-throttle.js';

describe('LoginThrottle: failed log-ins per account and per address, with exponential back-off', () => {
  let now = 0;
  const throttle = () => new LoginThrottle(DEFAULT_THROTTLE, () => now);
  beforeEach(() => (now = 1_000_000));

  it('lets three failures through, then closes for 1 s, 2 s, 4 s … after each further one', () => {
    const t = throttle();
    for (let i = 0; i < 3; i++) {
      assert.equal(t.waitMs('a@x', '1.1.1.1'), 0);
      t.failed('a@x', '1.1.1.1');
    }
    assert.equal(t.waitMs('a@x', '1.1.1.1'), 0, 'three free failures');
    const waits = [];
    for (let i = 0; i < 4; i++) {
      t.failed('a@x', '1.1.1.1');
      const w = t.waitMs('a@x', '1.1.1.1');
      waits.push(w);
      now += w;
    }
    assert.deepEqual(waits, [1000, 2000, 4000, 8000]);
  });

  it("caps the account's back-off at a minute and the address's at 15 minutes", () => {
    const t = throttle();
    for (let i = 0; i < 40; i++) {
      t.failed('a@x', '1.1.1.1');
      now += t.waitMs('a@x', '1.1.1.1');
    }
    t.failed('a@x', '1.1.1.1');
    assert.equal(t.waitMs('a@x', '9.9.9.9'), 60_000, 'the account, from another address');
    assert.equal(t.waitMs('b@x', '1.1.1.1'), 15 * 60_000, 'the address, for another account');
  });

  it('one address hammering an account keeps the owner at another address out for at most a minute at a time', () => {
    const t = throttle();
    // The attacker tries whenever its own back-off allows, for two hours.
    const end = now + 2 * 60 * 60_000;
    let longestOwnerWait = 0;
    while (now < end) {
      if (t.waitMs('victim@x', '6.6.6.6') === 0) t.failed('victim@x', '6.6.6.6');
      longestOwnerWait = Math.max(longestOwnerWait, t.waitMs('victim@x', '7.7.7.7'));
      now += 1000;
    }
    assert.ok(longestOwnerWait <= 60_000, `the owner waited ${longestOwnerWait} ms`);
    now += t.waitMs('victim@x', '7.7.7.7');
    assert.equal(t.waitMs('victim@x', '7.7.7.7'), 0, 'the owner gets in once the account back-off has passed');
  });

  it('a success clears the account and the address; refused tries do not count', () => {
    const t = throttle();
    for (let i = 0; i < 5; i++) t.failed('a@x', '1.1.1.1');
    assert.equal(t.waitMs('a@x', '1.1.1.1'), 2000);
    t.succeeded('a@x', '1.1.1.1');
    assert.equal(t.waitMs('a@x', '1.1.1.1'), 0);
    assert.equal(t.waitMs('other@x', '1.1.1.1'), 0);
  });

  it('forgets a key an hour after its last failure, and keeps at most maxKeys keys', () => {
    const t = new LoginThrottle({ ...DEFAULT_THROTTLE, maxKeys: 4 }, () => now);
    for (let i = 0; i < 4; i++) t.failed('a@x', '1.1.1.1');
    now += 60 * 60_000 + 1;
    assert.equal(t.waitMs('a@x', '1.1.1.1'), 0);
    for (let i = 0; i < 4; i++) t.failed('old@x', '2.2.2.2');
    assert.equal(t.waitMs('old@x', '3.3.3.3'), 1000);
    for (let i = 0; i < 3; i++) t.failed(`new${i}@x`, '4.4.4.4');
    assert.equal(t.waitMs('old@x', '3.3.3.3'), 0, 'the oldest keys were dropped');
  });
});
