import assert from 'node:assert/strict';
import { float32sOf, fromFloat32Blob, toFloat32Blob } from '../../../../src/index/vectors/vector-codec.js';

describe('float32 BLOBs', () => {
  const vector = [0.5, -1.25, 3, 0, -0.0078125, 1e-3];
  const asFloat32 = vector.map((x) => Math.fround(x));

  it('a vector read back from its BLOB is the same float32 vector, as a plain array', () => {
    const read = fromFloat32Blob(toFloat32Blob(vector));
    assert.ok(Array.isArray(read));
    assert.deepEqual(read, asFloat32);
  });

  it('a BLOB at any byte offset (a driver may hand one out of a larger buffer) reads the same', () => {
    const blob = toFloat32Blob(vector);
    for (const offset of [1, 2, 3, 4]) {
      const larger = Buffer.alloc(blob.length + 8);
      blob.copy(larger, offset);
      assert.deepEqual(fromFloat32Blob(larger.subarray(offset, offset + blob.length)), asFloat32, `offset ${offset}`);
    }
  });

  it('an empty BLOB is an empty vector', () => {
    assert.deepEqual(fromFloat32Blob(Buffer.alloc(0)), []);
  });

  it('float32sOf reads the floats in place when the BLOB is 4-aligned, and copies them when it is not', () => {
    const blob = toFloat32Blob(vector);
    const larger = Buffer.alloc(blob.length + 8);
    blob.copy(larger, 4);
    const aligned = larger.subarray(4, 4 + blob.length);
    const view = float32sOf(aligned);
    assert.deepEqual([...view], asFloat32);
    assert.equal(view.buffer, aligned.buffer, 'a view of the same memory');
    blob.copy(larger, 3);
    const copied = float32sOf(larger.subarray(3, 3 + blob.length));
    assert.deepEqual([...copied], asFloat32);
    assert.notEqual(copied.buffer, larger.buffer);
  });
});
