import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PipelinePlanError, pipelinePlan, stepIndex } from '../../../src/pipelines/plan.js';
import { tokenChunk, titleChunk } from '../../../src/pipelines/chunkers.js';
import { documentMetadata, extractorCall, tokenizerText, withAnswer } from '../../../src/pipelines/extractor.js';
import { setupFor } from '../../../src/pipelines/parser-setup.js';
import type { ExtractedDocument, Section } from '../../../src/parsing/types.js';

function fixture(name: string): Record<string, any> {
  const json = JSON.parse(readFileSync(new URL(`../../fixtures/pipelines/${name}.json`, import.meta.url), 'utf8'));
  return json.dsl ?? json;
}

const text = (t: string): Section => ({ kind: 'text', text: t });
const doc = (...sections: Section[]): ExtractedDocument => ({ sections, pages: 1, meta: {} });

describe('pipeline plan: the steps a run interprets', () => {
  it('each fixture is a chain from File to its storing step, old names read as their component', () => {
    assert.deepEqual(pipelinePlan(fixture('enrich_all')).map((s) => s.id), ['Parser:Reader', 'TokenChunker:Slicer', 'Extractor:Gist', 'Extractor:Terms', 'Extractor:Asks', 'Extractor:Facts', 'Tokenizer:Index']);
    assert.deepEqual(pipelinePlan(fixture('compiled')).map((s) => s.component), ['Parser', 'TokenChunker', 'Compiler']);
    const old = fixture('summarized_chunks');
    old.components['TokenChunker:Slicer'].obj.component_name = 'Splitter';
    assert.equal(pipelinePlan(old)[1]!.component, 'TokenChunker');
  });

  it('a step that does not get what it takes is refused, naming it', () => {
    const dsl = fixture('summarized_chunks');
    dsl.components['File'].downstream = ['TokenChunker:Slicer'];
    assert.throws(() => pipelinePlan(dsl), /Component 'TokenChunker:Slicer' \(TokenChunker\) needs a parsed document \(a Parser before it\), but gets the file/);
  });

  it('a pipeline that does not store its chunks, or branches, is refused', () => {
    const dsl = fixture('summarized_chunks');
    dsl.components['Extractor:Gist'].downstream = [];
    assert.throws(() => pipelinePlan(dsl), /ends at 'Extractor:Gist' \(Extractor\) without storing its chunks/);
    const branch = fixture('summarized_chunks');
    branch.components['TokenChunker:Slicer'].downstream = ['Extractor:Gist', 'Tokenizer:Index'];
    assert.throws(() => pipelinePlan(branch), PipelinePlanError);
  });

  it('stepIndex names the steps there are', () => {
    assert.throws(() => stepIndex(pipelinePlan(fixture('compiled')), 'X'), /has no step 'X': its steps are Parser:Reader, TokenChunker:Slicer, Compiler:Build/);
  });
});

describe('pipeline chunkers', () => {
  it('TokenChunker cuts at its delimiters within chunk_token_size, and overlapped_percent starts a chunk with the end of the one before', () => {
    const d = doc(text('alpha beta gamma delta. epsilon zeta eta theta. iota kappa lambda mu.'));
    const plain = tokenChunk(d, { chunk_token_size: 6, delimiters: ['.'] }, 'f.txt');
    assert.ok(plain.length >= 2, JSON.stringify(plain));
    const overlapped = tokenChunk(d, { chunk_token_size: 6, delimiters: ['.'], overlapped_percent: 0.5 }, 'f.txt');
    assert.equal(overlapped.length, plain.length);
    assert.ok(overlapped[1]!.content.length > plain[1]!.content.length);
    assert.ok(overlapped[1]!.content.endsWith(plain[1]!.content));
  });

  it('TokenChunker delimiter_mode "one" keeps the document whole', () => {
    assert.equal(tokenChunk(doc(text('a.'), text('b.')), { delimiter_mode: 'one' }, 'f.txt').length, 1);
  });

  const book = doc(text('# Guide'), text('intro words'), text('## Setup'), text('install it'), text('## Use'), text('run it'), text('# Appendix'), text('notes'));
  const levels = [['^#[^#]', '^##[^#]']];

  it('TitleChunker hierarchy 2: each deepest heading is a chunk with the headings and text above it', () => {
    const chunks = titleChunk(book, { method: 'hierarchy', hierarchy: 2, levels }).map((c) => c.content);
    assert.deepEqual(chunks, ['# Guide\nintro words\n## Setup\ninstall it', '# Guide\nintro words\n## Use\nrun it', '# Appendix\nnotes']);
  });

  it('TitleChunker hierarchy 1 keeps sub-headings inside their top heading; include_heading_content chunks each heading with its own text', () => {
    assert.deepEqual(titleChunk(book, { method: 'hierarchy', hierarchy: 1, levels }).map((c) => c.content), ['# Guide\nintro words\n## Setup\ninstall it\n## Use\nrun it', '# Appendix\nnotes']);
    const own = titleChunk(book, { method: 'hierarchy', hierarchy: 2, levels, include_heading_content: true }).map((c) => c.content);
    assert.deepEqual(own, ['# Guide\nintro words', '# Guide\n## Setup\ninstall it', '# Guide\n## Use\nrun it', '# Appendix\nnotes']);
  });

  it('TitleChunker picks the pattern group matching most headings, and refuses a pattern that is not a regular expression', () => {
    const numbered = doc(text('1. One'), text('body one'), text('2. Two'), text('body two'));
    const chunks = titleChunk(numbered, { method: 'hierarchy', hierarchy: 1, levels: [['^#[^#]'], ['^[0-9]+\\.\\s']] }).map((c) => c.content);
    assert.deepEqual(chunks, ['1. One\nbody one', '2. Two\nbody two']);
    assert.throws(() => titleChunk(numbered, { method: 'hierarchy', levels: [['(']] }), /TitleChunker levels\[0\]\[0\] '\(' is not a regular expression/);
  });
});

describe('pipeline Extractor and Tokenizer fields', () => {
  const params = { field_name: 'summary', sys_prompt: 'Summarize.', prompts: [{ role: 'user', content: 'Text:\n{TokenChunker:Slicer@chunks}' }], temperature: '0.2', max_tokens: 99, maxTokensEnabled: true };

  it('the prompt gets the chunk in place of the reference, with the component temperature and max_tokens', () => {
    const call = extractorCall(params, 'Extractor:Gist', { content: 'the chunk' });
    assert.deepEqual(call.messages, [{ role: 'system', content: 'Summarize.' }, { role: 'user', content: 'Text:\nthe chunk' }]);
    assert.deepEqual(call.options, { temperature: 0.2, max_tokens: 99 });
    const noReference = extractorCall({ ...params, prompts: [] }, 'Extractor:Gist', { content: 'the chunk' });
    assert.equal(noReference.messages.at(-1)!.content, 'the chunk');
  });

  it('answers go to their field: keywords and questions are searched, metadata facts merge, anything else is kept by name', () => {
    const chunk = { content: 'c', important_keywords: ['old'] };
    assert.deepEqual(withAnswer(chunk, 'keywords', 'a, b').important_keywords, ['old', 'a', 'b']);
    assert.deepEqual(withAnswer(chunk, 'questions', 'Why?\nHow?').questions, ['Why?', 'How?']);
    assert.deepEqual(withAnswer(chunk, 'metadata', 'Facts: {"author": "Ada"}').metadata, { author: 'Ada' });
    assert.equal(withAnswer(chunk, 'metadata', 'none').metadata, undefined);
    assert.equal(withAnswer(chunk, 'summary', ' short ').summary, 'short');
    assert.deepEqual(withAnswer(chunk, 'tone', 'calm').fields, { tone: 'calm' });
    assert.deepEqual(documentMetadata([{ content: '', metadata: { a: 1 } }, { content: '', metadata: { a: 2, b: 'x' } }]), { a: 1, b: 'x' });
  });

  it('the Tokenizer embeds its fields, the content when the chunk has none of them', () => {
    const chunk = { content: 'text', summary: 'sum', questions: ['q1', 'q2'] };
    assert.equal(tokenizerText(chunk, ['text']), 'text');
    assert.equal(tokenizerText(chunk, ['summary', 'questions']), 'sum\nq1\nq2');
    assert.equal(tokenizerText({ content: 'text' }, ['summary']), 'text');
  });

  it('the Parser reads a file through the setup naming its extension, and refuses one it has none for', () => {
    const parser = { setups: { pdf: { suffix: ['pdf'] }, markdown: {} } };
    assert.equal(setupFor('P', parser, 'a.PDF').format, 'pdf');
    assert.equal(setupFor('P', parser, 'notes.md').format, 'markdown');
    assert.throws(() => setupFor('P', parser, 'x.docx'), /Parser 'P' has no setup for \.docx files: its formats are pdf \(pdf\); markdown \(md, markdown, mdx\)/);
  });
});
