/**
 * The grounding check of a chat answer: no sentence states a figure or a name the documents do not hold.
 *
 * A small model copies the shape of an answer better than its facts: asked for the emergency number over
 * a passage that says 999, SmolLM2-135M answered "call 911 [ID:0]". So, sentence by sentence as the answer
 * streams:
 * - its figures (each group of digits: "999", "1,200", "2025-03-02", "123-456-7890") and proper names
 *   (capitalised words that do not start the sentence, and all-capital words) are looked up in the chunks
 *   retrieved for the answer (the cited ones among them);
 * - a sentence with one found in none of them is not shown as fact: it is replaced by the sentence of a
 *   passage that best matches it, quoted with its citation (the passage it cites, else the retrieved one
 *   sharing most of its words), or, when none matches, by "The documents do not say." (once per answer);
 * - a sentence that repeats the system prompt's own words ("The above is the knowledge base.") is dropped,
 *   check or no check: it is never an answer.
 * A sentence is released only once it has ended, so the streamed answer only ever grows at its end.
 *
 * Rules kept simple on purpose: a figure written in words ("twelve") is not checked; a date written another
 * way than the document's ("2 March" for "03-02") counts as not found and the passage's sentence is shown.
 */
import { queryTerms } from '../retrieval/tokenizer.js';
import { normaliseWords, splitSentences } from '../text/split.js';
import { isBuiltinModelId } from '../models/builtin/spec.js';

export const NOT_IN_DOCUMENTS = 'The documents do not say.';

/** `reference.grounding` of an answer. */
export interface GroundingReport {
  /** Figures and names were checked (the chat's grounding_check, or the built-in model's default). */
  checked: boolean;
  /** Each sentence not shown as the model wrote it, in order. */
  replaced: Replacement[];
  /**
   * The passage's sentence added after an answer that stated no figure or name, to a question asking for one
   * ("how many…", "who…", "when…"); null when none was added.
   */
  added: string | null;
}

/** Questions whose answer is a figure, a date or a name. */
const FACT_QUESTION = /\b(how (much|many|long|far|high|heavy|old|often)|when|who|whom|whose|what (number|year|date|time|age|price|size))\b/i;

export function asksForFact(question: string): boolean {
  return FACT_QUESTION.test(question);
}

/** The chat setting `prompt_config.grounding_check`: true or false as set; unset, on for the built-in chat model only. */
export function groundingCheckOn(setting: boolean | null | undefined, modelId: string): boolean {
  return typeof setting === 'boolean' ? setting : isBuiltinModelId(modelId);
}

export interface Replacement {
  /** The model's sentence, as it was. */
  sentence: string;
  /** Its figures and names found in no retrieved chunk. */
  unsupported: string[];
  /** What the answer shows instead ('' when the sentence was dropped as a repeat). */
  replacement: string;
}

const MARKER = /\s*\[ID:(\d+)\]/g;
/** Words that start with a capital letter in English without naming anything. */
const NOT_NAMES = new Set(['I', "I'm", "I've", "I'll", "I'd", 'OK']);
/** A prompt line repeated as an answer: at least this many words, to leave short common phrases alone. */
const MIN_ECHO_WORDS = 4;
/** A passage's sentence replaces a model's one when it shares at least this part of its content words… */
const MIN_MATCH = 0.25;
/** …and, unless the model's sentence cited its passage, at least this many of them ("Ask Gandalf" is about nothing). */
const MIN_SHARED_UNCITED = 2;

/** Digit groups of a text, leading zeros dropped; thousands separators join their groups ("1,200" is 1200). */
export function figuresOf(text: string): string[] {
  const joined = text.replace(MARKER, '').replace(/(\d),(?=\d{3}\b)/g, '$1');
  return [...joined.matchAll(/\d+/g)].map((m) => m[0].replace(/^0+(?=\d)/, ''));
}

/** Proper names of a sentence: capitalised words past its first word, and all-capital words (2+ letters). */
export function namesOf(sentence: string): string[] {
  const words = sentence.replace(MARKER, '').match(/[\p{L}][\p{L}'’-]*/gu) ?? [];
  const names = new Set<string>();
  words.forEach((w, i) => {
    const capital = /^\p{Lu}/u.test(w);
    const acronym = w.length >= 2 && w === w.toUpperCase() && /\p{Lu}/u.test(w);
    if (NOT_NAMES.has(w) || !capital) return;
    if (i > 0 || acronym) names.add(w.replace(/['’]s$/, ''));
  });
  return [...names];
}


/** The sentences of a passage (for quoting), trimmed. */
export function sentencesOf(text: string): string[] {
  return splitSentences(text)
    .map((s) => s.replace(/^#+\s*/, '').trim())
    .filter((s) => /\p{L}/u.test(s));
}

interface Source {
  index: number;
  words: Set<string>;
  figures: Set<string>;
  sentences: string[];
  /** Stems of the chunk's content words: a short sentence ("It costs 45 pounds.") is about what its chunk is about. */
  terms: Set<string>;
}

export class GroundingCheck {
  private readonly sources: Source[];
  private readonly promptText: string;
  private pending = '';
  /** Whitespace after the last sentence shown: shown only before the next one, so the answer never ends in it. */
  private gap = '';
  private shown = false;
  /** A sentence shown states a figure or a name the documents hold. */
  private statedFact = false;
  /** The passage's sentence added after an answer that stated no fact a question asked for. */
  private supplemented: string | null = null;
  /** Without the check: the current sentence is being streamed as it comes (it did not start like the prompt). */
  private streaming = false;
  private saidNotFound = false;
  private readonly quotedTexts = new Set<string>();
  private readonly quotedFrom = new Set<number>();
  readonly replaced: Replacement[] = [];

  /**
   * `chunks`: the chunks retrieved for the answer, by reference index; `promptLines`: the system prompt
   * without the chunks (its own words must not come back as the answer); `verify`: check figures and names
   * (off: only the prompt's words are dropped).
   */
  constructor(
    chunks: { content: string }[],
    promptLines: string,
    private readonly verify: boolean,
    /** The question: its words help pick the passage to quote, and whether it asks for a figure or a name. */
    private readonly question = '',
  ) {
    this.sources = chunks.map((c, index) => ({
      index,
      words: new Set(normaliseWords(c.content).split(' ')),
      figures: new Set(figuresOf(c.content)),
      sentences: sentencesOf(c.content),
      terms: new Set(contentTerms(c.content)),
    }));
    this.promptText = normaliseWords(promptLines);
  }

  /** Takes the next piece of the (cited) answer; returns what may be shown: whole checked sentences. */
  push(text: string): string {
    this.pending += text;
    let out = '';
    for (let end = this.sentenceEnd(); end > 0; end = this.sentenceEnd()) {
      out += this.verify ? this.check(this.pending.slice(0, end)) : this.passOn(this.pending.slice(0, end), true);
      this.pending = this.pending.slice(end);
    }
    // Without the check, text streams as it comes, held only while the sentence could still be the prompt's.
    if (!this.verify && this.pending && (this.streaming || !this.couldRepeatPrompt(this.pending))) {
      out += this.passOn(this.pending, false);
      this.pending = '';
    }
    return out;
  }

  /** The end of the answer: its last sentence, checked; then, with the check on, the fact the question asked for. */
  end(): string {
    const rest = this.pending;
    this.pending = '';
    let out = !rest ? '' : this.verify ? this.check(rest) : this.passOn(rest, true);
    if (this.verify && !this.statedFact && asksForFact(this.question)) {
      const quote = this.quote('', true);
      if (quote && quote !== NOT_IN_DOCUMENTS) {
        this.supplemented = quote;
        out += (this.shown ? ' ' : '') + quote;
        this.shown = true;
      }
    }
    return out;
  }

  /** Without the check: text as written, but a whole sentence that repeats the prompt is dropped. */
  private passOn(text: string, ends: boolean): string {
    const whole = !this.streaming;
    this.streaming = !ends;
    if (whole && ends && this.repeatsPrompt(text.trim())) {
      this.replaced.push({ sentence: text.trim(), unsupported: [], replacement: '' });
      return '';
    }
    if (text.trim()) this.shown = true;
    return text;
  }

  /** Whether the sentence begun so far is the start of the prompt's words (it is held until it is not). */
  private couldRepeatPrompt(sentence: string): boolean {
    const text = normaliseWords(sentence);
    return !text || ` ${this.promptText}`.includes(` ${text}`);
  }

  /**
   * Where the first complete sentence of the pending text ends (after its punctuation, any citation markers
   * and the whitespace that follows, or after a line break), or 0 while it may still grow. "3.5" is no end:
   * an end needs whitespace after the punctuation.
   */
  private sentenceEnd(): number {
    const m = /[.!?;。！？；]+(?:\s*\[ID:\d+\])*\s+|\n+/.exec(this.pending);
    return m ? m.index + m[0].length : 0;
  }

  /** One sentence (with the whitespace around it), as shown: itself, its replacement, or nothing. */
  private check(raw: string): string {
    const sentence = raw.trim();
    const leading = raw.slice(0, raw.length - raw.trimStart().length);
    const trailing = raw.slice(raw.trimEnd().length);
    if (!sentence) {
      this.gap += raw;
      return '';
    }
    const shown = this.judge(sentence);
    if (!shown) return '';
    const out = (this.shown ? this.gap + leading || ' ' : '') + shown;
    this.gap = trailing;
    this.shown = true;
    return out;
  }

  /** The sentence, its replacement, or '' when it is dropped. */
  private judge(sentence: string): string {
    if (this.repeatsPrompt(sentence)) {
      this.replaced.push({ sentence, unsupported: [], replacement: '' });
      return '';
    }
    if (!this.verify) return sentence;
    const unsupported = this.unsupported(sentence);
    if (!unsupported.length) {
      if (this.statesNewFact(sentence)) this.statedFact = true;
      return sentence;
    }
    const replacement = this.quote(sentence);
    this.replaced.push({ sentence, unsupported, replacement });
    if (replacement && replacement !== NOT_IN_DOCUMENTS) this.statedFact = true;
    return replacement;
  }

  /** A figure or a name beyond the question's own ("Pinecone 2" asked about is no answer to "how much"). */
  private statesNewFact(sentence: string): boolean {
    const asked = new Set([...figuresOf(this.question), ...normaliseWords(this.question).split(' ')]);
    return figuresOf(sentence).some((f) => !asked.has(f)) || namesOf(sentence).some((n) => !normaliseWords(n).split(' ').every((w) => asked.has(w)));
  }

  /** The answer when every sentence the model wrote was dropped ('' when it wrote none, or some are shown). */
  emptyAnswer(): string {
    return !this.shown && this.replaced.length ? NOT_IN_DOCUMENTS : '';
  }

  /** Reference indices of the passages quoted in place of sentences. */
  quotedIndices(): number[] {
    return [...this.quotedFrom];
  }

  /** What the answer's reference says about the check: whether figures and names were checked, and what was replaced. */
  report(): GroundingReport {
    return { checked: this.verify, replaced: this.replaced, added: this.supplemented };
  }

  private repeatsPrompt(sentence: string): boolean {
    const text = normaliseWords(sentence.replace(MARKER, ''));
    if (!text) return false;
    return text.split(' ').length >= MIN_ECHO_WORDS && this.promptText.includes(text);
  }

  /** The sentence's figures and names that no chunk holds. */
  private unsupported(sentence: string): string[] {
    const missing: string[] = [];
    for (const f of new Set(figuresOf(sentence))) if (!this.sources.some((s) => s.figures.has(f))) missing.push(f);
    for (const name of namesOf(sentence)) {
      const words = normaliseWords(name).split(' ');
      if (!this.sources.some((s) => words.every((w) => s.words.has(w)))) missing.push(name);
    }
    return missing;
  }

  /**
   * A passage's own sentence in place of the model's: from the chunks the sentence cites, else from any
   * retrieved chunk, the one sharing most of its content words; quoted with its citation. To a question
   * asking for a figure or a name, a sentence stating one is preferred (a heading that shares the question's
   * words answers nothing); `factOnly` quotes no other. A passage already quoted is not repeated; with none
   * to quote, "The documents do not say." (once).
   */
  private quote(sentence: string, factOnly = false): string {
    if (asksForFact(this.question)) {
      const isFact = (text: string) => this.statesNewFact(text);
      // The model's words may be about the wrong thing altogether: then the question alone picks.
      const fact = this.bestPassage(sentence, isFact) ?? (sentence ? this.bestPassage('', isFact) : undefined);
      if (fact || factOnly) return this.quotation(fact);
    }
    return this.quotation(this.bestPassage(sentence, () => true));
  }

  /** The passage sentence to quote for `sentence` among those `eligible` accepts (see quote). */
  private bestPassage(sentence: string, eligible: (text: string) => boolean): { text: string; index: number } | undefined {
    const cited = [...sentence.matchAll(MARKER)].map((m) => Number(m[1])).filter((i) => i < this.sources.length);
    // The question's words count too: the model's sentence may be about the wrong thing altogether.
    const terms = [...new Set([...contentTerms(sentence), ...contentTerms(this.question)])];
    const pick = (pool: Source[]) => {
      let best: { rank: number; score: number; shared: number; text: string; index: number } | undefined;
      for (const s of pool) {
        const inChunk = terms.filter((t) => s.terms.has(t)).length;
        const sentenceTerms = s.sentences.map((text) => new Set(contentTerms(text)));
        // How many of the chunk's sentences hold a word: its subject ("Pinecone 2 stove") is in many, the
        // thing asked about ("cost") in few, so a rare shared word ranks a sentence higher than a common one.
        const spread = (t: string) => sentenceTerms.filter((mine) => mine.has(t)).length;
        s.sentences.forEach((text, i) => {
          if (!eligible(text)) return;
          const own = terms.filter((t) => sentenceTerms[i]!.has(t));
          // A sentence sharing a word counts with the words its chunk shares, as the uncited threshold goes.
          const shared = own.length > 0 ? Math.max(own.length, inChunk) : 0;
          const score = terms.length ? own.length / terms.length : 0;
          const rank = own.reduce((sum, t) => sum + 1 / spread(t) ** 2, 0);
          if (!best || rank > best.rank) best = { rank, score, shared, text, index: s.index };
        });
      }
      return best;
    };
    const fromCited = pick(this.sources.filter((s) => cited.includes(s.index)));
    const fromAll = pick(this.sources);
    const best =
      fromCited && (fromCited.score >= MIN_MATCH || !terms.length) ? fromCited : fromAll && fromAll.score >= MIN_MATCH && fromAll.shared >= MIN_SHARED_UNCITED ? fromAll : fromCited;
    return best;
  }

  /** The passage sentence quoted with its citation; '' when it was quoted before; "not say" (once) for none. */
  private quotation(best: { text: string; index: number } | undefined): string {
    if (best) {
      if (this.quotedTexts.has(best.text)) return '';
      this.quotedTexts.add(best.text);
      this.quotedFrom.add(best.index);
      return `The documents say: "${best.text.replace(/[.!?]+$/, '')}" [ID:${best.index}].`;
    }
    if (this.saidNotFound) return '';
    this.saidNotFound = true;
    return NOT_IN_DOCUMENTS;
  }
}

/**
 * Stems of a text's content words (stopwords and figures dropped: a wrong figure must not decide which
 * passage the sentence was about), as citations and retrieval compare texts.
 */
function contentTerms(text: string): string[] {
  return queryTerms(text.replace(MARKER, '')).filter((t) => !/^\d+$/.test(t.word)).map((t) => t.stem);
}
