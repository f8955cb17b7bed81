import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, pos, sentences, text, title } from './build.js';

const ctx = { filename: 'law.pdf' };
const laws = (sections: Parameters<typeof doc>[0], config: Record<string, unknown> = {}) =>
  chunkDocument(doc(sections), 'laws', config, ctx).map((c) => c.content);

describe('chunking laws', () => {
  it('cuts EU-style text into articles headed by their chapter and section', () => {
    const chunks = laws([
      text('THE EUROPEAN PARLIAMENT HAS ADOPTED THIS REGULATION:'),
      text('CHAPTER I\nGeneral provisions\nArticle 1\nSubject-matter\n1. This Regulation lays down rules.\n2. It protects rights.'),
      text('Article 2\nMaterial scope\nThis Regulation applies to processing.'),
      text('CHAPTER III\nRights of the data subject\nSection 1\nTransparency\nArticle 12\nTransparent information\n(a) clear;\n(b) plain.'),
      text('Section 2\nInformation\nArticle 13\nInformation to be provided\nThe controller shall provide it.'),
      text('Article 14\nOther information\nAs above.'),
    ]);
    assert.deepEqual(chunks, [
      'THE EUROPEAN PARLIAMENT HAS ADOPTED THIS REGULATION:',
      'CHAPTER I\nGeneral provisions\nArticle 1\nSubject-matter\n1. This Regulation lays down rules.\n2. It protects rights.',
      'CHAPTER I\nGeneral provisions\nArticle 2\nMaterial scope\nThis Regulation applies to processing.',
      'CHAPTER III\nRights of the data subject\nSection 1\nTransparency\nArticle 12\nTransparent information\n(a) clear;\n(b) plain.',
      'CHAPTER III\nRights of the data subject\nSection 2\nInformation\nArticle 13\nInformation to be provided\nThe controller shall provide it.',
      'CHAPTER III\nRights of the data subject\nSection 2\nInformation\nArticle 14\nOther information\nAs above.',
    ]);
  });

  it('puts sections inside articles when sections are the more numerous (US style)', () => {
    const chunks = laws([
      title('Article I'),
      text('Section 1. All legislative Powers herein granted shall be vested in a Congress.'),
      text('Section 2. The House of Representatives shall be composed of Members.'),
      title('Article II'),
      text('Section 1. The executive Power shall be vested in a President.'),
    ]);
    assert.deepEqual(chunks, [
      'Article I\nSection 1. All legislative Powers herein granted shall be vested in a Congress.',
      'Article I\nSection 2. The House of Representatives shall be composed of Members.',
      'Article II\nSection 1. The executive Power shall be vested in a President.',
    ]);
  });

  it('handles § units and Chinese numbering', () => {
    assert.deepEqual(laws([text('Chapter 5\n§ 501. Definitions\nIn this chapter:\n(1) "agency" means...\n§ 502. Scope\nApplies.')]), [
      'Chapter 5\n§ 501. Definitions\nIn this chapter:\n(1) "agency" means...',
      'Chapter 5\n§ 502. Scope\nApplies.',
    ]);
    assert.deepEqual(laws([text('第一章 总则\n第一条 为了保护个人信息权益，制定本法。\n第二条 自然人的个人信息受法律保护。\n（一）公开；\n（二）透明。')]), [
      '第一章 总则\n第一条 为了保护个人信息权益，制定本法。',
      '第一章 总则\n第二条 自然人的个人信息受法律保护。\n（一）公开；\n（二）透明。',
    ]);
  });

  it('nests titles over parts over chapters', () => {
    assert.deepEqual(laws([text('TITLE 17\nCopyrights\nPART A\nCHAPTER 1\nSubject Matter\n§ 101. Definitions\nText.\nCHAPTER 2\n§ 201. Ownership\nMore.')]), [
      'TITLE 17\nCopyrights\nPART A\nCHAPTER 1\nSubject Matter\n§ 101. Definitions\nText.',
      'TITLE 17\nCopyrights\nPART A\nCHAPTER 2\n§ 201. Ownership\nMore.',
    ]);
  });

  it('uses top-level numbered clauses as units when there are no named ones', () => {
    assert.deepEqual(laws([text('Terms of Service'), text('1. Definitions\n1.1 "Service" means Cairn.\n1.2 "User" means you.\n2. Term\nThis agreement starts today.')]), [
      'Terms of Service',
      '1. Definitions\n1.1 "Service" means Cairn.\n1.2 "User" means you.',
      '2. Term\nThis agreement starts today.',
    ]);
  });

  it('keeps a chapter that has no article', () => {
    assert.deepEqual(laws([text('Chapter 1\nRepealed\nChapter 2\nArticle 1\nText.')]), ['Chapter 1\nRepealed', 'Chapter 2\nArticle 1\nText.']);
  });

  it('splits a long article at line ends, heading repeated, within the limit', () => {
    const clauses = Array.from({ length: 12 }, (_, i) => `(${i + 1}) ${sentences(1, `c${i}`)}`).join('\n');
    const chunks = laws([text(`Chapter II\nArticle 9\n${clauses}`)], { chunk_token_num: 60 });
    assert.ok(chunks.length > 2);
    for (const c of chunks) {
      assert.ok(c.startsWith('Chapter II\nArticle 9\n('), c);
      assert.ok(countTokens(c) <= 60);
    }
  });

  it('carries positions of the unit heading and its lines', () => {
    const chunks = chunkDocument(
      doc([title('Article 1', 1, { positions: [pos(1, 0)] }), text('Body.', { positions: [pos(1, 20)] })]),
      'laws',
      {},
      ctx,
    );
    assert.deepEqual(chunks, [{ content: 'Article 1\nBody.', positions: [pos(1, 0), pos(1, 20)] }]);
  });

  it('falls back to merged lines when nothing is numbered', () => {
    assert.deepEqual(laws([text('Just a notice.\nNothing numbered.')]), ['Just a notice.\nNothing numbered.']);
  });
});
