/** Connecting to Milvus and turning the SDK's two ways of failing into one error that names the operation. */
import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import type { MilvusLocation } from '../../location.js';

export class MilvusIndexError extends Error {
  constructor(readonly operation: string, reason: string) {
    super(`Milvus ${operation} failed: ${reason}`);
    this.name = 'MilvusIndexError';
  }
}

interface Status {
  error_code?: string | number;
  code?: number;
  reason?: string;
}

function failure(status: Status | undefined): string | undefined {
  if (!status) return undefined;
  const ok = (status.error_code === undefined || status.error_code === 'Success' || status.error_code === 0)
    && (status.code === undefined || status.code === 0);
  return ok ? undefined : status.reason || `error ${String(status.error_code ?? status.code)}`;
}

/**
 * Runs one SDK call. The SDK answers most server-side errors with a status in the response (not an
 * exception), throws the status object itself from some calls (createCollection), and throws gRPC
 * errors for transport problems; all three become a MilvusIndexError.
 */
export async function call<T extends object>(operation: string, run: () => Promise<T>): Promise<T> {
  let response: T;
  try {
    response = await run();
  } catch (err) {
    if (err instanceof MilvusIndexError) throw err;
    const reason = err instanceof Error ? err.message : failure(err as Status) ?? String(err);
    throw new MilvusIndexError(operation, reason);
  }
  const status = 'status' in response ? (response.status as Status) : (response as Status);
  const reason = failure(status);
  if (reason) throw new MilvusIndexError(operation, reason);
  return response;
}

/** A client of the location's database, connected; the database is created when it does not exist. */
export async function connectMilvus(location: MilvusLocation): Promise<MilvusClient> {
  const client = new MilvusClient({
    address: location.address,
    token: location.token,
    // The SDK otherwise reports usage metrics to the server every few seconds, which milvus-lite does not know.
    telemetry: { enabled: false },
    logLevel: 'error',
  });
  try {
    await call(`connect to ${location.address}`, async () => {
      await client.connectPromise;
      return {};
    });
    const { db_names } = await call('listDatabases', () => client.listDatabases());
    if (!db_names.includes(location.database)) {
      await call(`createDatabase ${location.database}`, () => client.createDatabase({ db_name: location.database }))
        .catch(async (err) => {
          // Another process may have created it in the meantime.
          const again = await client.listDatabases();
          if (!again.db_names.includes(location.database)) throw err;
          return {};
        });
    }
    await call(`useDatabase ${location.database}`, () => client.useDatabase({ db_name: location.database }));
  } catch (err) {
    await client.closeConnection().catch(() => undefined);
    throw err;
  }
  return client;
}
