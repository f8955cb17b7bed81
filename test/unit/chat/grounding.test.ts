import assert from 'node:assert/strict';
import { GroundingCheck, NOT_IN_DOCUMENTS, figuresOf, groundingCheckOn, namesOf } from '../../../src/chat/grounding.js';

const SAFETY = [
  { content: '# Mountain safety\n\nIn a mountain emergency, call 999 and ask for the police, then mountain rescue.\n\nGive your location and the number of people in your group.' },
  { content: 'The Corrour bothy sleeps 12 and is run by the Mountain Bothies Association since 1,200 walkers a year use it.' },
];
const PROMPT = 'You are an intelligent assistant. Answer the question using the knowledge base.\nHere is the knowledge base:\n\nThe above is the knowledge base.';

/** Streams the answer in the given pieces; returns every text shown so far, in order, and the check. */
function stream(pieces: string[], verify = true) {
  const check = new GroundingCheck(SAFETY, PROMPT, verify);
  const shown: string[] = [];
  let text = '';
  for (const p of [...pieces, undefined]) {
    const out = p === undefined ? check.end() : check.push(p);
    if (out) shown.push((text += out));
  }
  return { text, shown, check };
}

describe('the grounding check of an answer', () => {
  it('figures are digit groups, thousands separators joined; names are capitalised words past the first and acronyms', () => {
    assert.deepEqual(figuresOf('Call 123-456-7890 or 999 [ID:3]; 1,200 walkers on 2025-03-02.'), ['123', '456', '7890', '999', '1200', '2025', '3', '2']);
    assert.deepEqual(namesOf('Then call Bob Smith of the MRT, not me.'), ['Bob', 'Smith', 'MRT']);
    assert.deepEqual(namesOf('I think Rescue teams help.'), ['Rescue']);
  });

  it('a sentence with a figure no chunk holds is replaced by the cited passage\'s own sentence, quoted with its citation', () => {
    const { text, check } = stream(['call 911 [ID:0]. ', 'Stay calm.']);
    assert.equal(text, 'The documents say: "In a mountain emergency, call 999 and ask for the police, then mountain rescue" [ID:0]. Stay calm.');
    assert.deepEqual(check.report().replaced.map((r) => [r.sentence, r.unsupported]), [['call 911 [ID:0].', ['911']]]);
    assert.deepEqual(check.quotedIndices(), [0]);
  });

  it('a made-up name is replaced by the best-matching passage when the sentence cites none; nothing matching: "the documents do not say", once', () => {
    const { text } = stream(['The bothy is run by Hamish McTavish. ', 'Ask Gandalf. ', 'Ask Saruman.']);
    assert.equal(text, `The documents say: "The Corrour bothy sleeps 12 and is run by the Mountain Bothies Association since 1,200 walkers a year use it" [ID:1]. ${NOT_IN_DOCUMENTS}`);
  });

  it('sentences whose figures and names the chunks hold pass as written', () => {
    const answer = 'In an emergency, call 999 [ID:0]. The Corrour bothy sleeps 12 [ID:1]. About 1,200 walkers use it.';
    assert.equal(stream([answer]).text, answer);
  });

  it('the system prompt\'s own words never come back as the answer, check on or off; nothing left is an honest answer', () => {
    assert.equal(stream(['The above is the knowledge base. ', 'Call 999.'], false).text, 'Call 999.');
    const only = stream(['The above is the knowledge base.'], false);
    assert.equal(only.text, '');
    assert.equal(only.check.emptyAnswer(), NOT_IN_DOCUMENTS);
  });

  it('with the check off, wrong figures pass (the setting is honoured)', () => {
    assert.equal(stream(['call 911 [ID:0].'], false).text, 'call 911 [ID:0].');
  });

  it('the stream stays cumulative: each text shown extends the one before, a sentence shown once it has ended', () => {
    const { shown } = stream(['Call ', '999 [ID:0', ']. The bo', 'thy sleeps 12. And 3.5 km', ' away.']);
    for (let i = 1; i < shown.length; i++) assert.ok(shown[i]!.startsWith(shown[i - 1]!), JSON.stringify(shown));
    assert.deepEqual(shown, ['Call 999 [ID:0].', 'Call 999 [ID:0]. The bothy sleeps 12.', 'Call 999 [ID:0]. The bothy sleeps 12. The documents do not say.']);
  });

  it('is on by default for the built-in chat model only; an explicit setting wins for every model', () => {
    assert.equal(groundingCheckOn(undefined, 'SmolLM2-135M-Instruct@Builtin'), true);
    assert.equal(groundingCheckOn(null, 'gpt-4o@OpenAI'), false);
    assert.equal(groundingCheckOn(true, 'gpt-4o@OpenAI'), true);
    assert.equal(groundingCheckOn(false, 'SmolLM2-135M-Instruct@Builtin'), false);
  });
});

describe('an answer that states no fact a question asked for', () => {
  it('gets the passage sentence that best matches the question, quoted with its citation', () => {
    const check = new GroundingCheck(SAFETY, PROMPT, true, 'How many people does the Corrour bothy sleep?');
    const text = check.push('The Corrour bothy is a nice place. ') + check.end();
    assert.equal(text, 'The Corrour bothy is a nice place. The documents say: "The Corrour bothy sleeps 12 and is run by the Mountain Bothies Association since 1,200 walkers a year use it" [ID:1].');
    assert.match(check.report().added ?? '', /sleeps 12/);
  });

  it('is left as it is when it states a figure the documents hold, or the question asks for none', () => {
    const stated = new GroundingCheck(SAFETY, PROMPT, true, 'How many people does the Corrour bothy sleep?');
    assert.equal(stated.push('It sleeps 12. ') + stated.end(), 'It sleeps 12.');
    const open = new GroundingCheck(SAFETY, PROMPT, true, 'Is the bothy nice?');
    assert.equal(open.push('The Corrour bothy is a nice place.') + open.end(), 'The Corrour bothy is a nice place.');
    assert.equal(open.report().added, null);
  });

  it('is a sentence stating a figure or a name, never a heading that only repeats the question\'s words', () => {
    const sheet = [{ content: '# Pinecone 2 camping stove\n\nThe Pinecone 2 stove weighs 320 grams.\nIt costs 45 pounds and comes with a 5 year warranty.' }];
    const cost = new GroundingCheck(sheet, PROMPT, true, 'How much does the Pinecone 2 stove cost?');
    assert.equal(cost.push('It is sold online. ') + cost.end(), 'It is sold online. The documents say: "It costs 45 pounds and comes with a 5 year warranty" [ID:0].');
    const club = [{ content: '# Speyside Hillwalking Club rules\n\nMembership costs 30 pounds a year.\nThe club secretary is Duncan Fraser.' }];
    const secretary = new GroundingCheck(club, PROMPT, true, 'Who is the secretary of the Speyside Hillwalking Club?');
    assert.equal(secretary.push('It is not said. ') + secretary.end(), 'It is not said. The documents say: "The club secretary is Duncan Fraser" [ID:0].');
  });

  it('replaces a wrong sentence by the fact the question asks for, when the sentence matches no passage', () => {
    const sheet = [{ content: '# Pinecone 2 camping stove\n\nThe stove is made by Cairnwork Outdoor in Dundee.\nIt costs 45 pounds and comes with a 5 year warranty.' }];
    const check = new GroundingCheck(sheet, PROMPT, true, 'How much does the Pinecone 2 stove cost?');
    assert.equal(check.push('Shipping is free via Zorbex. ') + check.end(), 'The documents say: "It costs 45 pounds and comes with a 5 year warranty" [ID:0].');
  });

  it('is nothing when no passage sentence states a fact about the question', () => {
    const check = new GroundingCheck([{ content: '# Pinecone 2 camping stove\n\nA stove for two.' }], PROMPT, true, 'How much does the Pinecone 2 stove cost?');
    assert.equal(check.push('It is sold online. ') + check.end(), 'It is sold online.');
    assert.equal(check.report().added, null);
  });
});
