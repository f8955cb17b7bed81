/**
 * CodeExec as an Agent's tool: the function the model sees (RAGFlow's `execute_code`: it writes `lang` and
 * `script`) and how its call becomes a sandbox job. The job runs in the same sandbox as the CodeExec
 * component (a child process per call; see ./sandbox), through the runner's `runCode` dependency.
 */
import type { Outputs } from '../dsl.js';
import type { ToolSpec } from '../../models/types.js';
import type { CodeExecParams } from './sandbox/index.js';

/** RAGFlow's function name of the CodeExec tool. */
export const CODE_TOOL_NAME = 'execute_code';

const CODE_TOOL_DESCRIPTION =
  "Runs a Python or JavaScript script in a sandbox and returns, as JSON, the value its main function returned ('result') and what it printed ('stdout'). " +
  'The script MUST define main: `def main(**kwargs)` in Python, `function main(args)` in JavaScript; main returns a JSON value (string, number, boolean, object, array or null). ' +
  'Use it for any calculation instead of working the numbers out yourself. Python has its standard library only; the sandbox has no network and no files.';

/** The function offered to the model; the tool's configured argument names are offered as parameters too. */
export function codeToolSpec(name: string, params: Record<string, unknown>): ToolSpec {
  const configured = Object.keys(configuredArguments(params));
  const properties: Record<string, unknown> = {
    lang: { type: 'string', enum: ['python', 'javascript'], description: 'The language of the script.' },
    script: { type: 'string', description: 'The code; it must define main.' },
    arguments: { type: 'object', description: "Keyword arguments for main (name -> JSON value)." },
  };
  for (const arg of configured) properties[arg] = { description: `The value of main's argument '${arg}' (overrides the configured one).` };
  return { name, description: String(params.description || CODE_TOOL_DESCRIPTION), parameters: { type: 'object', properties, required: ['lang', 'script'] } };
}

/**
 * The sandbox job of a call: the model's `lang` and `script` (else the tool's own), and main's arguments:
 * the tool's configured ones (already resolved by the interpreter), overridden by the call's `arguments`
 * object and, as RAGFlow does, by a call argument of the same name.
 */
export function codeJobOf(args: Record<string, unknown>, params: Record<string, unknown>): CodeExecParams {
  const mainArgs: Record<string, unknown> = { ...configuredArguments(params) };
  if (args.arguments !== undefined) {
    if (!args.arguments || typeof args.arguments !== 'object' || Array.isArray(args.arguments)) throw new Error("execute_code: 'arguments' must be an object of name -> value");
    Object.assign(mainArgs, args.arguments);
  }
  for (const key of Object.keys(configuredArguments(params))) if (args[key] !== undefined && args[key] !== '') mainArgs[key] = args[key];
  return {
    lang: String(args.lang ?? params.lang ?? 'python'),
    script: String(args.script ?? params.script ?? ''),
    arguments: mainArgs,
    outputs: params.outputs && typeof params.outputs === 'object' ? (params.outputs as Record<string, unknown>) : undefined,
  };
}

/** What the model reads back: main's value and, when the script printed something, its output. */
export function codeToolResult(outputs: Outputs): string {
  const stdout = String(outputs.stdout ?? '');
  return JSON.stringify({ result: outputs.raw_result ?? null, ...(stdout ? { stdout } : {}) });
}

function configuredArguments(params: Record<string, unknown>): Record<string, unknown> {
  const raw = params.arguments;
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}
