/** What every list operation takes (spec "Endpoints": shared paging), with its sortable columns. */
export interface ListPage<OrderBy extends string> {
  page: number;
  page_size: number;
  orderby: OrderBy;
  desc: boolean;
  /** Exact filters. */
  id?: string;
  name?: string;
}
