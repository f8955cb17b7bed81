import assert from 'node:assert/strict';
import { CorruptFileError, extract } from '../../../src/parsing/index.js';
import { makeHtml, makeMarkdown, SAMPLE_TABLE } from '../../fixtures/generate.js';

const brief = (sections: { kind: string; level?: number; text: string }[]) => sections.map((s) => [s.kind, s.level, s.text]);

describe('parsing: HTML and Markdown', () => {
  it('HTML: headings, paragraphs, nested lists, tables and pre; scripts and styles dropped', async () => {
    const doc = await extract(await makeHtml(), 'handbook.html');
    assert.equal(doc.meta.title, 'Harbor Handbook');
    assert.deepEqual(brief(doc.sections), [
      ['title', 1, 'Harbor Handbook'],
      ['text', undefined, 'The harbor opens at six in the morning & closes at dusk.'],
      ['title', 2, 'Rules'],
      ['text', undefined, '- Keep the jetty clear\n- Report damage\n  - to the harbor master'],
      ['table', undefined, SAMPLE_TABLE.map((r) => r.join(' | ')).join('\n')],
      ['code', undefined, 'moor --boat kestrel\n  --berth 7'],
      ['text', undefined, 'Closing note\nsecond line'],
    ]);
    assert.deepEqual(doc.sections[4].rows, SAMPLE_TABLE);
    const all = doc.sections.map((s) => s.text).join('\n');
    assert.ok(!all.includes('SCRIPT_TEXT_MUST_NOT_APPEAR') && !all.includes('color: red'));
  });

  it('Markdown: headings, inline markup stripped, list, fenced code and table', async () => {
    const doc = await extract(await makeMarkdown(), 'guide.md');
    assert.deepEqual(brief(doc.sections), [
      ['title', 1, 'Glacier Guide'],
      ['text', undefined, 'Glaciers move slowly across the valley floor.'],
      ['title', 2, 'Equipment'],
      ['text', undefined, '- Crampons for the ice\n- Rope of sixty meters'],
      ['code', undefined, 'def pace(distance):\n    return distance / 2'],
      ['table', undefined, 'Item | Weight\nRope | 4 kg\nAxe | 1 kg'],
    ]);
  });
});

describe('parsing: plain text, code and JSON', () => {
  it('TXT: one section per paragraph; UTF-8, UTF-16 and Windows-1252 decoded', async () => {
    const doc = await extract(Buffer.from('First paragraph\nstill first.\r\n\r\nSecond – with a dash.\n\n\n'), 'notes.txt');
    assert.deepEqual(brief(doc.sections), [
      ['text', undefined, 'First paragraph\nstill first.'],
      ['text', undefined, 'Second – with a dash.'],
    ]);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße aus Köln', 'utf16le')]);
    assert.equal((await extract(utf16, 'u16.txt')).sections[0].text, 'Grüße aus Köln');
    const cp1252 = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]);
    assert.equal((await extract(cp1252, 'legacy.txt')).sections[0].text, 'Café €5');
  });

  it('source code: code sections split between top-level definitions', async () => {
    const source = ['import os', '', 'def alpha():', '    x = 1', '', '    return x', '', 'class Beta:', '    pass', ''].join('\n');
    const doc = await extract(Buffer.from(source), 'module.py');
    assert.ok(doc.sections.every((s) => s.kind === 'code'));
    assert.equal(doc.sections.map((s) => s.text).join('\n\n'), source.trim());

    const long = Array.from({ length: 5 }, (_, i) => [`function f${i}() {`, ...Array<string>(20).fill('  step();'), '}', ''].join('\n')).join('\n');
    const split = await extract(Buffer.from(long), 'steps.js');
    assert.ok(split.sections.length >= 2, 'long files are split');
    assert.ok(split.sections.every((s) => /^function f\d\(\) \{/.test(s.text) && s.text.endsWith('}')));
  });

  it('JSON: an array gives one readable section per element', async () => {
    const data = [
      { name: 'Ada', skills: ['math', 'poetry'], address: { city: 'London' } },
      { name: 'Grace', projects: [{ title: 'COBOL' }, { title: 'UNIVAC' }] },
    ];
    const doc = await extract(Buffer.from(JSON.stringify(data)), 'people.json');
    assert.deepEqual(
      doc.sections.map((s) => s.text),
      ['name: Ada\nskills: math, poetry\naddress:\n  city: London', 'name: Grace\nprojects:\n  - title: COBOL\n  - title: UNIVAC'],
    );
  });

  it('JSONL: one section per line; a bad line is reported with its number', async () => {
    const doc = await extract(Buffer.from('{"q":"What is Cairn?","a":"A RAG service"}\n\n{"q":"Why?","a":"Because"}\n'), 'qa.jsonl');
    assert.deepEqual(
      doc.sections.map((s) => s.text),
      ['q: What is Cairn?\na: A RAG service', 'q: Why?\na: Because'],
    );
    await assert.rejects(extract(Buffer.from('{"ok":1}\n{broken\n'), 'bad.jsonl'), (error: unknown) => {
      assert.ok(error instanceof CorruptFileError);
      assert.match(error.message, /^bad\.jsonl is not a readable JSON Lines file: line 2: /);
      return true;
    });
    await assert.rejects(extract(Buffer.from('{"a": '), 'cut.json'), /cut\.json is not a readable JSON document/);
  });
});
