import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible upstream (`POST /v1/chat/completions`, non-streamed) that counts the
 * calls it is serving at once and the most it ever served at once — what a provider with a
 * concurrency limit sees. Each call is answered after `holdMs`, or, while `held` is set, only
 * when the test calls `releaseHeld()`.
 */
export class CountingUpstream {
  active = 0;
  maxActive = 0;
  total = 0;
  /** Answer nothing until {@link releaseHeld}. */
  held = false;
  private readonly waiting: Array<() => void> = [];
  private readonly server = createServer((request, response) => this.serve(request, response));

  constructor(private readonly holdMs: number) {}

  /** Listens on a loopback port; resolves with the base URL (ending in `/v1`). */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Answers every held call. */
  releaseHeld(): void {
    this.held = false;
    for (const answer of this.waiting.splice(0)) answer();
  }

  async close(): Promise<void> {
    this.releaseHeld();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    request.resume();
    this.total++;
    this.maxActive = Math.max(this.maxActive, ++this.active);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      this.active--;
    };
    response.once('close', finish);
    const answer = (): void => {
      if (response.destroyed) return finish();
      finish();
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${this.total}`,
          object: 'chat.completion',
          created: 0,
          model: 'fleet-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    };
    request.once('end', () => {
      if (this.held) this.waiting.push(answer);
      else setTimeout(answer, this.holdMs);
    });
  }
}
