/**
 * This process among every process sharing the store: host, pid and a random part (a restarted container
 * often gets the same pid back). Claims and leases in the store name it, so a process that takes a dead
 * one's claim over knows which leases died with it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export const PROCESS_INSTANCE = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
