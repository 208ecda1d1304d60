// TODO(gating): import from '../text/safety.ts' in src/gating/ (logChannel.ts, roleSync.ts, roleWorker.ts, service.ts), then delete this file.
/** Temporary shim: text safety moved to `src/text/safety.ts`, message clamping to `./clamp.ts`. */
export { escapeLine, truncate } from '../text/safety.ts';
