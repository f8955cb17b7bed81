import assert from 'node:assert/strict';
import { parseKeywords, parseQuestions } from '../../../src/enrichment/keywords-answers.js';

describe('keyword answers', () => {
  it('reads a comma-separated line, as the prompt asks', () => {
    assert.deepEqual(parseKeywords('granite cairn, trail marker, summit', 5), ['granite cairn', 'trail marker', 'summit']);
  });

  it('reads numbered and bulleted lists, one keyword per line', () => {
    assert.deepEqual(parseKeywords('1. granite\n2) trail marker\n- summit\n* ridge\n• snow', 10), ['granite', 'trail marker', 'summit', 'ridge', 'snow']);
  });

  it('strips quotes, markdown emphasis, a label and a trailing full stop', () => {
    assert.deepEqual(parseKeywords('Keywords: "granite", **trail marker**, `summit`, ridge.', 10), ['granite', 'trail marker', 'summit', 'ridge']);
    assert.deepEqual(parseKeywords('Here are the keywords:\ngranite, summit', 10), ['granite', 'summit']);
  });

  it('keeps numbers that belong to the keyword', () => {
    assert.deepEqual(parseKeywords('3.5 mm jack, 2019 survey, 10:30 ferry', 10), ['3.5 mm jack', '2019 survey', '10:30 ferry']);
  });

  it('reads a JSON array, fenced or not, and a JSON object holding one', () => {
    assert.deepEqual(parseKeywords('["granite", "summit"]', 10), ['granite', 'summit']);
    assert.deepEqual(parseKeywords('```json\n["granite", "summit"]\n```', 10), ['granite', 'summit']);
    assert.deepEqual(parseKeywords('{"keywords": ["granite", "summit"]}', 10), ['granite', 'summit']);
  });

  it('drops duplicates (case-insensitively) and caps the list at the number asked for', () => {
    assert.deepEqual(parseKeywords('Granite, granite, summit, GRANITE, ridge, snow', 3), ['Granite', 'summit', 'ridge']);
  });

  it('splits on the separators of other languages', () => {
    assert.deepEqual(parseKeywords('花岗岩，石堆、山顶；小路', 10), ['花岗岩', '石堆', '山顶', '小路']);
  });

  it('drops reasoning the model left in its answer', () => {
    assert.deepEqual(parseKeywords('<think>the user wants keywords, maybe rocks</think>granite, summit', 10), ['granite', 'summit']);
  });

  it('gives no keywords for an unusable answer instead of failing', () => {
    assert.deepEqual(parseKeywords('', 5), []);
    assert.deepEqual(parseKeywords('   \n ,, ;; ...', 5), []);
    assert.deepEqual(parseKeywords('{"error": "rate limited"}', 5), []);
    assert.deepEqual(
      parseKeywords('I am sorry but the passage you sent does not contain enough information to extract any meaningful keywords from it at all', 5),
      [],
    );
  });

  it('gives nothing when asked for none', () => {
    assert.deepEqual(parseKeywords('granite, summit', 0), []);
  });
});

describe('question answers', () => {
  it('reads one question per line, as the prompt asks', () => {
    assert.deepEqual(parseQuestions('What marks the summit trail?\nWho stacks stones on the coast?', 5), [
      'What marks the summit trail?',
      'Who stacks stones on the coast?',
    ]);
  });

  it('strips numbering, bullets, Q-labels and quotes', () => {
    const answer = '1. What marks the trail?\n2) "Where is the ridge?"\n- How high is the summit?\nQ4: When does snow fall?\nQ: Why stack stones?';
    assert.deepEqual(parseQuestions(answer, 10), [
      'What marks the trail?',
      'Where is the ridge?',
      'How high is the summit?',
      'When does snow fall?',
      'Why stack stones?',
    ]);
  });

  it('drops an introduction line and blank lines', () => {
    assert.deepEqual(parseQuestions('Here are 2 questions the passage answers:\n\n1. What marks the trail?\n\n2. Where is the ridge?', 5), [
      'What marks the trail?',
      'Where is the ridge?',
    ]);
  });

  it('splits several questions run together on one line', () => {
    assert.deepEqual(parseQuestions('What marks the trail? Where is the ridge?', 5), ['What marks the trail?', 'Where is the ridge?']);
  });

  it('reads a JSON array', () => {
    assert.deepEqual(parseQuestions('```\n["What marks the trail?", "Where is the ridge?"]\n```', 5), ['What marks the trail?', 'Where is the ridge?']);
  });

  it('drops duplicates and caps the list at the number asked for', () => {
    assert.deepEqual(parseQuestions('What is a cairn?\nwhat is a cairn?\nWhere is the ridge?\nWho built it?', 2), ['What is a cairn?', 'Where is the ridge?']);
  });

  it('gives no questions for an unusable answer instead of failing', () => {
    assert.deepEqual(parseQuestions('', 3), []);
    assert.deepEqual(parseQuestions('\n - \n 1. \n ???', 3), []);
    assert.deepEqual(parseQuestions('{"error": "overloaded"}', 3), []);
  });
});
