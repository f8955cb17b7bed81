// Entry of one CodeExec sandbox process (plain JavaScript: it must load without tsx, whose loader would
// need file-system reads and a child process that the permission model refuses).
//
// runner.ts starts one such process per call, with Node's permission model on (file reads only of this
// file and of the Pyodide package; no writes, child processes, workers, WASI, inspector or addons),
// `--disallow-code-generation-from-strings`, a V8 heap limit, an empty environment and, where the
// system allows, its own empty network namespace. This file locks the process down further before any
// script runs, then talks to the runner over the IPC channel:
//   child -> parent  {type: 'ready'}                      runtime loaded, waiting for the job
//   parent -> child  {type: 'job', script, argsJson, timeoutMs}
//   child -> parent  {type: 'done', ok: true, json, stdout} | {type: 'done', ok: false, error: {name, message, detail}, stdout}
// A script never gets a reference to anything of this file: JavaScript runs in a node:vm context that
// receives only strings; Python runs in Pyodide with no `js` module and no JavaScript globals.

import vm from 'node:vm';
import net from 'node:net';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { createRequire } from 'node:module';
import { constants as fsConstants, readFileSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';

/** @type {{lang: 'javascript' | 'python', pyodideDir?: string, snapshot?: string, makeSnapshot?: string, wasmMaxMb?: number, maxOutput: number, maxResult: number}} */
const config = JSON.parse(process.argv[2] ?? '{}');
const send = process.send.bind(process);
process.on('disconnect', () => process.exit(0));

const NO_ACCESS = 'is not available in the sandbox: scripts run without file system, network or process access';


/** Removes what the permission model of Node 20 leaves open: the network, signals to other processes, bindings. */
function lockDown() {
  const deny = (what) =>
    function denied() {
      throw Object.assign(new Error(`${what} ${NO_ACCESS}`), { code: 'ERR_SANDBOX' });
    };
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest']) delete globalThis[name];
  net.connect = net.createConnection = deny('net.connect');
  net.Socket.prototype.connect = deny('net.Socket.connect');
  net.Server.prototype.listen = deny('net.Server.listen');
  dgram.createSocket = deny('dgram.createSocket');
  for (const m of ['bind', 'connect', 'send']) dgram.Socket.prototype[m] = deny(`dgram.Socket.${m}`);
  for (const target of [dns, dns.promises, dns.Resolver.prototype, dns.promises.Resolver.prototype]) {
    for (const key of Object.getOwnPropertyNames(target)) {
      if (/^(lookup|lookupService|resolve\w*|reverse)$/.test(key) && typeof target[key] === 'function') target[key] = deny(`dns.${key}`);
    }
  }
  // Pyodide reads the fs constants through process.binding at start (the permission model refuses the real one).
  process.binding = (name) => {
    if (name === 'constants') return { fs: fsConstants, os: osConstants };
    throw new Error(`process.binding('${name}') ${NO_ACCESS}`);
  };
  for (const name of ['kill', '_linkedBinding', 'dlopen', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', 'chdir']) {
    if (typeof process[name] === 'function') process[name] = deny(`process.${name}`);
  }
  delete process.getBuiltinModule;
}

// ---------------------------------------------------------------------------------------------------
// JavaScript: node:vm context with nothing of this realm in it.

/** Runs inside the context before the script. Keeps its own references to what the script might overwrite. */
const JS_BOOTSTRAP = `(() => {
  'use strict';
  const g = globalThis;
  const stringify = JSON.stringify, parse = JSON.parse, S = String, isArray = Array.isArray;
  const MAX_OUTPUT = __MAX_OUTPUT__;
  let out = '';
  let truncated = false;
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const j = stringify(v); return j === undefined ? S(v) : j; } catch (e) { try { return S(v); } catch (e2) { return '[value]'; } }
  };
  const write = (args) => {
    if (truncated) return;
    let line = '';
    for (let i = 0; i < args.length; i++) line += (i ? ' ' : '') + show(args[i]);
    line += '\\n';
    if (out.length + line.length > MAX_OUTPUT) { out += line.slice(0, MAX_OUTPUT - out.length); truncated = true; } else out += line;
  };
  const log = (...args) => write(args);
  const con = { log, info: log, debug: log, warn: log, error: log, trace: log, dir: log };
  const unavailable = (what) => { const e = new Error(what + ' ${NO_ACCESS}'); e.name = 'SandboxError'; return e; };
  const require = (name) => { throw unavailable("require('" + S(name) + "')"); };
  const fetch = () => Promise.reject(unavailable('fetch'));
  const module = { exports: {} };
  const define = (name, value) => Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
  define('console', con);
  define('require', require);
  define('fetch', fetch);
  define('module', module);
  define('exports', module.exports);
  const describe = (err) => {
    try {
      if (err && typeof err === 'object') {
        let name = S(err.name || 'Error'), message = S(err.message ?? '');
        const missing = err instanceof ReferenceError && /^(\\w+) is not defined$/.exec(message);
        if (missing && /^(process|Buffer|global|setTimeout|setInterval|setImmediate|queueMicrotask|WebSocket|XMLHttpRequest|__dirname|__filename|TextEncoder|TextDecoder|URL|crypto)$/.test(missing[1])) {
          message = "'" + missing[1] + "' ${NO_ACCESS}";
        }
        const stack = typeof err.stack === 'string' ? err.stack : '';
        const at = /main\\.js:(\\d+)(?::(\\d+))?/.exec(stack);
        return stringify({ name, message, detail: at ? 'main.js, line ' + at[1] : '' });
      }
      return stringify({ name: 'Error', message: 'the script threw ' + show(err), detail: '' });
    } catch (e) {
      return stringify({ name: 'Error', message: 'the script threw a value that cannot be shown', detail: '' });
    }
  };
  const run = async (argsJson) => {
    try {
      const main = typeof g.main === 'function' ? g.main
        : typeof module.exports === 'function' ? module.exports
        : module.exports && typeof module.exports.main === 'function' ? module.exports.main
        : g.exports && typeof g.exports.main === 'function' ? g.exports.main
        : undefined;
      if (!main) return stringify({ error: { name: 'Error', message: 'the script must define a function main(args) (or set module.exports = { main })', detail: '' } });
      const value = await main(parse(argsJson));
      if (value === undefined) return stringify({ error: { name: 'Error', message: 'main() must return a value (use null for an empty result)', detail: '' } });
      const json = stringify({ value });
      if (json === undefined) return stringify({ error: { name: 'Error', message: 'main() returned a value that is not JSON-serializable', detail: '' } });
      return json;
    } catch (err) {
      return '{"error":' + describe(err) + '}';
    }
  };
  return { run, describe, output: () => out, truncated: () => truncated };
})()`;

/** The script's lexical \`main\` (const/let at the top level is not a property of the global object). */
const JS_FIND_MAIN = `typeof main === 'function' && typeof globalThis.main !== 'function' ? Object.defineProperty(globalThis, 'main', { value: main, configurable: true }) : undefined; undefined`;

function javascriptRunner() {
  return async (job) => {
    const context = vm.createContext(Object.create(null), { name: 'CodeExec', codeGeneration: { strings: true, wasm: false } });
    const boot = new vm.Script(JS_BOOTSTRAP.replace('__MAX_OUTPUT__', String(config.maxOutput)), { filename: 'cairn-bootstrap.js' }).runInContext(context);
    const run = boot.run;
    const describe = boot.describe;
    const output = boot.output;
    const then = vm.runInContext('Promise.prototype.then', context);
    const stdout = () => String(output()).slice(0, config.maxOutput);
    // The runner's kill timer is the time limit; V8's own timeout (a little later) only backs it up.
    const timeout = job.timeoutMs + 500;
    try {
      const script = new vm.Script(stripExports(String(job.script)), { filename: 'main.js' });
      script.runInContext(context, { timeout, breakOnSigint: false });
      new vm.Script(JS_FIND_MAIN, { filename: 'cairn-main.js' }).runInContext(context, { timeout });
    } catch (err) {
      if (err?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { ok: false, error: { name: 'SandboxTimeout', message: '', detail: '' }, stdout: stdout() };
      return { ok: false, error: parseError(describeSafely(describe, err)), stdout: stdout() };
    }
    const json = await new Promise((resolve) => {
      // The context's own `then`, taken before the script ran: the script cannot intercept the result.
      Reflect.apply(then, run(String(job.argsJson)), [resolve, () => resolve('{"error":{"name":"Error","message":"the script failed","detail":""}}')]);
    });
    const text = typeof json === 'string' ? json : '{"error":{"name":"Error","message":"the script did not produce a result","detail":""}}';
    if (text.length > config.maxResult) return { ok: false, error: { name: 'Error', message: `the result is larger than ${config.maxResult} bytes`, detail: '' }, stdout: stdout() };
    const parsed = JSON.parse(text);
    if (parsed.error) return { ok: false, error: parsed.error, stdout: stdout() };
    return { ok: true, json: text, stdout: stdout() };
  };
}

function describeSafely(describe, err) {
  try {
    const text = describe(err);
    return typeof text === 'string' ? text : '';
  } catch {
    return '';
  }
}

function parseError(text) {
  try {
    const e = JSON.parse(text);
    return { name: String(e.name), message: String(e.message), detail: String(e.detail ?? '') };
  } catch {
    return { name: 'Error', message: 'the script failed', detail: '' };
  }
}

/** `export function main` / `export default main` are accepted as if the file were a module. */
function stripExports(code) {
  return code
    .replace(/^(\s*)export\s+default\s+(?=(?:async\s+)?function\b|class\b)/gm, '$1')
    .replace(/^(\s*)export\s+(?=(?:async\s+)?function\b|const\b|let\b|var\b|class\b)/gm, '$1')
    .replace(/^\s*export\s*(?:default\s+[\w$]+|\{[^}]*\})\s*;?\s*$/gm, '');
}

// ---------------------------------------------------------------------------------------------------
// Python: Pyodide (CPython compiled to WebAssembly), linear memory capped, no bridge to JavaScript.

/** Runs once after the runtime loads, before the script: blocks the bridges to JavaScript, processes, sockets. */
const PY_SETUP = `
import sys, os as _os, posix as _posix, json as _json, inspect as _inspect
_NO_ACCESS = "${NO_ACCESS}"
_BLOCKED = {'js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip', 'pyodide_http', 'ctypes', '_ctypes'}

class _CairnBlocker:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split('.')[0] in _BLOCKED:
            raise ImportError(f"module '{name}' {_NO_ACCESS}", name=name)
        return None

for _m in list(sys.modules):
    if _m.split('.')[0] in _BLOCKED:
        del sys.modules[_m]
sys.meta_path.insert(0, _CairnBlocker)

def _cairn_deny(what, error=PermissionError):
    def denied(*args, **kwargs):
        raise error(f"{what} {_NO_ACCESS}")
    denied.__name__ = what.rsplit('.', 1)[-1]
    return denied

for _n in ('system', 'popen', 'fork', 'forkpty', 'kill', 'killpg', 'posix_spawn', 'posix_spawnp', 'execv', 'execve',
           'execl', 'execle', 'execlp', 'execlpe', 'execvp', 'execvpe', 'spawnl', 'spawnle', 'spawnlp', 'spawnlpe',
           'spawnv', 'spawnve', 'spawnvp', 'spawnvpe'):
    for _mod in (_os, _posix):
        if hasattr(_mod, _n):
            setattr(_mod, _n, _cairn_deny('os.' + _n))

import socket as _socket
for _n in ('connect', 'connect_ex', 'bind', 'listen', 'sendto', 'sendmsg'):
    setattr(_socket.socket, _n, _cairn_deny('network access (socket.' + _n + ')', OSError))
for _n in ('create_connection', 'create_server', 'getaddrinfo', 'gethostbyname', 'gethostbyname_ex', 'gethostbyaddr'):
    setattr(_socket, _n, _cairn_deny('network access (socket.' + _n + ')', OSError))
del _n, _mod, _m

async def _cairn_call(namespace, args_json):
    main = namespace.get('main')
    if not callable(main):
        raise NameError("the script must define a function main(**arguments)")
    result = main(**_json.loads(args_json))
    if _inspect.isawaitable(result):
        result = await result
    try:
        return _json.dumps({"value": result}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError(f"main() returned a value that is not JSON-serializable ({e})") from None
`;

function loadPyodideModule() {
  const require = createRequire(`${config.pyodideDir}/`);
  return require(`${config.pyodideDir}/pyodide.js`);
}

/** Caps the maximum of the WebAssembly memory Pyodide's module declares (it exports its own memory). */
function capWasmInstantiate(maxMb) {
  const pages = Math.max(1, Math.floor(maxMb * 16));
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = function (source, imports) {
    return instantiate.call(this, source instanceof WebAssembly.Module ? source : capWasmMemory(source, pages), imports);
  };
}

/** Rewrites the memory section of a wasm binary so that every memory's maximum is at most `maxPages`. */
function capWasmMemory(input, maxPages) {
  const b = ArrayBuffer.isView(input) ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength) : input instanceof ArrayBuffer ? new Uint8Array(input) : null;
  if (!b || b.length < 8 || b[0] !== 0 || b[1] !== 0x61 || b[2] !== 0x73 || b[3] !== 0x6d) return input;
  const leb = (at) => {
    let v = 0;
    let shift = 0;
    let byte;
    do {
      byte = b[at++];
      v += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return [v, at];
  };
  const enc = (v) => {
    const out = [];
    do {
      let byte = v % 128;
      v = Math.floor(v / 128);
      if (v) byte |= 0x80;
      out.push(byte);
    } while (v);
    return out;
  };
  let p = 8;
  while (p < b.length) {
    const id = b[p];
    const [size, start] = leb(p + 1);
    if (id === 5) {
      let [count, r] = leb(start);
      const body = enc(count);
      for (let i = 0; i < count; i++) {
        const flags = b[r++];
        if (flags & 4) return input; // memory64: not Pyodide's
        let min;
        let max;
        [min, r] = leb(r);
        if (flags & 1) [max, r] = leb(r);
        body.push(flags | 1, ...enc(min), ...enc(Math.max(min, Math.min(max ?? Infinity, maxPages))));
      }
      const sizeBytes = enc(body.length);
      const out = new Uint8Array(p + 1 + sizeBytes.length + body.length + (b.length - start - size));
      out.set(b.subarray(0, p), 0);
      out[p] = 5;
      out.set(sizeBytes, p + 1);
      out.set(body, p + 1 + sizeBytes.length);
      out.set(b.subarray(start + size), p + 1 + sizeBytes.length + body.length);
      return out;
    }
    p = start + size;
  }
  return input;
}

async function makeSnapshot() {
  const { loadPyodide } = loadPyodideModule();
  const py = await loadPyodide({ indexURL: `${config.pyodideDir}/`, _makeSnapshot: true, stdout: () => {}, stderr: () => {} });
  writeFileSync(config.makeSnapshot, py.makeMemorySnapshot());
  send({ type: 'snapshot' }, () => process.exit(0));
}

async function pythonRunner() {
  if (config.wasmMaxMb) capWasmInstantiate(config.wasmMaxMb);
  const { loadPyodide } = loadPyodideModule();
  let out = '';
  const write = (s) => {
    if (out.length < config.maxOutput) out += `${s}\n`.slice(0, config.maxOutput - out.length);
  };
  const py = await loadPyodide({
    indexURL: `${config.pyodideDir}/`,
    jsglobals: Object.create(null),
    env: { HOME: '/home/pyodide' },
    stdout: write,
    stderr: write,
    ...(config.snapshot ? { _loadSnapshot: readFileSync(config.snapshot) } : {}),
  });
  py.runPython(PY_SETUP, { filename: 'cairn-setup.py' });
  // The importer of `js` / `pyodide_js` stays reachable from Python (sys.meta_path): empty it.
  for (const name of ['js', 'pyodide_js']) {
    try {
      py.unregisterJsModule(name);
    } catch {
      /* not registered */
    }
  }
  const call = py.globals.get('_cairn_call');
  const dict = py.globals.get('dict');
  return async (job) => {
    const namespace = dict();
    namespace.set('__name__', '__main__');
    namespace.set('__builtins__', py.globals.get('__builtins__'));
    try {
      await py.runPythonAsync(String(job.script), { globals: namespace, filename: 'main.py' });
      const helper = dict();
      helper.set('_call', call);
      helper.set('_namespace', namespace);
      helper.set('_args', String(job.argsJson));
      const json = await py.runPythonAsync('await _call(_namespace, _args)', { globals: helper, filename: 'cairn-call.py' });
      const text = String(json);
      if (text.length > config.maxResult) return { ok: false, error: { name: 'Error', message: `the result is larger than ${config.maxResult} bytes`, detail: '' }, stdout: out };
      return { ok: true, json: text, stdout: out };
    } catch (err) {
      return { ok: false, error: pythonError(err), stdout: out };
    }
  };
}

/**
 * The exception of a Python traceback (`Type: message`, its message lines joined) and the script line it
 * points at. A message may run over several lines (Pyodide's ModuleNotFoundError does), so the exception
 * is the last line naming an exception type (…Error, …Exception, …); failing that, the last line.
 */
function pythonError(err) {
  const text = String(err?.message ?? err);
  const lines = text.trim().split('\n');
  let detail = '';
  for (const line of lines) {
    const at = /File "main\.py", line (\d+)/.exec(line);
    if (at) detail = `main.py, line ${at[1]}`;
  }
  const exception = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Group))(?::\s?(.*))?$/;
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = exception.exec(lines[i]);
    if (!m) continue;
    // Pyodide explains how to install a missing package: the sandbox cannot, so only the first line counts.
    const rest = m[1] === 'ModuleNotFoundError' ? [] : lines.slice(i + 1);
    const message = [m[2] ?? '', ...rest].map((l) => l.trim()).filter(Boolean).join(' ');
    return { name: m[1], message, detail };
  }
  const last = lines[lines.length - 1] ?? 'Error';
  const m = /^([\w.]+)(?::\s?(.*))?$/.exec(last);
  return m ? { name: m[1], message: m[2] ?? '', detail } : { name: 'Error', message: last, detail };
}

// ---------------------------------------------------------------------------------------------------

lockDown();
if (config.makeSnapshot) await makeSnapshot();
else {
  const runner = config.lang === 'python' ? await pythonRunner() : javascriptRunner();
  process.once('message', async (job) => {
    let reply;
    try {
      reply = await runner(job);
    } catch (err) {
      reply = { ok: false, error: { name: 'SandboxError', message: err instanceof Error ? err.message : String(err) }, stdout: '' };
    }
    send({ type: 'done', ...reply }, () => process.exit(0));
  });
  send({ type: 'ready' });
}
