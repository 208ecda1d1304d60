import type { NonceRecord, NonceStore } from '../../src/gating/siwe.ts';

/** An in-memory NonceStore with the store contract's semantics (atomic single-use consume). */
export async function openNonceStore(): Promise<NonceStore & { close(): Promise<void> }> {
  const nonces = new Map<string, NonceRecord>();
  return {
    async createNonce(record) {
      if (nonces.has(record.nonce)) throw new Error('duplicate nonce');
      nonces.set(record.nonce, { ...record, usedAt: null });
    },
    async consumeNonce(nonce, now) {
      const record = nonces.get(nonce);
      if (!record || record.usedAt !== null || record.expiresAt <= now) return undefined;
      const used = { ...record, usedAt: now };
      nonces.set(nonce, used);
      return { ...used };
    },
    async getNonce(nonce) {
      const record = nonces.get(nonce);
      return record && { ...record };
    },
    async close() {
      nonces.clear();
    },
  };
}
