/** A `close()` for a group of stand-ins: each closed in turn, awaited before the next. */
export function closeInTurn(...servers: { close(): Promise<void> }[]): () => Promise<void> {
  return async () => {
    for (const server of servers) await server.close();
  };
}
