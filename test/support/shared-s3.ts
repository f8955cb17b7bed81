import type { S3TestServer } from './s3-server.js';

/**
 * One moto S3 server for the whole test run (the scale-out profile's files), started on first use;
 * test/hooks.ts stops it. A module of its own so that the hooks do not load the AWS SDK (about 1 s) in
 * runs that never use S3.
 */
let shared: Promise<S3TestServer> | undefined;

export function sharedS3(): Promise<S3TestServer> {
  shared ??= import('./s3-server.js').then(({ startS3Server }) => startS3Server());
  return shared;
}

export async function stopSharedS3(): Promise<void> {
  if (!shared) return;
  const server = await shared.catch(() => undefined);
  shared = undefined;
  await server?.stop();
}
