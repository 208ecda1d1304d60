/**
 * What a web replica loads (INTERACTIONS=http, issue #18): each module is memory in every replica, so
 * the gateway side (discord.js, the sharding code, viem) and Node's own copy of undici stay out of it.
 * A child process imports the replica's entry module and reports every module it resolved.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HTTP_MODE = fileURLToPath(new URL('../../src/app/httpMode.ts', import.meta.url));

const REPORT = `
import { registerHooks, syncBuiltinESMExports } from 'node:module';
import fs from 'node:fs';
const resolved = [];
const read = [];
const readFileSync = fs.readFileSync;
fs.readFileSync = (file, ...rest) => { read.push(String(file)); return readFileSync(file, ...rest); };
syncBuiltinESMExports();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); resolved.push(r.url); return r; } });
await import(${JSON.stringify(HTTP_MODE)});
process.stdout.write(JSON.stringify({ resolved, read, builtins: process.moduleLoadList }));
`;

interface Loaded {
  resolved: string[];
  read: string[];
  builtins: string[];
}

function loadedByReplica(): Loaded {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', REPORT], { encoding: 'utf8' });
  return JSON.parse(out) as Loaded;
}

describe('a web replica', () => {
  const { resolved, read, builtins } = loadedByReplica();

  it('loads its own modules (the check sees them)', () => {
    expect(resolved.some((url) => url.endsWith('/src/web/interactions.ts'))).toBe(true);
    expect(resolved.some((url) => url.includes('/node_modules/fastify/'))).toBe(true);
  });

  it('loads none of the gateway side', () => {
    const gatewaySide = /\/node_modules\/(discord\.js|@discordjs|discord-hybrid-sharding|viem)\//;
    expect(resolved.filter((url) => gatewaySide.test(url))).toEqual([]);
  });

  it("does not load Node's own undici (an ES import of node:http would)", () => {
    expect(builtins.filter((name) => name.includes('undici'))).toEqual([]);
  });

  it('reads the en-US catalogs only: the others wait for a member who uses them', () => {
    const catalogs = read.filter((file) => file.includes('/i18n/locales/'));
    expect(catalogs.map((file) => file.replace(/.*\/locales\//, '')).sort()).toEqual([
      'en-US.json',
      'gating/en-US.json',
      'web/en-US.json',
    ]);
  });
});
