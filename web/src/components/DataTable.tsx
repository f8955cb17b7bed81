import type { ReactNode } from 'react';

export interface Column<T> {
  /** The header, and the cell's label when the table stacks into cards on a narrow screen. */
  label: string;
  cell: (row: T) => ReactNode;
}

/**
 * A table of rows: a caption for screen readers, a header per column, and an optional last column of
 * row actions. Each cell carries its column's label (data-label), which the narrow layout shows.
 */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  rowAttributes,
  actions,
  className,
}: {
  caption: ReactNode;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string | number;
  /** Extra attributes of a row's <tr> (data-* hooks). */
  rowAttributes?: (row: T) => Record<string, string>;
  actions?: (row: T) => ReactNode;
  className?: string;
}) {
  return (
    <div className="table-wrap">
      <table className={className}>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.label}>
                {c.label}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowAttributes?.(row)}>
              {columns.map((c) => (
                <td key={c.label} data-label={c.label}>
                  {c.cell(row)}
                </td>
              ))}
              {actions && <td className="row-actions">{actions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
