import { createHash } from 'node:crypto';

// The live dashboard (`GET /dashboard`): one page, no framework, no CDN. It reads the snapshots of
// `GET /dashboard/stream` (one a second, see dashboard-feed.ts) and draws them with textContent
// and inline SVG only, so nothing it receives is ever parsed as HTML.

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#0f1419;color:#d8dee4}
header{display:flex;gap:1em;align-items:baseline;padding:.6em 1em;background:#161b22;border-bottom:1px solid #30363d}
h1{font-size:1.1em;margin:0}h2{font-size:.95em;margin:0 0 .5em;color:#8b949e;text-transform:uppercase;letter-spacing:.05em}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:1em;padding:1em}
section.wide{grid-column:span 2}@media (max-width:760px){section.wide{grid-column:auto}}
section{background:#161b22;border:1px solid #30363d;border-radius:6px;padding:.8em}
.bar{display:grid;grid-template-columns:7em 1fr 6em;gap:.5em;align-items:center;margin:.3em 0}
.track{height:.8em;background:#21262d;border-radius:3px;overflow:hidden}.fill{height:100%;background:#2f81f7}
.fill.warn{background:#d29922}.fill.full{background:#f85149}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:.15em .4em;border-bottom:1px solid #21262d}
th{color:#8b949e;font-weight:normal}.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:.9em;color:#79c0ff}.muted{color:#8b949e}#status.live{color:#3fb950}#status.down{color:#f85149}#sign-out{margin-left:auto}
.legend span{margin-right:1em}.k-completed{color:#3fb950}.k-cancelled{color:#d29922}.k-failed{color:#f85149}.k-refused{color:#8b949e}
svg{width:100%;height:160px;background:#0d1117;border-radius:4px}
[hidden]{display:none!important}dl{display:grid;grid-template-columns:auto auto;gap:.1em 1em;margin:0}dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
`;

const SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const fmt = (n) => Number(n).toLocaleString('en');
const time = (ms) => new Date(ms).toLocaleTimeString();
function bar(id, used, limit) {
  const row = $(id);
  row.dataset.used = used; row.dataset.limit = limit;
  row.querySelector('.count').textContent = fmt(used) + ' / ' + fmt(limit);
  const share = limit > 0 ? Math.min(1, used / limit) : 0;
  const fill = row.querySelector('.fill');
  fill.style.width = (share * 100).toFixed(1) + '%';
  fill.className = 'fill' + (share >= 1 ? ' full' : share >= 0.75 ? ' warn' : '');
}
function renderScheduler(s) {
  bar('slots', s.preparing + s.executing, s.limits.maxConcurrency);
  bar('queue', s.queued, s.limits.maxQueued);
  bar('inflight', s.inflight, s.limits.maxInflight);
  $('phases').textContent = 'preparing ' + s.preparing + ' · executing ' + s.executing + ' · cleaning ' + s.cleaning + (s.accepting ? '' : ' · not accepting');
}
function renderModels(models, total) {
  const body = $('model-rows'); body.replaceChildren();
  for (const m of models) {
    const tr = el('tr'); tr.dataset.testid = 'model-row'; tr.dataset.model = m.model; tr.dataset.slots = m.slots; tr.dataset.refusals = m.refusals;
    const name = el('td'); name.append(el('code', m.model));
    tr.append(name, el('td', m.slots + ' / ' + m.limits.maxConcurrency, 'num'), el('td', m.queued + ' / ' + m.limits.maxQueued + (m.waiting > 0 ? ' +' + m.waiting : ''), 'num'),
      el('td', m.inflight + ' / ' + m.limits.maxInflight, 'num'), el('td', fmt(m.refusals), 'num refusals'));
    if (!m.accepting) tr.classList.add('muted');
    body.append(tr);
  }
  const cap = $('total-slots');
  if (total === null) { cap.hidden = true; return; }
  cap.hidden = false; bar('total-slots', total.used, total.limit);
}
function renderSessions(x) {
  $('session-count').textContent = fmt(x.count) + ' open · ' + fmt(x.pendingPrompts) + ' pending' + (x.maxPendingPromptsPerSession === null ? '' : ' · limit ' + x.maxPendingPromptsPerSession + ' per session');
  const body = $('session-rows'); body.replaceChildren();
  for (const row of x.top) {
    const tr = el('tr'); tr.dataset.testid = 'session-row'; tr.dataset.sessionId = row.sessionId; tr.dataset.pending = row.pendingPrompts;
    tr.append(el('td', row.sessionId, 'id'), el('td', row.pendingPrompts, 'num pending'), el('td', row.running ? 'running' : 'idle'), el('td', row.clients, 'num'));
    body.append(tr);
  }
  if (x.top.length === 0) { const tr = el('tr'); const td = el('td', 'no open sessions', 'muted'); td.colSpan = 4; tr.append(td); body.append(tr); }
}
function renderRefusals(list) {
  const body = $('refusal-rows'); body.replaceChildren();
  for (const r of list) {
    const tr = el('tr'); tr.dataset.testid = 'refusal'; tr.dataset.code = r.code;
    const code = el('td'); code.append(el('code', r.code));
    const session = el('td', r.sessionId === undefined ? '–' : r.sessionId.slice(0, 8)); if (r.sessionId) session.title = r.sessionId;
    tr.append(el('td', time(r.lastAt)), el('td', r.layer), code, session, el('td', fmt(r.count), 'num'), el('td', r.message, 'muted'));
    body.append(tr);
  }
  if (list.length === 0) { const tr = el('tr'); const td = el('td', 'none yet', 'muted'); td.colSpan = 6; tr.append(td); body.append(tr); }
}
const KINDS = ['completed', 'cancelled', 'failed', 'refused'];
const COLORS = { completed: '#3fb950', cancelled: '#d29922', failed: '#f85149', refused: '#8b949e' };
function renderChart(series) {
  const svg = $('turn-chart'); svg.replaceChildren(); svg.dataset.points = series.length;
  const W = 600, H = 160, P = 4, slots = Math.max(30, series.length);
  let max = 1; for (const p of series) for (const k of KINDS) max = Math.max(max, p[k]);
  const x = (i) => P + ((slots - series.length + i) / (slots - 1)) * (W - 2 * P);
  const y = (v) => H - P - (v / max) * (H - 2 * P);
  for (const k of KINDS) {
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', series.map((p, i) => x(i).toFixed(1) + ',' + y(p[k]).toFixed(1)).join(' '));
    line.setAttribute('fill', 'none'); line.setAttribute('stroke', COLORS[k]); line.setAttribute('stroke-width', '2');
    if (k === 'refused') line.setAttribute('stroke-dasharray', '4 3');
    line.dataset.kind = k; svg.append(line);
  }
  $('chart-scale').textContent = 'max ' + fmt(max) + '/s over the last ' + series.length + ' s';
  const last = series[series.length - 1];
  const rate = $('journal-rate'); rate.dataset.rate = last ? last.journalRecords : 0;
  rate.textContent = fmt(last ? last.journalRecords : 0) + ' records/s';
}
function renderTotals(t) {
  const rows = [['prompts admitted', t.promptsAdmitted], ['prompts refused', t.promptsRefused], ['turns completed', t.turnsCompleted],
    ['turns cancelled', t.turnsCancelled], ['turns failed', t.turnsFailed], ['model calls refused', t.modelCallsRefused],
    ['journal records', t.journalRecords], ['SSE subscribers', t.sseSubscribers], ['SSE evictions', t.sseEvictions],
    ['event ring bytes', t.eventRingBytesLimit === null ? fmt(t.eventRingBytes) : fmt(t.eventRingBytes) + ' / ' + fmt(t.eventRingBytesLimit)],
    ['tokens in / out', fmt(t.inputTokens) + ' / ' + fmt(t.outputTokens)], ['agent processes', t.agentProcesses],
    ['agent sessions', t.agentSessions], ['agent memory', fmt(t.agentRssBytes) + ' / ' + fmt(t.agentMemoryBudgetBytes)],
    ['interrupted at start-up', t.interruptedCalls === null ? '…' : t.interruptedCalls]];
  const list = $('totals'); list.replaceChildren();
  for (const [name, value] of rows) list.append(el('dt', name), el('dd', typeof value === 'number' ? fmt(value) : value));
}
function render(s) {
  renderScheduler(s.scheduler); renderModels(s.models, s.totalSlots); renderSessions(s.sessions); renderRefusals(s.refusals); renderChart(s.series); renderTotals(s.totals);
  $('updated').textContent = 'updated ' + time(s.at);
}
const status = (text, cls) => { const e = $('status'); e.textContent = text; e.className = cls; };
const stream = new EventSource('/dashboard/stream');
stream.addEventListener('snapshot', (event) => render(JSON.parse(event.data)));
stream.onopen = () => status('live', 'live');
stream.onerror = () => status(stream.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…', 'down');
`;

const bar = (id: string, name: string, hidden = false): string =>
  `<div class="bar" id="${id}" data-testid="${id}"${hidden ? ' hidden' : ''}><span>${name}</span><div class="track"><div class="fill"></div></div><span class="count num">–</span></div>`;

/** The dashboard page. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sluice dashboard</title><style>${STYLE}</style></head>
<body><header><h1>Sluice</h1><span id="status">connecting…</span><span id="updated" class="muted"></span><form id="sign-out" method="post" action="/dashboard/sign-out"><button type="submit">Sign out</button></form></header>
<main>
<section><h2>Model scheduler</h2>${bar('slots', 'slots')}${bar('queue', 'queue')}${bar('inflight', 'in flight')}<div id="phases" class="muted"></div></section>
<section><h2>Models</h2>${bar('total-slots', 'all models', true)}<table><thead><tr><th>model</th><th class="num">slots</th><th class="num">queue</th><th class="num">in flight</th><th class="num">refused</th></tr></thead><tbody id="model-rows"></tbody></table></section>
<section><h2>Turns per second</h2><svg id="turn-chart" data-testid="turn-chart" viewBox="0 0 600 160" preserveAspectRatio="none" role="img" aria-label="turn outcomes per second"></svg>
<div class="legend"><span class="k-completed">completed</span><span class="k-cancelled">cancelled</span><span class="k-failed">failed</span><span class="k-refused">refused prompts</span></div>
<div class="muted"><span id="chart-scale"></span> · journal <span id="journal-rate" data-testid="journal-rate">–</span></div></section>
<section><h2>Sessions</h2><div id="session-count" class="muted"></div><table><thead><tr><th>session</th><th class="num">pending</th><th>state</th><th class="num">clients</th></tr></thead><tbody id="session-rows"></tbody></table></section>
<section class="wide"><h2>Last refusals</h2><table><thead><tr><th>last</th><th>layer</th><th>code</th><th>session</th><th class="num">×</th><th>reason</th></tr></thead><tbody id="refusal-rows"></tbody></table></section>
<section><h2>Totals since start</h2><dl id="totals"></dl></section>
</main><script>${SCRIPT}</script></body></html>
`;

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's Content-Security-Policy: its own inline script and style only, and its stream. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
