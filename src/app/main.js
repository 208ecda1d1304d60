/**
 * The bot from its TypeScript sources, without a build: `node src/app/main.js` (`npm start` runs the
 * bundle in dist/ instead: scripts/build.ts). Plain JavaScript, so that nothing before Node's compile
 * cache needs the TypeScript transformer: with the cache warm (any start after the first on a machine),
 * every module comes compiled from it, and the transformer (a WASM module of about 20 MiB) is never
 * loaded at all.
 * @see https://nodejs.org/api/module.html#module-compile-cache
 */
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./run.ts');
