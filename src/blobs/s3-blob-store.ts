import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { BlobStore } from './types.js';
import type { S3Location } from './location.js';

/** DeleteObjects takes at most this many keys per request (an S3 limit). */
const DELETE_BATCH = 1000;

/**
 * BlobStore on an S3-compatible object store: every key lives below one key prefix of one bucket.
 * Each put is a single PutObject, which S3 accepts up to 5 GB; Cairn's upload limit (100 MB by
 * default) keeps objects far below that, so multipart uploads are not needed.
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix = '',
  ) {}

  private objectKey(key: string): string {
    if (!key || key.startsWith('/') || key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
      throw new Error(`invalid blob key: ${key}`);
    }
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const Key = this.objectKey(key);
    await this.call('PutObject', Key, () => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: bytes, ContentLength: bytes.byteLength })));
  }

  async get(key: string): Promise<Buffer | undefined> {
    const Key = this.objectKey(key);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      const bytes = await res.Body!.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      if (isMissingKey(err)) return undefined;
      throw this.failure('GetObject', Key, err);
    }
  }

  /** Idempotent: S3 answers DeleteObject for a missing key with success. */
  async delete(key: string): Promise<void> {
    const Key = this.objectKey(key);
    await this.call('DeleteObject', Key, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key })));
  }

  /** Removes the key itself and every key below `prefix/` (not keys that merely start with the same letters). */
  async deletePrefix(prefix: string): Promise<void> {
    const folder = this.objectKey(prefix);
    await this.call('DeleteObject', folder, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: folder })));
    let ContinuationToken: string | undefined;
    do {
      // One listed page (at most 1000 keys) is one DeleteObjects batch.
      const page = await this.call('ListObjectsV2', `${folder}/`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${folder}/`, MaxKeys: DELETE_BATCH, ContinuationToken })),
      );
      const keys = (page.Contents ?? []).map((o) => o.Key!).filter(Boolean);
      if (keys.length) await this.deleteBatch(keys);
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  private async deleteBatch(keys: string[]): Promise<void> {
    const res = await this.call('DeleteObjects', `${keys[0]} (+${keys.length - 1} more)`, () =>
      this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } })),
    );
    // DeleteObjects answers 200 even when some keys could not be deleted: those come back in Errors.
    const failed = res.Errors ?? [];
    if (failed.length) {
      const first = failed[0]!;
      throw new Error(`S3 DeleteObjects s3://${this.bucket}: ${failed.length} of ${keys.length} keys not deleted, e.g. ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim());
    }
  }

  private async call<T>(operation: string, key: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      throw this.failure(operation, key, err);
    }
  }

  private failure(operation: string, key: string, err: unknown): Error {
    const reason = err instanceof S3ServiceException ? `${err.name} (HTTP ${err.$metadata.httpStatusCode ?? '?'}): ${err.message}` : (err as Error).message;
    const attempts = (err as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
    return new Error(`S3 ${operation} s3://${this.bucket}/${key} failed${attempts > 1 ? ` after ${attempts} attempts` : ''}: ${reason}`, { cause: err });
  }
}

/** A missing object, as opposed to a missing bucket (a configuration error that must not read as "no file"). */
function isMissingKey(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  if (err.name === 'NoSuchKey') return true;
  return err.$metadata.httpStatusCode === 404 && err.name !== 'NoSuchBucket';
}

/**
 * A client for the location. Credentials are the location's, else the AWS SDK's standard chain
 * (AWS_PROFILE, web identity, instance roles). The SDK retries throttling, 5xx
 * and network errors (3 attempts, exponential backoff; AWS_MAX_ATTEMPTS changes it); a connection that
 * does not open in 5 s or a socket idle for 60 s fails the attempt instead of hanging.
 */
export function s3ClientFor(location: S3Location): S3Client {
  return new S3Client({
    region: location.region,
    endpoint: location.endpoint,
    forcePathStyle: location.forcePathStyle,
    credentials: location.credentials,
    requestHandler: { connectionTimeout: 5_000, socketTimeout: 60_000 },
  });
}
