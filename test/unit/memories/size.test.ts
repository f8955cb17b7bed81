import assert from 'node:assert/strict';
import { MemoryFullError, fifoOrder, messageSize, planEviction, type FifoCandidate } from '../../../src/memories/size.js';

describe('memories: size accounting and FIFO selection', () => {
  it('a message counts its UTF-8 content bytes plus 8 bytes per embedding dimension', () => {
    assert.equal(messageSize('abc', 4), 3 + 32);
    assert.equal(messageSize('é€', 0), 2 + 3, 'bytes, not characters');
    assert.equal(messageSize('', 384), 3072);
  });

  it('FIFO order: forgotten messages first by earliest forget_at, then the rest by oldest valid_at, ties by id', () => {
    const c = (message_id: number, valid_at: number, forget_at: number | null = null): FifoCandidate => ({ message_id, size: 1, valid_at, forget_at });
    const sorted = [c(1, 10), c(2, 5), c(3, 50, 300), c(4, 1, 200), c(5, 5), c(6, 99, 200)].sort(fifoOrder).map((x) => x.message_id);
    assert.deepEqual(sorted, [4, 6, 3, 2, 5, 1]);
  });

  it('nothing is removed while the new message fits', () => {
    assert.deepEqual(planEviction(50, 50, 100, [{ message_id: 1, size: 10 }]), []);
  });

  it('removes candidates in the given order until the new bytes fit, and no more', () => {
    const candidates = [{ message_id: 7, size: 30 }, { message_id: 3, size: 30 }, { message_id: 9, size: 30 }];
    assert.deepEqual(planEviction(90, 40, 100, candidates), [7]);
    assert.deepEqual(planEviction(90, 41, 100, candidates), [7, 3]);
    assert.deepEqual(planEviction(90, 100, 100, candidates), [7, 3, 9]);
  });

  it('consumes the candidates lazily (a database cursor stops at the first that suffice)', () => {
    let read = 0;
    function* lazy() {
      for (let i = 1; i <= 1000; i++) {
        read++;
        yield { message_id: i, size: 10 };
      }
    }
    planEviction(1000, 25, 1000, lazy());
    assert.equal(read, 3);
  });

  it('a message larger than the memory is a MemoryFullError, whatever could be removed', () => {
    assert.throws(() => planEviction(0, 101, 100, []), (err: Error) => err instanceof MemoryFullError && /101 bytes is larger than the memory \(memory_size 100 bytes\)/.test(err.message));
  });
});
