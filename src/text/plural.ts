/** A count with its noun in the right number: "1 post", "2 posts", "0 posts". */
export function plural(count: number, one: string, many: string = one + 's'): string {
  return `${count} ${count === 1 || count === -1 ? one : many}`;
}
