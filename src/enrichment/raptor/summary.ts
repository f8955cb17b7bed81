import type { EnrichmentCall } from '../cached-calls.js';
import { countTokens, splitByTokenWindow } from '../../text/tokens.js';

/** The cache kind of RAPTOR's summary calls. */
export const SUMMARY_CALL_KIND = 'raptor-summary';

/** Room kept for the prompt's own wording and the message framing. */
const FRAMING_TOKENS = 32;
/** Each text keeps at least this many tokens, however many share the context. */
const MIN_TOKENS_PER_TEXT = 16;

/**
 * The model call that summarises one cluster, RAGFlow's: the prompt with `{cluster_content}` replaced by
 * the texts (one per line, each cut to an equal share of the context left after the prompt and the
 * answer), temperature 0.3, max_tokens = raptor.max_token. A prompt without the placeholder gets the texts
 * after it.
 */
export function summaryCall(texts: string[], settings: { prompt: string; maxToken: number }, contextTokens: number): EnrichmentCall {
  const room = contextTokens - settings.maxToken - countTokens(settings.prompt) - FRAMING_TOKENS;
  const perText = Math.max(MIN_TOKENS_PER_TEXT, Math.floor(room / Math.max(1, texts.length)));
  const content = texts.map((t) => cutToTokens(t, perText)).join('\n');
  const user = settings.prompt.includes('{cluster_content}')
    ? settings.prompt.replaceAll('{cluster_content}', () => content)
    : `${settings.prompt}\n\n${content}`;
  return {
    kind: SUMMARY_CALL_KIND,
    messages: [
      { role: 'system', content: "You're a helpful assistant." },
      { role: 'user', content: user },
    ],
    options: { temperature: 0.3, max_tokens: settings.maxToken },
  };
}

/** The start of `text` that fits in `maxTokens` tokens. */
function cutToTokens(text: string, maxTokens: number): string {
  if (text.length <= maxTokens) return text; // a token is at least one character
  if (countTokens(text) <= maxTokens) return text;
  let kept = '';
  let tokens = 0;
  for (const piece of splitByTokenWindow(text, maxTokens)) {
    const n = countTokens(piece);
    if (tokens + n > maxTokens) break;
    kept += piece;
    tokens += n;
  }
  return kept;
}

/** The summary in a model's answer: reasoning before a closing `</think>` dropped, whitespace trimmed ('' = none). */
export function summaryText(answer: string): string {
  const end = answer.lastIndexOf('</think>');
  return (end >= 0 ? answer.slice(end + '</think>'.length) : answer).trim();
}
