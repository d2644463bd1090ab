/**
 * Every column of a row type, in the order written, checked against the type: a column
 * missing from the list, or one the type does not have, fails to compile. Statements that
 * name their columns (never `*`) read and bind them from these lists.
 */
export function columnsOf<Row>(columns: Record<keyof Row, true>): (keyof Row & string)[] {
  return Object.keys(columns) as (keyof Row & string)[];
}
