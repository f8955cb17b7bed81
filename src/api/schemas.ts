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

/** The shared delete rule's body: ids (list or null) and delete_all. */
export const deleteBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ids: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 1000 },
    delete_all: { type: 'boolean', default: false },
  },
};
