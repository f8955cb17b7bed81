import path from 'node:path';
import { readSetting } from '../config-schema.js';

/** Where the BlobStore keeps files (`CAIRN_BLOBS`): a folder, or a bucket of an S3-compatible store. */
export type BlobLocation = { kind: 'file'; dir: string } | S3Location;

export interface S3Location {
  kind: 's3';
  bucket: string;
  /** Key prefix without leading or trailing '/'; '' puts keys at the bucket's root. */
  prefix: string;
  region: string;
  /** Endpoint of an S3-compatible server (MinIO, moto); unset = AWS S3 of the region. */
  endpoint?: string;
  /** Bucket in the path (`endpoint/bucket/key`) instead of the host name (`bucket.endpoint/key`). */
  forcePathStyle: boolean;
  /**
   * From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) of the configuration's
   * environment; unset = the AWS SDK's default chain (profiles, web identity, instance roles).
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

const S3_VARIABLES = ['CAIRN_S3_ENDPOINT', 'CAIRN_S3_REGION', 'CAIRN_S3_FORCE_PATH_STYLE'] as const;

/**
 * Reads `CAIRN_BLOBS` (`file:<dir>` or `s3://<bucket>[/<prefix>]`, default `<dataDir>/blobs`) and the
 * `CAIRN_S3_*` variables. Throws on a value it cannot use, and on S3 settings given without an S3
 * location: they would otherwise be ignored while files silently land on the local disk.
 */
export function parseBlobLocation(env: NodeJS.ProcessEnv, dataDir: string): BlobLocation {
  const value = (env.CAIRN_BLOBS ?? '').trim();
  if (!value.startsWith('s3://')) {
    const stray = S3_VARIABLES.filter((name) => env[name]);
    if (stray.length) throw new Error(`${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set but CAIRN_BLOBS is not an s3:// location`);
  }
  if (value === '') return { kind: 'file', dir: path.join(dataDir, 'blobs') };
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length);
    if (!dir) throw new Error('CAIRN_BLOBS=file:<dir> needs a directory');
    return { kind: 'file', dir: path.resolve(dir) };
  }
  if (value.startsWith('s3://')) return { kind: 's3', ...parseS3Url(value), ...s3Settings(env) };
  throw new Error(`CAIRN_BLOBS must be file:<dir> or s3://<bucket>[/<prefix>], got "${value}"`);
}

function parseS3Url(value: string): { bucket: string; prefix: string } {
  const rest = value.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
  // S3's bucket naming rules (3-63 lowercase letters, digits, dots, hyphens; letter or digit at both ends).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`CAIRN_BLOBS: "${bucket}" is not a valid S3 bucket name`);
  if (prefix && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new Error(`CAIRN_BLOBS: the key prefix "${prefix}" has an empty, "." or ".." segment`);
  }
  return { bucket, prefix };
}

function s3Settings(env: NodeJS.ProcessEnv): Omit<S3Location, 'kind' | 'bucket' | 'prefix'> {
  const endpoint = env.CAIRN_S3_ENDPOINT?.trim() || undefined;
  if (endpoint && !/^https?:\/\/[^/]/.test(endpoint)) throw new Error(`CAIRN_S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  // The schema's boolean parser, so what startup accepts (on/off included) is what this reads.
  const style = readSetting(env, 'CAIRN_S3_FORCE_PATH_STYLE');
  return {
    region: env.CAIRN_S3_REGION?.trim() || env.AWS_REGION?.trim() || 'us-east-1',
    endpoint,
    // Self-hosted servers (MinIO, moto) are usually reached by one host name: path style unless told otherwise.
    forcePathStyle: style ?? endpoint !== undefined,
    credentials: env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN || undefined }
      : undefined,
  };
}
