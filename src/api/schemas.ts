/**
 * Schema pieces shared by several routes, and the bounds every request field keeps (issue 19): each
 * string has a maximum length, each list a maximum count, each integer a range, so no request can
 * make a field bigger than the code behind it expects (docs/input-limits.md).
 */

/** Upper bounds of request fields, by kind. */
export const LIMITS = {
  /** An id given in a body or query (Cairn's are 32 hex; others are refused by the service, naming them). */
  id: 128,
  /** Names, titles, model ids, user ids. */
  name: 255,
  /** Descriptions, prompts, avatars (data URLs) and other free text stored as given. */
  text: 65_535,
  /** Chunk content, questions and chat messages: the JSON body limit (1 MiB by default) bounds them first. */
  longText: 1_048_576,
  /** A base64 image: the JSON body limit bounds it first. */
  image: 16 * 1_048_576,
  /**
   * Text in a query string (keywords, search queries). Node refuses a request line and headers over
   * 16 KiB (431), so a query's fields together must fit in that.
   */
  queryText: 1024,
  /** A query-string list item: one id, or a few comma-separated ones; a list has at most 100 items. */
  queryListItem: 128,
  /** Ids in one batch request (datasets, documents, chats, sessions...). */
  ids: 1000,
  /** Chunk ids in one batch request: a document can have thousands of chunks. */
  chunkIds: 10_000,
  /** Other lists: keywords, questions, tags, metadata values. */
  list: 1000,
  /** Chat messages in one request (a whole OpenAI-style history). */
  messages: 1000,
  /** A token count (max_tokens, a model's context size). */
  tokens: 10_000_000,
} as const;

/** The largest page number: with page_size capped at 100 a row offset stays below 10^7, far inside SQLite's int64. */
export const MAX_PAGE = 100_000;
/** The largest page_size accepted; a value above the route's cap reads as the cap (RAGFlow's clients send e.g. 100000). */
export const MAX_PAGE_SIZE_GIVEN = 1_000_000;
/** Schema annotation of page_size: the most rows a page holds (src/api/validation.ts clamps to it). */
export const PAGE_SIZE_CAP = 'x-cap';

/** A string of at most `maxLength` characters. */
export const text = (maxLength: number, minLength?: number) => ({ type: 'string', maxLength, ...(minLength ? { minLength } : {}) });
/** A string or null of at most `maxLength` characters. */
export const nullableText = (maxLength: number) => ({ type: ['string', 'null'], maxLength });
/** A list of at most `maxItems` items. */
export const list = (items: Record<string, unknown>, maxItems: number = LIMITS.list) => ({ type: 'array', items, maxItems });
/** An integer in [minimum, maximum]. */
export const integer = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });
/**
 * Any JSON value, with a string at most `maxLength` long and a list at most `maxItems` long: for keys
 * whose type the service checks itself (with RAGFlow's message) or ignores.
 */
export const anyValue = (maxLength: number = LIMITS.text, maxItems: number = LIMITS.list) => ({ maxLength, maxItems });

/** A non-empty id string in a body. */
export const idString = text(LIMITS.id, 1);
/** Ids in a body. */
export const idList = (maxItems: number = LIMITS.ids) => list(idString, maxItems);
/** A query-string list: repeated (`?a=x&a=y`) or comma-separated (`?a=x,y`); the service splits it. */
export const queryList = list(text(LIMITS.queryListItem), 100);

/** An exact id (32 hex), e.g. the `id` filter of list routes; empty (`id=`) means no filter, as in RAGFlow. */
export const idParam = { type: 'string', pattern: '^([0-9a-f]{32})?$' };

/**
 * `page` and `page_size` as RAGFlow reads them: 0 means the default, a page_size above `cap` reads as
 * `cap`; beyond MAX_PAGE / MAX_PAGE_SIZE_GIVEN (or below 0) they are refused with a 400 naming them.
 */
export function pagingParams(defaultSize = 30, cap = 100) {
  return {
    page: { ...integer(0, MAX_PAGE), default: 1, description: 'The page, from 1; 0 means 1' },
    page_size: {
      ...integer(0, MAX_PAGE_SIZE_GIVEN),
      default: defaultSize,
      [PAGE_SIZE_CAP]: cap,
      description: `Rows per page, at most ${cap}: a larger value reads as ${cap}; 0 means the default (${defaultSize})`,
    },
  };
}

/** The shared paging query: page 1, page_size 30 (capped at 100), desc true. */
export const pagingQuery = {
  type: 'object',
  properties: {
    ...pagingParams(),
    desc: { type: 'boolean', default: true },
  },
};

/**
 * A list route's query: the shared paging, `orderby` among the given columns (create_time by default),
 * exact `id` and `name` filters, plus the route's own filters.
 */
export function listQuery(orderby: string[], extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    properties: {
      ...pagingQuery.properties,
      orderby: { enum: orderby, default: 'create_time' },
      id: idParam,
      name: text(LIMITS.name),
      ...extra,
    },
  };
}

/** The shared delete rule's body: ids (list or null) and delete_all. */
export const deleteBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ids: { ...idList(), type: ['array', 'null'] },
    delete_all: { type: 'boolean', default: false },
  },
};
