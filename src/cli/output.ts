/** Standard output carries the command's one document (or lines); diagnostics go to stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `--json` anywhere before `--`: decided from the arguments, so usage errors honour it too. */
export function wantsJson(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/** A list: a JSON array with --json; otherwise one line per item, or `empty` when there is none. */
export function printList<T>(
  items: T[],
  json: boolean | undefined,
  empty: string,
  line: (item: T) => string,
): void {
  if (json) return printJson(items);
  if (items.length === 0) return console.log(empty);
  for (const item of items) console.log(line(item));
}
