import fs from 'node:fs';
import { DaemonClient } from '@qwen-code/sdk/daemon';
import { loadQwenAgentScript, startModel, subjects, startSubject } from './agents-subjects.js';
import { treePids } from './proc-tree.js';
const which = Number(process.argv[2] ?? 1);
const extraArgs = process.argv.slice(3);
const qwen = await loadQwenAgentScript();
const install = await qwen.installQwenAgent();
const model = await startModel();
const subject = subjects(install, { args: extraArgs, env: process.env.AGENTNODE ? { NODE_OPTIONS: process.env.AGENTNODE } : {} })[which];
if (process.env.NODEFLAGS) { const c = subject.command; subject.command = (...a) => { const [cmd, args] = c(...a); return [process.execPath, [...process.env.NODEFLAGS.split(" "), cmd, ...args]]; }; }
const d = await startSubject(subject, qwen, model.url);
const rss = () => treePids(d.child.pid).map((pid) => {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(st)[1]);
  const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 3).join(' ').slice(-60);
  return `${pid} ${(kb / 1024).toFixed(0)} MiB ${cmd}`;
});
const client = new DaemonClient({ baseUrl: d.url, fetchTimeoutMs: 300000 });
const text = (v) => ({ prompt: [{ type: 'text', text: v }] });
await new Promise((r) => setTimeout(r, 3000));
console.log('idle after start', rss());
const ids = [];
for (let i = 0; i < 2; i++) { const s = await client.createOrAttachSession({ workspaceCwd: d.workspace, sessionScope: 'thread' }); ids.push(s.sessionId); await client.prompt(s.sessionId, text('Say done.')); }
await new Promise((r) => setTimeout(r, 1000));
console.log('2 sessions', rss());
let t = performance.now();
ids.push(...(await Promise.all(Array.from({ length: 12 }, () => client.createOrAttachSession({ workspaceCwd: d.workspace, sessionScope: 'thread' })))).map((s) => s.sessionId));
console.log('12 creates ms', (performance.now() - t).toFixed(0));
while (ids.length < 16) ids.push((await client.createOrAttachSession({ workspaceCwd: d.workspace, sessionScope: 'thread' })).sessionId);
const cpu = () => { const f = fs.readFileSync(`/proc/${d.child.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const c0 = cpu(); t = performance.now();
await Promise.all(ids.flatMap((id) => Array.from({ length: 5 }, () => client.prompt(id, text('Say done.')).catch(() => {}))));
console.log('daemon cpu ms for 80 turns', cpu() - c0, 'wall', (performance.now() - t).toFixed(0));
await new Promise((r) => setTimeout(r, 1000));
console.log('16 sessions after turns', rss());
const m = await (await fetch(d.url + '/metrics')).text(); console.log(m.split('\n').filter((l) => /^(nodejs_heap_size|nodejs_external|process_resident|nodejs_heap_space_size_used)/.test(l)).join('\n'));
if (process.env.SNAP) { process.kill(d.child.pid, 'SIGUSR2'); await new Promise((r) => setTimeout(r, 15000)); }
await d.stop(); model.child.kill();
process.exit(0);
