/**
 * The one text analyser of retrieval: used to build full-text queries, to compute the term sets of
 * chunks and queries for term similarity, and to highlight matches. It mirrors FTS5's
 * `porter unicode61` tokenizer (remove_diacritics=1) exactly, for every script, so that its stems are the
 * terms FTS5 indexes: words are runs of the characters unicode61 counts as letters, digits or private use
 * (by SQLite's own Unicode 6.1 tables, not the runtime's), folded code point by code point as
 * unicode61 folds them (lowercase, the diacritics of Latin letters with one diacritic removed; Greek "ά"
 * stays "ά"), then Porter-stemmed. On top of that it drops English stopwords.
 */
import { porterStem } from './porter.js';
import { STOPWORDS } from './stopwords.js';

export interface Token {
  /** The word as unicode61 writes it (lowercased, Latin diacritics removed). */
  word: string;
  stem: string;
  /** Offsets of the word in the original text. */
  start: number;
  end: number;
}

export interface QueryTerm {
  /** The normalised word as typed; FTS5 stems it itself when it is used in a MATCH expression. */
  word: string;
  stem: string;
}

const ASCII = /^[\x20-\x7e]*$/;
/** Any 7-bit text (line breaks included): lowercasing it leaves word boundaries where they were. */
const SEVEN_BIT = /^[\x00-\x7f]*$/;

/**
 * The characters beyond ASCII that unicode61 does not put in words (hex code point ranges): those of
 * SQLite's Unicode 6.1 tables outside the categories L*, N* and Co. A code point unassigned there is a
 * word character, even if a later Unicode assigned it (the emoji "🤔" is a word). Checked against FTS5 for
 * every code point by test/unit/retrieval/tokenizer.test.ts.
 */
const SEPARATORS = `
  80-a9 ab-b1 b4 b6-b8 bb bf d7 f7 2c2-2c5 2d2-2df 2e5-2eb 2ed 2ef-2ff 305 30d-30e 310 312-31a 31c-322 329-32c 32f
  332-36f 375 37e 384-385 387 3f6 482-489 55a-55f 589-58a 58f 591-5c7 5f3-5f4 600-604 606-61b 61e-61f 64b-65f
  66a-66d 670 6d4 6d6-6e4 6e7-6ed 6fd-6fe 700-70d 70f 711 730-74a 7a6-7b0 7eb-7f3 7f6-7f9 816-819 81b-823 825-827
  829-82d 830-83e 859-85b 85e 8e4-8fe 900-903 93a-93c 93e-94f 951-957 962-965 970 981-983 9bc 9be-9c4 9c7-9c8
  9cb-9cd 9d7 9e2-9e3 9f2-9f3 9fa-9fb a01-a03 a3c a3e-a42 a47-a48 a4b-a4d a51 a70-a71 a75 a81-a83 abc abe-ac5
  ac7-ac9 acb-acd ae2-ae3 af0-af1 b01-b03 b3c b3e-b44 b47-b48 b4b-b4d b56-b57 b62-b63 b70 b82 bbe-bc2 bc6-bc8
  bca-bcd bd7 bf3-bfa c01-c03 c3e-c44 c46-c48 c4a-c4d c55-c56 c62-c63 c7f c82-c83 cbc cbe-cc4 cc6-cc8 cca-ccd
  cd5-cd6 ce2-ce3 d02-d03 d3e-d44 d46-d48 d4a-d4d d57 d62-d63 d79 d82-d83 dca dcf-dd4 dd6 dd8-ddf df2-df4 e31
  e34-e3a e3f e47-e4f e5a-e5b eb1 eb4-eb9 ebb-ebc ec8-ecd f01-f1f f34-f3f f71-f87 f8d-f97 f99-fbc fbe-fcc fce-fda
  102b-103e 104a-104f 1056-1059 105e-1060 1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109f 10fb 135d-1368
  1390-1399 1400 166d-166e 1680 169b-169c 16eb-16ed 1712-1714 1732-1736 1752-1753 1772-1773 17b4-17d6 17d8-17db
  17dd 1800-180e 18a9 1920-192b 1930-193b 1940 1944-1945 19b0-19c0 19c8-19c9 19de-19ff 1a17-1a1b 1a1e-1a1f
  1a55-1a5e 1a60-1a7c 1a7f 1aa0-1aa6 1aa8-1aad 1b00-1b04 1b34-1b44 1b5a-1b7c 1b80-1b82 1ba1-1bad 1be6-1bf3
  1bfc-1bff 1c24-1c37 1c3b-1c3f 1c7e-1c7f 1cc0-1cc7 1cd0-1ce8 1ced 1cf2-1cf4 1dc0-1de6 1dfc-1dff 1fbd 1fbf-1fc1
  1fcd-1fcf 1fdd-1fdf 1fed-1fef 1ffd-1ffe 2000-2064 206a-206f 207a-207e 208a-208e 20a0-20b9 20d0-20f0 2100-2101
  2103-2106 2108-2109 2114 2116-2118 211e-2123 2125 2127 2129 212e 213a-213b 2140-2144 214a-214d 214f 2190-23f3
  2400-2426 2440-244a 249c-24e9 2500-26ff 2701-2775 2794-2b4c 2b50-2b59 2ce5-2cea 2cef-2cf1 2cf9-2cfc 2cfe-2cff
  2d70 2d7f 2de0-2e2e 2e30-2e3b 2e80-2e99 2e9b-2ef3 2f00-2fd5 2ff0-2ffb 3000-3004 3008-3020 302a-3030 3036-3037
  303d-303f 3099-309c 30a0 30fb 3190-3191 3196-319f 31c0-31e3 3200-321e 322a-3247 3250 3260-327f 328a-32b0
  32c0-32fe 3300-33ff 4dc0-4dff a490-a4c6 a4fe-a4ff a60d-a60f a66f-a67e a69f a6f0-a6f7 a700-a716 a720-a721
  a789-a78a a802 a806 a80b a823-a82b a836-a839 a874-a877 a880-a881 a8b4-a8c4 a8ce-a8cf a8e0-a8f1 a8f8-a8fa
  a926-a92f a947-a953 a95f a980-a983 a9b3-a9cd a9de-a9df aa29-aa36 aa43 aa4c-aa4d aa5c-aa5f aa77-aa79 aa7b aab0
  aab2-aab4 aab7-aab8 aabe-aabf aac1 aade-aadf aaeb-aaf1 aaf5-aaf6 abe3-abed fb1e fb29 fbb2-fbc1 fd3e-fd3f
  fdfc-fdfd fe00-fe19 fe20-fe26 fe30-fe52 fe54-fe66 fe68-fe6b feff ff01-ff0f ff1a-ff20 ff3b-ff40 ff5b-ff65
  ffe0-ffe6 ffe8-ffee fff9-ffff 10100-10102 10137-1013f 10179-10189 10190-1019b 101d0-101fd 1039f 103d0 10857
  1091f 1093f 10a01-10a03 10a05-10a06 10a0c-10a0f 10a38-10a3a 10a3f 10a50-10a58 10a7f 10b39-10b3f 11000-11002
  11038-1104d 11080-11082 110b0-110c1 11100-11102 11127-11134 11140-11143 11180-11182 111b3-111c0 111c5-111c8
  116ab-116b7 12470-12473 16f51-16f7e 16f8f-16f92 1d000-1d0f5 1d100-1d126 1d129-1d1dd 1d200-1d245 1d300-1d356
  1d6c1 1d6db 1d6fb 1d715 1d735 1d74f 1d76f 1d789 1d7a9 1d7c3 1eef0-1eef1 1f000-1f02b 1f030-1f093 1f0a0-1f0ae
  1f0b1-1f0be 1f0c1-1f0cf 1f0d1-1f0df 1f110-1f12e 1f130-1f16b 1f170-1f19a 1f1e6-1f202 1f210-1f23a 1f240-1f248
  1f250-1f251 1f300-1f320 1f330-1f335 1f337-1f37c 1f380-1f393 1f3a0-1f3c4 1f3c6-1f3ca 1f3e0-1f3f0 1f400-1f43e
  1f440 1f442-1f4f7 1f4f9-1f4fc 1f500-1f53d 1f540-1f543 1f550-1f567 1f5fb-1f640 1f645-1f64f 1f680-1f6c5
  1f700-1f773 e0001 e0020-e007f e0100-e01ef`;
/** Combining diacritics that unicode61 keeps inside a word (and then removes), though no word starts with one. */
const INNER_DIACRITICS = '300-304 306-30c 30f 311 31b 323-328 32d-32e 330-331';

function regexClass(ranges: string): string {
  return ranges.trim().split(/\s+/).map((range) => range.split('-').map((hex) => `\\u{${hex}}`).join('-')).join('');
}

/** ASCII separators, the separators above, and lone surrogates (SQLite reads them as U+FFFD, a separator). */
const NOT_IN_WORD = `\\x00-/:-@\\[-\`{-\\x7f\\u{d800}-\\u{dfff}${regexClass(SEPARATORS)}`;
const WORD = new RegExp(`[^${NOT_IN_WORD}${regexClass(INNER_DIACRITICS)}][^${NOT_IN_WORD}]*`, 'gu');

/**
 * unicode61's case folding (sqlite3Fts5UnicodeFold in SQLite's fts5_unicode2.c, whose tables these are):
 * triples [first code point, flags, count]; a code point of a range is folded by adding
 * FOLD_OFFSETS[flags >> 1] (modulo 2^16), every one of the range or, when flags is odd, every second one.
 */
const FOLD_RANGES = [
  65, 14, 26, 181, 64, 1, 192, 14, 23, 216, 14, 7, 256, 1, 48, 306, 1, 6, 313, 1, 16, 330, 1, 46,
  376, 116, 1, 377, 1, 6, 383, 104, 1, 385, 50, 1, 386, 1, 4, 390, 44, 1, 391, 0, 1, 393, 42, 2,
  395, 0, 1, 398, 32, 1, 399, 38, 1, 400, 40, 1, 401, 0, 1, 403, 42, 1, 404, 46, 1, 406, 52, 1,
  407, 48, 1, 408, 0, 1, 412, 52, 1, 413, 54, 1, 415, 56, 1, 416, 1, 6, 422, 60, 1, 423, 0, 1,
  425, 60, 1, 428, 0, 1, 430, 60, 1, 431, 0, 1, 433, 58, 2, 435, 1, 4, 439, 62, 1, 440, 0, 1,
  444, 0, 1, 452, 2, 1, 453, 0, 1, 455, 2, 1, 456, 0, 1, 458, 2, 1, 459, 1, 18, 478, 1, 18,
  497, 2, 1, 498, 1, 4, 502, 122, 1, 503, 134, 1, 504, 1, 40, 544, 110, 1, 546, 1, 18, 570, 70, 1,
  571, 0, 1, 573, 108, 1, 574, 68, 1, 577, 0, 1, 579, 106, 1, 580, 28, 1, 581, 30, 1, 582, 1, 10,
  837, 36, 1, 880, 1, 4, 886, 0, 1, 902, 18, 1, 904, 16, 3, 908, 26, 1, 910, 24, 2, 913, 14, 17,
  931, 14, 9, 962, 0, 1, 975, 4, 1, 976, 140, 1, 977, 142, 1, 981, 146, 1, 982, 144, 1, 984, 1, 24,
  1008, 136, 1, 1009, 138, 1, 1012, 130, 1, 1013, 128, 1, 1015, 0, 1, 1017, 152, 1, 1018, 0, 1, 1021, 110, 3,
  1024, 34, 16, 1040, 14, 32, 1120, 1, 34, 1162, 1, 54, 1216, 6, 1, 1217, 1, 14, 1232, 1, 88, 1329, 22, 38,
  4256, 66, 38, 4295, 66, 1, 4301, 66, 1, 7680, 1, 150, 7835, 132, 1, 7838, 96, 1, 7840, 1, 96, 7944, 150, 8,
  7960, 150, 6, 7976, 150, 8, 7992, 150, 8, 8008, 150, 6, 8025, 151, 8, 8040, 150, 8, 8072, 150, 8, 8088, 150, 8,
  8104, 150, 8, 8120, 150, 2, 8122, 126, 2, 8124, 148, 1, 8126, 100, 1, 8136, 124, 4, 8140, 148, 1, 8152, 150, 2,
  8154, 120, 2, 8168, 150, 2, 8170, 118, 2, 8172, 152, 1, 8184, 112, 2, 8186, 114, 2, 8188, 148, 1, 8486, 98, 1,
  8490, 92, 1, 8491, 94, 1, 8498, 12, 1, 8544, 8, 16, 8579, 0, 1, 9398, 10, 26, 11264, 22, 47, 11360, 0, 1,
  11362, 88, 1, 11363, 102, 1, 11364, 90, 1, 11367, 1, 6, 11373, 84, 1, 11374, 86, 1, 11375, 80, 1, 11376, 82, 1,
  11378, 0, 1, 11381, 0, 1, 11390, 78, 2, 11392, 1, 100, 11499, 1, 4, 11506, 0, 1, 42560, 1, 46, 42624, 1, 24,
  42786, 1, 14, 42802, 1, 62, 42873, 1, 4, 42877, 76, 1, 42878, 1, 10, 42891, 0, 1, 42893, 74, 1, 42896, 1, 4,
  42912, 1, 10, 42922, 72, 1, 65313, 14, 26,
];
const FOLD_OFFSETS = [
  1, 2, 8, 15, 16, 26, 28, 32, 37, 38, 40, 48, 63, 64, 69, 71, 79, 80, 116, 202,
  203, 205, 206, 207, 209, 210, 211, 213, 214, 217, 218, 219, 775, 7264, 10792, 10795, 23228, 23256, 30204, 54721,
  54753, 54754, 54756, 54787, 54793, 54809, 57153, 57274, 57921, 58019, 58363, 61722, 65268, 65341, 65373, 65406,
  65408, 65410, 65415, 65424, 65436, 65439, 65450, 65462, 65472, 65476, 65478, 65480, 65482, 65488, 65506, 65511,
  65514, 65521, 65527, 65528, 65529,
];

/**
 * unicode61's diacritic removal (fts5_remove_diacritic): key k covers the code points k >> 3 to
 * (k >> 3) + (k & 7), which become the letter at the same place in DIACRITIC_BASES; "-" removes them (the
 * combining diacritics), an uppercase letter marks letters with two diacritics, which remove_diacritics=1
 * keeps as they are.
 */
const DIACRITIC_KEYS = [
  0, 1797, 1848, 1859, 1891, 1928, 1940, 1995, 2024, 2040, 2060, 2110, 2168, 2206, 2264, 2286,
  2344, 2383, 2472, 2488, 2516, 2596, 2668, 2732, 2782, 2842, 2894, 2954, 2984, 3000, 3028, 3336,
  3456, 3696, 3712, 3728, 3744, 3766, 3832, 3896, 3912, 3928, 3944, 3968, 4008, 4040, 4056, 4106,
  4138, 4170, 4202, 4234, 4266, 4296, 4312, 4344, 4408, 4424, 4442, 4472, 4488, 4504, 6148, 6198,
  6264, 6280, 6360, 6429, 6505, 6529, 61448, 61468, 61512, 61534, 61592, 61610, 61642, 61672, 61688, 61704,
  61726, 61784, 61800, 61816, 61836, 61880, 61896, 61914, 61948, 61998, 62062, 62122, 62154, 62184, 62200, 62218,
  62252, 62302, 62364, 62410, 62442, 62478, 62536, 62554, 62584, 62604, 62640, 62648, 62656, 62664, 62730, 62766,
  62830, 62890, 62924, 62974, 63032, 63050, 63082, 63118, 63182, 63242, 63274, 63310, 63368, 63390,
];
const DIACRITIC_BASES = '-aceinouyyacdeeghijklnorstuuwyzouaiouUAgkoOjgnAaeiorusthaeOoOy--------abCddEeEfghhiIklLlmnOprRrsStuUvwwxyzhtwyaAAAeEEioOOOuUUy';

/** The last index whose value is at most `key` in the sorted values at every `stride`-th place of `table`. */
function floorIndex(table: number[], stride: number, key: number): number {
  let lo = 0;
  let hi = table.length / stride - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (table[mid * stride]! <= key) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** What unicode61 writes for the code point (0: nothing). */
function unicode61Fold(c: number): number {
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c;
  // Deseret is the one script beyond the BMP that SQLite's tables fold.
  if (c >= 0x10000) return c >= 0x10400 && c < 0x10428 ? c + 40 : c;
  let folded = c;
  const range = floorIndex(FOLD_RANGES, 3, c) * 3;
  const [first, flags, count] = [FOLD_RANGES[range]!, FOLD_RANGES[range + 1]!, FOLD_RANGES[range + 2]!];
  if (c < first + count && (flags & 1 & (first ^ c)) === 0) folded = (c + FOLD_OFFSETS[flags >> 1]!) & 0xffff;
  const at = floorIndex(DIACRITIC_KEYS, 1, (folded << 3) | 7);
  const key = DIACRITIC_KEYS[at]!;
  const base = DIACRITIC_BASES[at]!;
  if (folded > (key >> 3) + (key & 7) || (base >= 'A' && base <= 'Z')) return folded;
  return base === '-' ? 0 : base.charCodeAt(0);
}

/** unicode61Fold of the BMP code points met so far; 0xffff for the others (U+FFFF is never in a word). */
const bmpFolds = new Uint16Array(0x10000).fill(0xffff);

/** The word as unicode61 writes it (a WORD match: no lone surrogate). */
function normalise(raw: string): string {
  if (ASCII.test(raw)) return raw.toLowerCase();
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const unit = raw.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      out += String.fromCodePoint(unicode61Fold(raw.codePointAt(i)!));
      i++;
      continue;
    }
    let folded = bmpFolds[unit]!;
    if (folded === 0xffff) folded = bmpFolds[unit] = unicode61Fold(unit);
    if (folded) out += String.fromCharCode(folded);
  }
  return out;
}

const STEM_CACHE_LIMIT = 200_000;
const stemCache = new Map<string, string>();

/** Words whose stems are memoised now (for /metrics). */
export function stemCacheSize(): number {
  return stemCache.size;
}

function stemOf(word: string): string {
  let stem = stemCache.get(word);
  if (stem === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stem = porterStem(word);
    stemCache.set(word, stem);
  }
  return stem;
}

/** Every word of the text, stopwords included, with its position. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  // exec, not matchAll: matchAll copies the regex, whose source is long, at every call.
  WORD.lastIndex = 0;
  for (let match = WORD.exec(text); match; match = WORD.exec(text)) {
    const word = normalise(match[0]);
    if (word) out.push({ word, stem: stemOf(word), start: match.index, end: match.index + match[0].length });
  }
  return out;
}

const SEVEN_BIT_WORD = /[a-z0-9]+/g;

/**
 * The normalised words of the text, stopwords included, in order: the words of `tokenize` without their
 * stems and offsets, for indexing (the in-memory full-text copies, src/index/fulltext/, stem each distinct word once). 7-bit text (the usual
 * case) is lowercased once and split with a plain regex, several times faster than word by word.
 */
export function indexedWords(text: string): string[] {
  if (SEVEN_BIT.test(text)) return text.toLowerCase().match(SEVEN_BIT_WORD) ?? [];
  const words = text.match(WORD) ?? [];
  let kept = 0;
  for (const raw of words) {
    const word = normalise(raw);
    if (word) words[kept++] = word;
  }
  words.length = kept;
  return words;
}

/** The Porter stem of a normalised word (memoised). */
export { stemOf };

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** The query's terms: stopwords removed, one per distinct stem, in order of first appearance. */
export function queryTerms(text: string): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const { word, stem } of tokenize(text)) {
    if (isStopword(word) || seen.has(stem)) continue;
    seen.add(stem);
    terms.push({ word, stem });
  }
  return terms;
}
