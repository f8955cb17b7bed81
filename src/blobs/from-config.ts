import { FsBlobStore } from './fs-blob-store.js';
import type { BlobLocation, S3Location } from './location.js';
import type { BlobStore } from './types.js';

/** The BlobStore that `CAIRN_BLOBS` names (parsed into `config.blobs` by loadConfig). */
export function blobStoreFromConfig(config: { blobs: BlobLocation }): BlobStore {
  const location = config.blobs;
  return location.kind === 'file' ? new FsBlobStore(location.dir) : deferredS3Store(location);
}

/**
 * The AWS SDK takes most of a second to load: only processes configured for S3 load it, on their
 * first file operation.
 */
function deferredS3Store(location: S3Location): BlobStore {
  let loaded: Promise<BlobStore> | undefined;
  const store = () =>
    (loaded ??= import('./s3-blob-store.js').then(({ S3BlobStore, s3ClientFor }) => new S3BlobStore(s3ClientFor(location), location.bucket, location.prefix)));
  return {
    put: async (key, bytes) => (await store()).put(key, bytes),
    get: async (key) => (await store()).get(key),
    delete: async (key) => (await store()).delete(key),
    deletePrefix: async (prefix) => (await store()).deletePrefix(prefix),
  };
}
