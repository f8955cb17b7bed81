import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** The files of scripts/test.sh's SCALE_OUT_CONFORMANCE array. */
function scriptList(): string[] {
  const block = /^SCALE_OUT_CONFORMANCE=\(\n([\s\S]*?)\n\)/m.exec(read('scripts/test.sh'));
  assert.ok(block, 'scripts/test.sh declares SCALE_OUT_CONFORMANCE=( … )');
  return block[1]!.split('\n').map((line) => line.trim()).filter(Boolean);
}

/** The files named in the first column of docs/scale-out.md's conformance table. */
function documentedList(): string[] {
  const doc = read('docs/scale-out.md');
  const start = doc.indexOf('### The conformance run in `make test`');
  assert.ok(start >= 0, 'docs/scale-out.md has the section');
  // From the heading to the next heading.
  const rest = doc.slice(doc.indexOf('\n', start));
  const end = rest.search(/^#{2,3} /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => `test/integration/${m[1]}.test.ts`);
}

describe('the scale-out conformance run of make test', () => {
  it('runs exactly the files docs/scale-out.md lists and explains', () => {
    const listed = scriptList();
    assert.ok(listed.length > 0);
    assert.deepEqual([...listed].sort(), [...documentedList()].sort());
  });

  it('names only integration test files that exist, each once', () => {
    const listed = scriptList();
    assert.equal(new Set(listed).size, listed.length);
    for (const file of listed) {
      assert.match(file, /^test\/integration\/[a-z-]+\.test\.ts$/);
      assert.ok(fs.existsSync(path.join(root, file)), `${file} exists`);
    }
  });
});
