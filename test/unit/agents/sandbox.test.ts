import assert from 'node:assert/strict';
import { runCode, CodeExecError, pythonUnavailable, stopSandboxSpares, sandboxIsolation } from '../../../src/agents/io/sandbox/index.js';
import { businessOutput, checkType, inferActualType, renderContent } from '../../../src/agents/io/sandbox/contract.js';
import { loadConfig } from '../../../src/config.js';

const never = new AbortController().signal;
/** Generous time for calls that must succeed or fail for another reason (the machine may be busy). */
const limits = { timeoutMs: 15_000, memoryMb: 64 };
/** The time limit the endless-loop tests hit. */
const short = { timeoutMs: 2000, memoryMb: 64 };

async function fails(promise: Promise<unknown>, kind: CodeExecError['kind'], message: RegExp): Promise<CodeExecError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CodeExecError, `a CodeExecError, got ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    assert.match(err.message, message);
    return err;
  }
  assert.fail('the call succeeded');
}

describe('agents: CodeExec sandbox', function () {
  this.timeout(120_000);
  after(() => stopSandboxSpares());

  describe('output contract (RAGFlow)', () => {
    it('infers actual_type as RAGFlow names it', () => {
      assert.equal(inferActualType(null), 'Null');
      assert.equal(inferActualType(true), 'Boolean');
      assert.equal(inferActualType(1.5), 'Number');
      assert.equal(inferActualType('s'), 'String');
      assert.equal(inferActualType({ a: 1 }), 'Object');
      assert.equal(inferActualType([1, 2]), 'Array<Number>');
      assert.equal(inferActualType([1, 'a']), 'Array<Any>');
      assert.equal(inferActualType([]), 'Array<Any>');
    });

    it('renders content: strings as they are, null as "", objects as sorted indented JSON, booleans as Python prints them', () => {
      assert.equal(renderContent('x'), 'x');
      assert.equal(renderContent(null), '');
      assert.equal(renderContent(3), '3');
      assert.equal(renderContent(true), 'True');
      assert.equal(renderContent({ b: 1, a: [2] }), '{\n  "a": [\n    2\n  ],\n  "b": 1\n}');
    });

    it('the result output is the one declared output that is not a system one; result by default', () => {
      assert.deepEqual(businessOutput(undefined), { name: 'result', type: '' });
      assert.deepEqual(businessOutput({ result: { value: '', type: 'object' }, attachments: { type: 'Array<String>' } }), { name: 'result', type: 'object' });
      assert.deepEqual(businessOutput({ answer: { type: 'String' }, content: {} }), { name: 'answer', type: 'String' });
      assert.throws(() => businessOutput({ a: {}, b: {} }), /exactly one result output, found 2/);
    });

    it('checks the declared type, Array<T> item by item', () => {
      checkType('Array<Number>', [1, 2]);
      checkType('any', { x: 1 });
      checkType('', 'whatever');
      assert.throws(() => checkType('String', 3), /expected String, got Number/);
      assert.throws(() => checkType('Array<String>', ['a', 1]), /at \[1\]: expected String, got Number/);
    });

    it('reads the sandbox limits from the environment (60 s and 256 MB by default)', () => {
      assert.equal(loadConfig({}).sandboxTimeoutSec, 60);
      assert.equal(loadConfig({}).sandboxMemoryMb, 256);
      assert.equal(loadConfig({ CAIRN_SANDBOX_TIMEOUT: '5', CAIRN_SANDBOX_MEMORY_MB: '128' }).sandboxTimeoutSec, 5);
    });
  });

  describe('params', () => {
    it('refuses an unknown language and an empty script', async () => {
      await fails(runCode({ lang: 'ruby', script: 'def main; end' }, never, limits), 'params', /unsupported language 'ruby'/);
      await fails(runCode({ lang: 'python', script: '  ' }, never, limits), 'params', /script is empty/);
    });

    it('runs every child in a process locked down by Node’s permission model', () => {
      const isolation = sandboxIsolation();
      for (const layer of ['child process per call', 'Node permission model', 'no code generation from strings', 'heap limit', 'RSS watchdog']) assert.ok(isolation.includes(layer), layer);
    });
  });

  describe('JavaScript', () => {
    it('main(args) returns the result; RAGFlow outputs and the console output come back', async () => {
      const out = await runCode(
        { lang: 'javascript', script: 'function main({ a, b }) {\n  console.log("adding", a, b);\n  return { sum: a + b, items: [a, b] };\n}', arguments: { a: 2, b: 3 } },
        never,
        limits,
      );
      assert.deepEqual(out.result, { sum: 5, items: [2, 3] });
      assert.deepEqual(out.raw_result, out.result);
      assert.equal(out.actual_type, 'Object');
      assert.equal(out.content, '{\n  "items": [\n    2,\n    3\n  ],\n  "sum": 5\n}');
      assert.deepEqual(out.attachments, []);
      assert.equal(out.stdout, 'adding 2 3\n');
    });

    it('accepts nodejs as the language, an async arrow main, module.exports and export', async () => {
      assert.equal((await runCode({ lang: 'nodejs', script: 'const main = async (args) => args.x * 2;', arguments: { x: 21 } }, never, limits)).result, 42);
      assert.equal((await runCode({ lang: 'nodejs', script: 'async function run() { return "ok"; }\nmodule.exports = { main: run };' }, never, limits)).result, 'ok');
      assert.equal((await runCode({ lang: 'javascript', script: 'export function main() { return null; }' }, never, limits)).actual_type, 'Null');
    });

    it('a declared result output gets the value, checked against its type', async () => {
      const out = await runCode({ lang: 'javascript', script: 'function main() { return "hi"; }', outputs: { greeting: { type: 'String' } } }, never, limits);
      assert.equal(out.greeting, 'hi');
      await fails(runCode({ lang: 'javascript', script: 'function main() { return 1; }', outputs: { greeting: { type: 'String' } } }, never, limits), 'contract', /expected String, got Number/);
    });

    it('an exception names its type, message and line', async () => {
      await fails(runCode({ lang: 'javascript', script: 'function main() {\n  throw new TypeError("bad input");\n}' }, never, limits), 'script', /^CodeExec \(javascript\): TypeError: bad input \(main\.js, line 2\)$/);
      await fails(runCode({ lang: 'javascript', script: 'function main( {' }, never, limits), 'script', /SyntaxError/);
      await fails(runCode({ lang: 'javascript', script: 'function helper() { return 1; }' }, never, limits), 'script', /must define a function main/);
      await fails(runCode({ lang: 'javascript', script: 'function main() {}' }, never, limits), 'script', /main\(\) must return a value/);
    });

    it('an endless loop is stopped at the time limit', async () => {
      const started = Date.now();
      await fails(runCode({ lang: 'javascript', script: 'function main() { while (true) {} }' }, never, short), 'timeout', /^CodeExec: the script ran longer than 2 s and was stopped$/);
      assert.ok(Date.now() - started < 6000);
    });

    it('an endless loop in the top-level code is stopped at the time limit too', async () => {
      await fails(runCode({ lang: 'javascript', script: 'while (true) {}\nfunction main() { return 1; }' }, never, short), 'timeout', /^CodeExec: the script ran longer than 2 s and was stopped$/);
    });

    it('an endless asynchronous loop is stopped at the time limit too', async () => {
      await fails(runCode({ lang: 'javascript', script: 'async function main() { for (;;) await null; }' }, never, short), 'timeout', /ran longer than 2 s/);
    });

    it('a heap allocation bomb is stopped at the memory limit', async () => {
      await fails(runCode({ lang: 'javascript', script: 'function main() { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }' }, never, limits), 'memory', /^CodeExec: the script used more than 64 MB of memory and was stopped/);
    });

    it('an ArrayBuffer bomb (outside the V8 heap) is stopped at the memory limit', async () => {
      await fails(
        runCode({ lang: 'javascript', script: 'function main() { const a = []; for (;;) { const b = new Uint8Array(32 * 1024 * 1024); b.fill(1); a.push(b); } }' }, never, { timeoutMs: 10_000, memoryMb: 64 }),
        'memory',
        /used more than 64 MB/,
      );
    });

    it('has no file system: require("fs") fails with a clear message', async () => {
      await fails(runCode({ lang: 'javascript', script: 'function main() { return require("fs").readFileSync("/etc/passwd", "utf8"); }' }, never, limits), 'forbidden', /require\('fs'\) is not available in the sandbox/);
    });

    it('has no process: process fails with a clear message, also reached through a constructor', async () => {
      await fails(runCode({ lang: 'javascript', script: 'function main() { return process.env; }' }, never, limits), 'forbidden', /'process' is not available in the sandbox/);
      await fails(runCode({ lang: 'javascript', script: 'function main() { return this.constructor.constructor("return process")().pid; }' }, never, limits), 'forbidden', /'process' is not available/);
      await fails(runCode({ lang: 'javascript', script: 'function main() { return console.log.constructor("return process")().pid; }' }, never, limits), 'forbidden', /'process' is not available/);
    });

    it('has no network: fetch fails with a clear message', async () => {
      await fails(runCode({ lang: 'javascript', script: 'async function main() { return (await fetch("http://127.0.0.1:9/")).status; }' }, never, limits), 'forbidden', /fetch is not available in the sandbox/);
    });

    it('stops the child when the caller aborts', async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('cancelled by the run')), 300);
      const started = Date.now();
      await assert.rejects(runCode({ lang: 'javascript', script: 'function main() { while (true) {} }' }, ac.signal, { timeoutMs: 30_000, memoryMb: 64 }), { message: 'cancelled by the run' });
      assert.ok(Date.now() - started < 5000);
    });

    it('leaves the calling process healthy after the bombs', async () => {
      const before = process.memoryUsage().rss;
      await Promise.allSettled([
        runCode({ lang: 'javascript', script: 'function main() { const a = []; for (;;) a.push("x".repeat(1e6) + Math.random()); }' }, never, limits),
        runCode({ lang: 'javascript', script: 'function main() { while (true) {} }' }, never, { timeoutMs: 500, memoryMb: 64 }),
      ]);
      assert.ok(process.memoryUsage().rss - before < 100 * 1024 * 1024, 'the caller’s memory did not grow');
      assert.equal((await runCode({ lang: 'javascript', script: 'function main() { return "still fine"; }' }, never, limits)).result, 'still fine');
    });
  });

  describe('Python (Pyodide)', () => {
    // pyodide is a dependency: when it cannot load, these tests fail (they never skip).
    before(async function () {
      this.timeout(60_000);
      // The first call of a process prepares Pyodide's memory snapshot (a few seconds).
      await runCode({ lang: 'python', script: 'def main():\n    return 1' }, never, { timeoutMs: 30_000, memoryMb: 64 });
    });

    it('is available: the pyodide package works offline from node_modules', () => {
      assert.equal(pythonUnavailable(), '');
    });

    it('main(**arguments) returns the result; print output comes back', async () => {
      const out = await runCode(
        { lang: 'python', script: 'def main(arg1: str, arg2: str) -> dict:\n    print("joining", arg1, arg2)\n    return {"result": arg1 + arg2}', arguments: { arg1: 'a', arg2: 'b' } },
        never,
        limits,
      );
      assert.deepEqual(out.result, { result: 'ab' });
      assert.equal(out.actual_type, 'Object');
      assert.equal(out.content, '{\n  "result": "ab"\n}');
      assert.equal(out.stdout, 'joining a b\n');
    });

    it('accepts python3, an async main, the standard library, tuples as lists', async () => {
      const out = await runCode(
        { lang: 'python3', script: 'import asyncio, json, re\nasync def main(text):\n    await asyncio.sleep(0)\n    return (len(re.findall(r"\\w+", text)), json.dumps([1]))', arguments: { text: 'two words' } },
        never,
        limits,
      );
      assert.deepEqual(out.result, [2, '[1]']);
      assert.equal(out.actual_type, 'Array<Any>');
    });

    it('an exception names its type, message and line', async () => {
      await fails(runCode({ lang: 'python', script: 'def main():\n    x = 1\n    return x / 0' }, never, limits), 'script', /^CodeExec \(python\): ZeroDivisionError: division by zero \(main\.py, line 3\)$/);
      await fails(runCode({ lang: 'python', script: 'def helper():\n    return 1' }, never, limits), 'script', /must define a function main/);
      await fails(runCode({ lang: 'python', script: 'def main():\n    return {1, 2}' }, never, limits), 'script', /not JSON-serializable/);
    });

    it('a message over several lines is kept whole; a missing package is named, with what the sandbox has (not how to install it)', async () => {
      await fails(runCode({ lang: 'python', script: 'def main():\n    raise ValueError("bad\\nthing")' }, never, limits), 'script', /^CodeExec \(python\): ValueError: bad thing \(main\.py, line 2\)$/);
      await fails(
        runCode({ lang: 'python', script: 'import pandas\ndef main():\n    return 1' }, never, limits),
        'script',
        /^CodeExec \(python\): ModuleNotFoundError: No module named 'pandas' \(main\.py, line 1\) — the sandbox’s Python has its standard library only$/,
      );
    });

    it('an endless loop is stopped at the time limit', async () => {
      await fails(runCode({ lang: 'python', script: 'def main():\n    while True:\n        pass' }, never, short), 'timeout', /^CodeExec: the script ran longer than 2 s and was stopped$/);
    });

    it('an allocation bomb is stopped at the memory limit', async () => {
      await fails(runCode({ lang: 'python', script: 'def main():\n    return len(bytearray(1024 * 1024 * 1024))' }, never, limits), 'memory', /^CodeExec: the script used more than 64 MB of memory and was stopped/);
      await fails(runCode({ lang: 'python', script: 'def main():\n    l = []\n    while True:\n        l.append("x" * 1000000)' }, never, limits), 'memory', /used more than 64 MB/);
    });

    it('has no processes: os.system and subprocess fail with a clear message', async () => {
      await fails(runCode({ lang: 'python', script: 'import os\ndef main():\n    return os.system("id")' }, never, limits), 'forbidden', /os\.system is not available in the sandbox/);
      await assert.rejects(runCode({ lang: 'python', script: 'import subprocess\ndef main():\n    return subprocess.run(["id"]).returncode' }, never, limits), CodeExecError);
    });

    it('has no bridge to JavaScript: import js fails with a clear message', async () => {
      await fails(runCode({ lang: 'python', script: 'import js\ndef main():\n    return 1' }, never, limits), 'forbidden', /module 'js' is not available in the sandbox/);
      await fails(runCode({ lang: 'python', script: 'def main():\n    import pyodide_js\n    return 1' }, never, limits), 'forbidden', /module 'pyodide_js' is not available/);
    });

    it('has no network: opening a socket fails with a clear message', async () => {
      await fails(
        runCode({ lang: 'python', script: 'import socket\ndef main():\n    s = socket.socket()\n    s.connect(("127.0.0.1", 9))' }, never, limits),
        'forbidden',
        /network access \(socket\.connect\) is not available in the sandbox/,
      );
      await fails(runCode({ lang: 'python', script: 'import urllib.request\ndef main():\n    return urllib.request.urlopen("http://127.0.0.1:9/").read()' }, never, limits), 'forbidden', /network access/);
    });

    it('has no host file system: /etc/passwd is not there', async () => {
      await fails(runCode({ lang: 'python', script: 'def main():\n    return open("/etc/passwd").read()' }, never, limits), 'script', /FileNotFoundError.*no access to the host’s files/);
    });

    it('leaves the calling process healthy after the bombs', async () => {
      assert.equal((await runCode({ lang: 'python', script: 'def main():\n    return "still fine"' }, never, limits)).result, 'still fine');
    });
  });
});
