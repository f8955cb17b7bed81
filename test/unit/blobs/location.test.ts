import assert from 'node:assert/strict';
import path from 'node:path';
import { parseBlobLocation } from '../../../src/blobs/location.js';
import { loadConfig } from '../../../src/config.js';

describe('CAIRN_BLOBS: where files live', () => {
  const dataDir = '/var/lib/cairn';

  it('defaults to the blobs folder of the data directory', () => {
    assert.deepEqual(parseBlobLocation({}, dataDir), { kind: 'file', dir: path.join(dataDir, 'blobs') });
    assert.deepEqual(loadConfig({ CAIRN_DATA_DIR: dataDir }).blobs, { kind: 'file', dir: path.join(dataDir, 'blobs') });
  });

  it('takes file:<dir>, relative paths resolved from the working directory', () => {
    assert.deepEqual(parseBlobLocation({ CAIRN_BLOBS: 'file:/srv/files' }, dataDir), { kind: 'file', dir: '/srv/files' });
    assert.deepEqual(parseBlobLocation({ CAIRN_BLOBS: 'file:rel/files' }, dataDir), { kind: 'file', dir: path.resolve('rel/files') });
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 'file:' }, dataDir), /needs a directory/);
  });

  it('takes s3://bucket and s3://bucket/prefix, the prefix without outer slashes', () => {
    const bare = parseBlobLocation({ CAIRN_BLOBS: 's3://cairn-files' }, dataDir);
    assert.deepEqual(bare, { kind: 's3', bucket: 'cairn-files', prefix: '', region: 'us-east-1', endpoint: undefined, forcePathStyle: false, credentials: undefined });
    const nested = parseBlobLocation({ CAIRN_BLOBS: 's3://cairn-files/prod/eu/' }, dataDir);
    assert.equal(nested.kind === 's3' && nested.prefix, 'prod/eu');
  });

  it('reads region, endpoint, path style and credentials; an endpoint implies path style unless told otherwise', () => {
    const env = { CAIRN_BLOBS: 's3://b1k/p', CAIRN_S3_ENDPOINT: 'http://minio:9000', AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' };
    const loc = parseBlobLocation(env, dataDir);
    assert.ok(loc.kind === 's3');
    assert.equal(loc.endpoint, 'http://minio:9000');
    assert.equal(loc.region, 'eu-west-1');
    assert.equal(loc.forcePathStyle, true);
    assert.deepEqual(loc.credentials, { accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: undefined });
    const virtualHosted = parseBlobLocation({ ...env, CAIRN_S3_FORCE_PATH_STYLE: 'false', CAIRN_S3_REGION: 'auto' }, dataDir);
    assert.ok(virtualHosted.kind === 's3');
    assert.equal(virtualHosted.forcePathStyle, false);
    assert.equal(virtualHosted.region, 'auto', 'CAIRN_S3_REGION wins over AWS_REGION');
  });

  it('refuses values it cannot use, with the reason', () => {
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 'gs://bucket' }, dataDir), /must be file:<dir> or s3:\/\/<bucket>/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 's3://Bad_Bucket' }, dataDir), /not a valid S3 bucket name/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 's3://ok-bucket/a//b' }, dataDir), /empty, "\." or "\.\." segment/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 's3://ok-bucket/a/../b' }, dataDir), /segment/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 's3://ok-bucket', CAIRN_S3_ENDPOINT: 'minio:9000' }, dataDir), /must be an http\(s\) URL/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 's3://ok-bucket', CAIRN_S3_FORCE_PATH_STYLE: 'maybe' }, dataDir), /CAIRN_S3_FORCE_PATH_STYLE="maybe": expected true or false/);
    // Every spelling the startup check accepts is read, as by every other boolean setting.
    const off = parseBlobLocation({ CAIRN_BLOBS: 's3://ok-bucket', CAIRN_S3_ENDPOINT: 'http://127.0.0.1:9000', CAIRN_S3_FORCE_PATH_STYLE: 'off' }, dataDir);
    assert.equal(off.kind === 's3' && off.forcePathStyle, false);
  });

  it('refuses S3 settings without an s3:// location instead of ignoring them', () => {
    assert.throws(() => parseBlobLocation({ CAIRN_S3_ENDPOINT: 'http://minio:9000' }, dataDir), /CAIRN_S3_ENDPOINT is set but CAIRN_BLOBS is not an s3:\/\/ location/);
    assert.throws(() => parseBlobLocation({ CAIRN_BLOBS: 'file:/x', CAIRN_S3_REGION: 'eu-west-1', CAIRN_S3_FORCE_PATH_STYLE: 'true' }, dataDir), /CAIRN_S3_REGION, CAIRN_S3_FORCE_PATH_STYLE are set/);
  });
});
