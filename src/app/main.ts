/**
 * `npm start`. Node's compile cache goes on first, so every module after it (all of the bot) is compiled
 * from the cache on later starts: a replacement web replica answers sooner.
 * @see https://nodejs.org/api/module.html#module-compile-cache
 */
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./run.ts');
