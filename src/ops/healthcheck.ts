import { isHeartbeatFresh } from './heartbeat.ts';

/** Container health check: exit 0 when the running bot's heartbeat is fresh. */
const healthy = await isHeartbeatFresh(process.env.DATA_DIR?.trim() || './data');
process.exit(healthy ? 0 : 1);
