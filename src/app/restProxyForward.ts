import type { IncomingMessage, ServerResponse } from 'node:http';
import { populateErrorResponse, populateSuccessfulResponse } from '@discordjs/proxy';
import type { REST, RequestMethod, RouteLike } from '@discordjs/rest';

/** How a forwarded request ended. */
export type ForwardOutcome = 'answered' | 'abandoned' | 'failed';

/**
 * @discordjs/proxy's `proxyRequests`, with two differences. A caller that hangs up while its request waits
 * in the queue (its own REST timed out, and will send it again) has it dropped there instead of sent
 * later: a second copy of the same edit. And a request Discord never answered (refused connection, reset)
 * is answered 502 instead of an empty 200. Each caller's own Authorization header goes on as it came;
 * `auth: false`, so the REST adds no token.
 * @see https://github.com/discordjs/discord.js/blob/main/packages/proxy/src/handlers/proxyRequests.ts
 */
export async function forwardToDiscord(
  rest: REST,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<ForwardOutcome> {
  const url = new URL(req.url ?? '/', 'http://proxy');
  const gaveUp = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) gaveUp.abort();
  });
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'authorization', 'x-audit-log-reason']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  try {
    const answer = await rest.queueRequest({
      fullRoute: url.pathname.replace(/^\/api(\/v\d+)?/, '') as RouteLike,
      // Any method goes on as it came: Discord answers 405 for one it does not take.
      method: req.method as RequestMethod,
      body: req,
      passThroughBody: true,
      auth: false,
      query: url.searchParams,
      headers,
      signal: gaveUp.signal,
    });
    await populateSuccessfulResponse(res, answer);
    return 'answered';
  } catch (error) {
    if (gaveUp.signal.aborted) return 'abandoned';
    if (populateErrorResponse(res, error)) return 'answered';
    if (!res.headersSent) {
      res.writeHead(502, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ message: '502: Discord unreachable', code: 0 }));
    }
    throw error;
  } finally {
    res.end();
  }
}
