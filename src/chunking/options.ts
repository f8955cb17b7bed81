import { parseDelimiters, type Delimiters } from '../text/delimiters.js';

/** What the text-merging methods read from parser_config, with fallbacks for keys a config lacks. */
export interface TextOptions {
  maxTokens: number;
  delimiters: Delimiters;
  /** Render tables as HTML instead of " | "-joined lines. */
  html4excel: boolean;
}

const DEFAULT_DELIMITER = '\n';

/**
 * Reads chunk_token_num, delimiter and html4excel. `fallbackTokens` is the method's own default for
 * configs without chunk_token_num (methods whose parser_config has no such key still need a size).
 */
export function textOptions(config: Record<string, unknown>, fallbackTokens: number): TextOptions {
  const n = config.chunk_token_num;
  const delimiter = config.delimiter;
  return {
    maxTokens: typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : fallbackTokens,
    delimiters: parseDelimiters(typeof delimiter === 'string' && delimiter.length > 0 ? delimiter : DEFAULT_DELIMITER),
    html4excel: config.html4excel === true,
  };
}

/** The children delimiter when parent_child is switched on, else undefined. */
export function childrenDelimiters(config: Record<string, unknown>): Delimiters | undefined {
  const pc = config.parent_child;
  if (!pc || typeof pc !== 'object' || (pc as Record<string, unknown>).use_parent_child !== true) return undefined;
  const d = (pc as Record<string, unknown>).children_delimiter;
  return parseDelimiters(typeof d === 'string' && d.length > 0 ? d : DEFAULT_DELIMITER);
}
