/** `npm start`'s command as package.json's start script states it: node's flags and the entry it runs. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE = fileURLToPath(new URL('../package.json', import.meta.url));

/** The start script's node flags (e.g. the V8 ones) and its entry (`dist/main.js`, relative to the project). */
export function npmStartCommand(): { flags: string[]; entry: string } {
  const start = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [node, ...args] = start.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`the start script runs ${node}, not node: ${start}`);
  return { flags: args.filter((a) => a.startsWith('-')), entry: args.find((a) => !a.startsWith('-')) ?? '' };
}
