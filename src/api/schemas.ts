/** Schema pieces shared by several routes. */
export const idParam = { type: 'string', pattern: '^[0-9a-f]{32}$' };

/** The shared paging query: page 1, page_size 30 (capped at 100), desc true. */
export const pagingQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
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
      name: { type: 'string' },
      ...extra,
    },
  };
}

/** The shared delete rule's body: ids (list or null) and delete_all. */
export const deleteBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ids: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 1000 },
    delete_all: { type: 'boolean', default: false },
  },
};
