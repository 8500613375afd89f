// The model both agent daemons of `bench/agents.js` talk to: a small OpenAI-compatible server on
// loopback, run as a child process of its own so that it shares no event loop with the load
// generator. Every chat completion answers the same short text, streamed word by word after a
// first-token delay and a delay between words, as a hosted model would (only faster). It counts
// the calls it answered: `GET /calls` → `{ calls, requestBytes }`, so the bench can check that both daemons
// made their agents do the same work, with what it answers (`words`, `firstTokenMs`, `chunkMs`).
//
// Environment: FIRST_TOKEN_MS (default 40), CHUNK_MS (default 8). Prints
// `model listening on http://127.0.0.1:<port>/v1` when ready.
import http from 'node:http';

const FIRST_TOKEN_MS = Number(process.env.FIRST_TOKEN_MS ?? 40);
const CHUNK_MS = Number(process.env.CHUNK_MS ?? 8);
const ANSWER = 'Done. The change is small and the tests pass; nothing else needs doing here.';
const WORDS = ANSWER.split(/(?<= )/);
const USAGE = { prompt_tokens: 900, completion_tokens: WORDS.length, total_tokens: 900 + WORDS.length };

let calls = 0;
/** The bytes of every chat completion request body received so far. */
let requestBytes = 0;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function head(body) {
  return {
    id: `chatcmpl-bench-${calls}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'bench',
  };
}

async function stream(res, body) {
  const base = { ...head(body), object: 'chat.completion.chunk' };
  const usage = body.stream_options?.include_usage === true;
  const send = (choices, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ ...base, choices, ...(usage ? { usage: null } : {}), ...extra })}\n\n`,
    );
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  await sleep(FIRST_TOKEN_MS);
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (const [i, word] of WORDS.entries()) {
    if (i > 0) await sleep(CHUNK_MS);
    if (res.destroyed) return;
    send([{ index: 0, delta: { content: word }, finish_reason: null }]);
  }
  send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  if (usage) send([], { usage: USAGE });
  res.end('data: [DONE]\n\n');
}

async function complete(res, body) {
  await sleep(FIRST_TOKEN_MS + CHUNK_MS * WORDS.length);
  const message = { role: 'assistant', content: ANSWER, refusal: null };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      ...head(body),
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: 'stop', logprobs: null }],
      usage: USAGE,
    }),
  );
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/calls') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        calls,
        requestBytes,
        words: WORDS.length,
        firstTokenMs: FIRST_TOKEN_MS,
        chunkMs: CHUNK_MS,
      }),
    );
  }
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', () => {
    if (!req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({ error: { message: `no route ${req.url}`, type: 'invalid_request_error' } }),
      );
    }
    calls++;
    requestBytes += Buffer.byteLength(raw);
    const body = JSON.parse(raw);
    (body.stream === true ? stream(res, body) : complete(res, body)).catch(() => res.destroy());
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`model listening on http://127.0.0.1:${server.address().port}/v1\n`);
});
