/** A column's type as a query answers it: a bare ClickHouse type (EventsQuery) or a [name, type] pair (HogQLQuery). */
export type ColumnTypes = (string | [string, string])[] | null | undefined;

const typeOf = (types: ColumnTypes, i: number): string => {
  const type = types?.[i];
  return Array.isArray(type) ? String(type[1]) : (type ?? '');
};

const cellText = (value: unknown): string =>
  value === null || value === undefined ? 'null' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** Rows of a table query (SQL, a saved table insight), each column headed by its name and type. */
export function RowsTable({ columns, types, results, caption }: { columns: unknown[]; types?: ColumnTypes; results: unknown[][]; caption: string }) {
  return (
    <div class="table-scroll">
      <table class="list sql-rows">
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th scope="col" key={i} data-column={String(column)} data-type={typeOf(types, i)}>
                {String(column)}
                <span class="sql-type">{typeOf(types, i)}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {results.map((row, r) => (
            <tr key={r}>
              {row.map((value, c) => (
                <td key={c} class={value === null ? 'sql-null' : undefined}>
                  {cellText(value)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
