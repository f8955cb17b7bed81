import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../src/engine/dev-server.js';
import { dieWithParent } from '../../src/engine/parent-death.js';

/**
 * A real S3 protocol server for tests: moto (PyPI `moto[server]`, in requirements.txt) on loopback,
 * in memory, fresh at each start. It speaks the S3 REST API that AWS S3 and MinIO speak, in path style.
 */
export interface S3TestServer {
  endpoint: string;
  /** A client of this server with its credentials (any credentials pass in moto). */
  client: S3Client;
  /** Environment that points a Cairn process (API or `cairn worker`) at `s3://bucket/prefix` here. */
  env(bucket: string, prefix?: string): Record<string, string>;
  createBucket(bucket: string): Promise<void>;
  stop(): Promise<void>;
}

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'cairn-test', secretAccessKey: 'cairn-test-secret' };

export async function startS3Server(): Promise<S3TestServer> {
  const binary = path.join(rootDir, '.venv', 'bin', 'moto_server');
  if (!fs.existsSync(binary)) throw new Error(`${binary} is missing: install requirements.txt into .venv (make install)`);
  const port = await freePort();
  const launch = dieWithParent(rootDir, binary, ['-H', '127.0.0.1', '-p', String(port)]);
  const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + 60_000;
  while (!(await answers(endpoint))) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (code ${child.exitCode}): ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not answer within 60 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const client = new S3Client({ region: REGION, endpoint, forcePathStyle: true, credentials: CREDENTIALS });
  return {
    endpoint,
    client,
    env: (bucket, prefix) => ({
      CAIRN_BLOBS: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
      CAIRN_S3_ENDPOINT: endpoint,
      CAIRN_S3_REGION: REGION,
      CAIRN_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      // Credentials are given above: the SDK must never fall back to probing an instance metadata address.
      AWS_EC2_METADATA_DISABLED: 'true',
    }),
    async createBucket(bucket) {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    },
    async stop() {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    return (await fetch(endpoint, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}
