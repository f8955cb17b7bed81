/**
 * Porter stemmer, a line-by-line port of SQLite FTS5's `porter` tokenizer (fts5_tokenize.c), so that the
 * stems computed here (term similarity, IDF look-ups in the FTS vocabulary) are exactly the terms FTS5
 * stores. FTS5's version differs from the textbook algorithm in small ways (e.g. step 2 handles "logi"
 * and "bli", step 4 checks "ion" after the stem), which is why this is not a generic Porter stemmer.
 */

const MAX_TOKEN_BYTES = 64;

function isVowel(c: string, yIsVowel: boolean): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u' || (yIsVowel && c === 'y');
}

/** Length of the leading [C]VC run of `s[from..to)`, or 0 when there is none (fts5PorterGobbleVC). */
function gobbleVC(s: string, from: number, to: number, prevCons: boolean): number {
  let cons = prevCons;
  let i = from;
  for (; i < to; i++) {
    cons = !isVowel(s[i]!, cons);
    if (!cons) break;
  }
  for (i++; i < to; i++) {
    cons = !isVowel(s[i]!, cons);
    if (cons) return i + 1 - from;
  }
  return 0;
}

/** m > 0 for the stem s[0..n). */
function mGt0(s: string, n: number): boolean {
  return gobbleVC(s, 0, n, false) > 0;
}

function mGt1(s: string, n: number): boolean {
  const first = gobbleVC(s, 0, n, false);
  return first > 0 && gobbleVC(s, first, n, true) > 0;
}

function mEq1(s: string, n: number): boolean {
  const first = gobbleVC(s, 0, n, false);
  return first > 0 && gobbleVC(s, first, n, true) === 0;
}

/** *o: the stem ends consonant-vowel-consonant and the last consonant is not w, x or y. */
function oStar(s: string, n: number): boolean {
  const last = s[n - 1];
  if (last === 'w' || last === 'x' || last === 'y') return false;
  let mask = 0;
  let cons = false;
  for (let i = 0; i < n; i++) {
    cons = !isVowel(s[i]!, cons);
    mask = ((mask << 1) + (cons ? 1 : 0)) & 0xffff;
  }
  return (mask & 0x7) === 0x5;
}

/** *v*: the stem contains a vowel. */
function hasVowel(s: string, n: number): boolean {
  for (let i = 0; i < n; i++) if (isVowel(s[i]!, i > 0)) return true;
  return false;
}

type Condition = (s: string, n: number) => boolean;
type Rule = readonly [suffix: string, replacement: string, condition: Condition];

const mGt1SorT: Condition = (s, n) => (s[n - 1] === 's' || s[n - 1] === 't') && mGt1(s, n);

/**
 * Rules grouped by the word's penultimate character, in FTS5's order. Only the first rule whose suffix
 * matches is considered (the suffix match alone selects the rule; its condition then decides).
 */
function ruleTable(rules: Rule[]): Map<string, Rule[]> {
  const table = new Map<string, Rule[]>();
  for (const rule of rules) {
    const key = rule[0][rule[0].length - 2]!;
    table.set(key, [...(table.get(key) ?? []), rule]);
  }
  return table;
}

const STEP2 = ruleTable([
  ['ational', 'ate', mGt0], ['tional', 'tion', mGt0],
  ['enci', 'ence', mGt0], ['anci', 'ance', mGt0],
  ['izer', 'ize', mGt0],
  ['logi', 'log', mGt0],
  ['bli', 'ble', mGt0], ['alli', 'al', mGt0], ['entli', 'ent', mGt0], ['eli', 'e', mGt0], ['ousli', 'ous', mGt0],
  ['ization', 'ize', mGt0], ['ation', 'ate', mGt0], ['ator', 'ate', mGt0],
  ['alism', 'al', mGt0], ['iveness', 'ive', mGt0], ['fulness', 'ful', mGt0], ['ousness', 'ous', mGt0],
  ['aliti', 'al', mGt0], ['iviti', 'ive', mGt0], ['biliti', 'ble', mGt0],
]);

const STEP3 = ruleTable([
  ['ical', 'ic', mGt0],
  ['ness', '', mGt0],
  ['icate', 'ic', mGt0], ['iciti', 'ic', mGt0],
  ['ful', '', mGt0],
  ['ative', '', mGt0],
  ['alize', 'al', mGt0],
]);

const STEP4 = ruleTable([
  ['al', '', mGt1],
  ['ance', '', mGt1], ['ence', '', mGt1],
  ['er', '', mGt1],
  ['ic', '', mGt1],
  ['able', '', mGt1], ['ible', '', mGt1],
  ['ant', '', mGt1], ['ement', '', mGt1], ['ment', '', mGt1], ['ent', '', mGt1],
  ['ion', '', mGt1SorT], ['ou', '', mGt1],
  ['ism', '', mGt1],
  ['ate', '', mGt1], ['iti', '', mGt1],
  ['ous', '', mGt1],
  ['ive', '', mGt1],
  ['ize', '', mGt1],
]);

/** Applies the first rule whose suffix matches (FTS5 requires the word to be longer than the suffix). */
function applyRules(word: string, table: Map<string, Rule[]>): string {
  const rules = table.get(word[word.length - 2] ?? '');
  if (!rules) return word;
  for (const [suffix, replacement, condition] of rules) {
    if (word.length > suffix.length && word.endsWith(suffix)) {
      const stemLength = word.length - suffix.length;
      return condition(word, stemLength) ? word.slice(0, stemLength) + replacement : word;
    }
  }
  return word;
}

function step1a(w: string): string {
  if (!w.endsWith('s')) return w;
  if (w[w.length - 2] === 'e') {
    const n = w.length;
    if ((n > 4 && w[n - 4] === 's' && w[n - 3] === 's') || (n > 3 && w[n - 3] === 'i')) return w.slice(0, -2);
    return w.slice(0, -1);
  }
  return w[w.length - 2] !== 's' ? w.slice(0, -1) : w;
}

/** Step 1b: returns the new word and whether "ed"/"ing" was removed (which triggers the clean-up). */
function step1b(w: string): [string, boolean] {
  const n = w.length;
  if (w[n - 2] === 'e') {
    if (n > 3 && w.endsWith('eed')) return [mGt0(w, n - 3) ? w.slice(0, -1) : w, false];
    if (n > 2 && w.endsWith('ed') && hasVowel(w, n - 2)) return [w.slice(0, -2), true];
  } else if (w[n - 2] === 'n') {
    if (n > 3 && w.endsWith('ing') && hasVowel(w, n - 3)) return [w.slice(0, -3), true];
  }
  return [w, false];
}

function step1bCleanup(w: string): string {
  const n = w.length;
  if (n > 2 && (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz'))) return w + 'e';
  const c = w[n - 1]!;
  if (!isVowel(c, false) && c !== 'l' && c !== 's' && c !== 'z' && c === w[n - 2]) return w.slice(0, -1);
  if (mEq1(w, n) && oStar(w, n)) return w + 'e';
  return w;
}

/**
 * Stems one lowercase token exactly as FTS5's porter tokenizer does. FTS5 stems the token's UTF-8 bytes,
 * where every byte of a non-ASCII character counts as a consonant ("straße" → "straß"): such a token is
 * stemmed as its bytes, one Latin-1 character per byte, and turned back into UTF-8 (the rules only remove
 * or add ASCII letters, so no character is cut).
 */
export function porterStem(token: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(token)) return stemBytes(token);
  return Buffer.from(stemBytes(Buffer.from(token, 'utf8').toString('latin1')), 'latin1').toString('utf8');
}

/** The Porter stem of a token given as one character per byte. */
function stemBytes(token: string): string {
  if (token.length > MAX_TOKEN_BYTES || token.length < 3) return token;
  let w = step1a(token);
  const [afterB, removed] = step1b(w);
  w = removed ? step1bCleanup(afterB) : afterB;
  if (w.endsWith('y') && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + 'i';
  w = applyRules(w, STEP2);
  w = applyRules(w, STEP3);
  w = applyRules(w, STEP4);
  if (w.endsWith('e')) {
    const n = w.length - 1;
    if (mGt1(w, n) || (mEq1(w, n) && !oStar(w, n))) w = w.slice(0, -1);
  }
  if (w.length > 1 && w.endsWith('ll') && mGt1(w, w.length - 1)) w = w.slice(0, -1);
  return w;
}
