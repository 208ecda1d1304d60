import { openSqliteStore } from '../../src/store/sqliteStore.ts';

/** A throwaway in-memory SQLite gating store: the real nonce semantics (atomic single-use consume). */
export function openNonceStore() {
  return openSqliteStore(':memory:');
}
