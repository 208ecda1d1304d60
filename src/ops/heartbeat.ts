import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const HEARTBEAT_FILE = 'heartbeat';
export const HEARTBEAT_INTERVAL_MS = 15_000;

/**
 * Touch `<dataDir>/heartbeat` while `isHealthy()` holds. The container health check reads its age, so
 * health needs no open port and works the same with or without the verification page.
 */
export async function startHeartbeat(dataDir: string, isHealthy: () => boolean): Promise<() => void> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, HEARTBEAT_FILE);
  const beat = () => {
    if (isHealthy()) void writeFile(path, String(Date.now())).catch(() => {});
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** True when the heartbeat was written within three intervals. */
export async function isHeartbeatFresh(dataDir: string, now = Date.now()): Promise<boolean> {
  try {
    const { mtimeMs } = await stat(join(dataDir, HEARTBEAT_FILE));
    return now - mtimeMs < HEARTBEAT_INTERVAL_MS * 3;
  } catch {
    return false;
  }
}
