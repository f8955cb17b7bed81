/** Where the chunk index lives (`CAIRN_INDEX`): embedded in the data dir's SQLite file, or a Milvus server. */
export type IndexLocation = { kind: 'embedded' } | MilvusLocation;

export interface MilvusLocation {
  kind: 'milvus';
  /** host:port of the Milvus proxy (gRPC). */
  address: string;
  /** Milvus database holding Cairn's collections; created when missing. */
  database: string;
  /** CAIRN_MILVUS_TOKEN: `user:password` or an API key; unset when authentication is off. */
  token?: string;
}

export const DEFAULT_MILVUS_PORT = 19530;

// Milvus's rules for database names: a letter or underscore, then letters, digits, underscores.
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,254}$/;

/**
 * Reads `CAIRN_INDEX` (`embedded`, the default, or `milvus://host[:port][/database]`) and
 * `CAIRN_MILVUS_TOKEN`. Throws on a value it cannot use, and on a token given without a Milvus
 * location: it would otherwise be ignored while chunks silently stay in the local SQLite file.
 */
export function parseIndexLocation(env: { CAIRN_INDEX?: string; CAIRN_MILVUS_TOKEN?: string }): IndexLocation {
  const value = (env.CAIRN_INDEX ?? '').trim();
  const token = env.CAIRN_MILVUS_TOKEN?.trim() || undefined;
  if (value === '' || value === 'embedded') {
    if (token) throw new Error('CAIRN_MILVUS_TOKEN is set but CAIRN_INDEX is not a milvus:// location');
    return { kind: 'embedded' };
  }
  if (!value.startsWith('milvus://')) {
    throw new Error(`CAIRN_INDEX must be embedded or milvus://host[:port][/database], got "${value}"`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`CAIRN_INDEX: "${value}" is not a valid milvus://host[:port][/database] URL`);
  }
  if (!url.hostname) throw new Error(`CAIRN_INDEX: "${value}" has no host`);
  if (url.username || url.password) throw new Error('CAIRN_INDEX must not hold credentials: put them in CAIRN_MILVUS_TOKEN');
  if (url.search || url.hash) throw new Error(`CAIRN_INDEX: "${value}" has a query or fragment; the form is milvus://host[:port][/database]`);
  const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || 'default';
  if (!DATABASE_NAME.test(database)) {
    throw new Error(`CAIRN_INDEX: "${database}" is not a Milvus database name (a letter or _, then letters, digits or _)`);
  }
  const port = url.port ? Number(url.port) : DEFAULT_MILVUS_PORT;
  if (port < 1) throw new Error(`CAIRN_INDEX: "${value}" has port 0; give the port Milvus listens on (default ${DEFAULT_MILVUS_PORT})`);
  return { kind: 'milvus', address: `${url.hostname}:${port}`, database, token };
}
