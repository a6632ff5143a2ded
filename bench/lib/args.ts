/** `--name N` from the command line as a number, else `def` (every bench script's options). */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}
