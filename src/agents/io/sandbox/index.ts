import type { Outputs } from '../../dsl.js';
import { businessOutput, checkType, ContractError, inferActualType, renderContent } from './contract.js';
import { SandboxFailure, runInSandbox, type SandboxLang } from './runner.js';

export { pythonUnavailable, sandboxIsolation, stopSandboxSpares } from './runner.js';

/** RAGFlow's CodeExec params (agent/tools/code_exec.py CodeExecParam), `arguments` already resolved. */
export interface CodeExecParams {
  /** python | python3 | javascript | nodejs (RAGFlow's names); default python. */
  lang?: string;
  /** Must define `main`: `def main(**kwargs)` in Python, `function main(args)` in JavaScript. */
  script?: string;
  /** Argument name -> value (the caller resolves RAGFlow's references first). */
  arguments?: Record<string, unknown> | string;
  /** The component's declared outputs: names the result output and its expected type (RAGFlow's contract). */
  outputs?: Record<string, unknown>;
}

export interface CodeLimits {
  /** Wall-clock limit of one run of the script. */
  timeoutMs: number;
  /** Memory limit of the script (V8 heap for JavaScript, interpreter memory for Python). */
  memoryMb: number;
  /** Keep one started Python runtime ready after a Python call (CAIRN_SANDBOX_WARM). */
  keepWarm: boolean;
}

export const DEFAULT_CODE_LIMITS: CodeLimits = { timeoutMs: 60_000, memoryMb: 256, keepWarm: true };

export type CodeErrorKind = 'script' | 'timeout' | 'memory' | 'forbidden' | 'unavailable' | 'contract' | 'params' | 'crashed';

/** A CodeExec call that failed; `message` is what the canvas shows as the component's error. */
export class CodeExecError extends Error {
  override name = 'CodeExecError';
  constructor(
    readonly kind: CodeErrorKind,
    message: string,
    /** What the script printed before it failed. */
    readonly stdout = '',
  ) {
    super(message);
  }
}

export function normalizeLang(lang: unknown): SandboxLang {
  const l = String(lang ?? 'python').trim().toLowerCase();
  if (l === 'python' || l === 'python3' || l === 'py') return 'python';
  if (l === 'javascript' || l === 'nodejs' || l === 'node' || l === 'js') return 'javascript';
  throw new CodeExecError('params', `CodeExec: unsupported language '${String(lang)}' (use python or javascript)`);
}

/**
 * Runs a CodeExec component: `main` of the script in a sandbox of its own (a child process with no
 * file system, network or process access, a time limit and a memory limit). Resolves with RAGFlow's
 * outputs: the result output (default `result`), `content`, `raw_result`, `actual_type`, `attachments`
 * (always [] : the sandbox has no files), and Cairn's `stdout` (what the script printed). Rejects with a
 * CodeExecError whose message names the cause; the calling process is never at risk.
 */
export async function runCode(params: CodeExecParams, signal: AbortSignal, limits: Partial<CodeLimits> = {}): Promise<Outputs> {
  const lang = normalizeLang(params.lang);
  const script = String(params.script ?? '');
  if (!script.trim()) throw new CodeExecError('params', 'CodeExec: the script is empty (it must define main)');
  const args = argumentsOf(params.arguments);
  const { name: resultName, type: resultType } = contract(() => businessOutput(params.outputs));
  const timeoutMs = positive(limits.timeoutMs, DEFAULT_CODE_LIMITS.timeoutMs);
  const memoryMb = Math.max(16, positive(limits.memoryMb, DEFAULT_CODE_LIMITS.memoryMb));

  let reply;
  try {
    reply = await runInSandbox({ lang, script, argsJson: JSON.stringify(args) }, { timeoutMs, memoryMb, keepWarm: limits.keepWarm ?? DEFAULT_CODE_LIMITS.keepWarm }, signal);
  } catch (err) {
    if (err instanceof SandboxFailure) throw new CodeExecError(err.kind === 'crashed' && /refuses/.test(err.message) ? 'forbidden' : err.kind, err.message);
    throw err;
  }
  if (!reply.ok && reply.error.name === 'SandboxTimeout') throw new CodeExecError('timeout', `CodeExec: the script ran longer than ${timeoutMs / 1000} s and was stopped`, reply.stdout);
  if (!reply.ok) throw scriptError(lang, reply.error, memoryMb, reply.stdout);

  const value = (JSON.parse(reply.json) as { value: unknown }).value ?? null;
  contract(() => checkType(resultType, value), reply.stdout);
  return {
    [resultName]: value,
    content: renderContent(value),
    raw_result: value,
    actual_type: inferActualType(value),
    attachments: [],
    stdout: reply.stdout,
  };
}

function contract<T>(check: () => T, stdout = ''): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ContractError) throw new CodeExecError('contract', err.message, stdout);
    throw err;
  }
}

function argumentsOf(raw: CodeExecParams['arguments']): Record<string, unknown> {
  let value: unknown = raw ?? {};
  if (typeof value === 'string') {
    try {
      value = value.trim() ? JSON.parse(value) : {};
    } catch {
      throw new CodeExecError('params', 'CodeExec: arguments must be an object of name -> value');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new CodeExecError('params', 'CodeExec: arguments must be an object of name -> value');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = v === undefined ? null : v;
  try {
    JSON.stringify(out);
  } catch {
    throw new CodeExecError('params', 'CodeExec: arguments must be JSON values');
  }
  return out;
}

function positive(v: number | undefined, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback;
}

const LANG_NAME: Record<SandboxLang, string> = { python: 'python', javascript: 'javascript' };

function scriptError(lang: SandboxLang, error: { name: string; message: string; detail?: string }, memoryMb: number, stdout: string): CodeExecError {
  const where = error.detail ? ` (${error.detail})` : '';
  if (error.name === 'MemoryError' || (error.name === 'RangeError' && /allocation failed|Invalid array length|Invalid typed array length|out of memory/i.test(error.message))) {
    return new CodeExecError('memory', `CodeExec: the script used more than ${memoryMb} MB of memory and was stopped (${error.name}${error.message ? `: ${error.message}` : ''})`, stdout);
  }
  const forbidden = /is not available in the sandbox/.test(error.message);
  let message = `CodeExec (${LANG_NAME[lang]}): ${error.name}${error.message ? `: ${error.message}` : ''}${where}`;
  if (!forbidden && lang === 'python' && /^(FileNotFoundError|PermissionError|IsADirectoryError|NotADirectoryError|OSError)$/.test(error.name) && /No such file|directory|Errno 44|Errno 2\b/.test(error.message)) {
    message += ' — the sandbox has no access to the host\u2019s files';
  }
  if (lang === 'python' && error.name === 'ModuleNotFoundError') message += ' — the sandbox\u2019s Python has its standard library only';
  return new CodeExecError(forbidden ? 'forbidden' : 'script', message, stdout);
}
