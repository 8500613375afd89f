// Rule checkers for deploy/Dockerfile and deploy/sluice.service, in the spirit of hadolint and
// `systemd-analyze security`: no Docker engine is needed to check what an image build would do
// wrong. Each returns the broken rules as messages; an empty list is a clean file.

/** One Dockerfile instruction, continuation lines joined. */
export interface Instruction {
  line: number;
  keyword: string;
  args: string;
}

/** The instructions of a Dockerfile: comments and blank lines dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { line: number; text: string } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === undefined && (line === '' || line.startsWith('#'))) return;
    if (pending !== undefined && line.startsWith('#')) return;
    const part = line.endsWith('\\') ? line.slice(0, -1).trim() : line;
    pending =
      pending === undefined
        ? { line: index + 1, text: part }
        : { ...pending, text: `${pending.text} ${part}` };
    if (line.endsWith('\\')) return;
    const [keyword = '', ...rest] = pending.text.split(/\s+/);
    instructions.push({ line: pending.line, keyword: keyword.toUpperCase(), args: rest.join(' ') });
    pending = undefined;
  });
  return instructions;
}

/** The arguments of an exec-form (JSON array) instruction, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  const json = args.replace(/^(--\S+\s+)*/, '').replace(/^CMD\s+/i, '');
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The value after `flag` among exec-form arguments. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at >= 0 ? args[at + 1] : undefined;
}

function expandArgs(image: string, defaults: Map<string, string>): string {
  return image.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => defaults.get(name) ?? whole);
}

/** The hadolint-style rules Sluice's image must keep; returns what it breaks. */
export function lintDockerfile(text: string): string[] {
  const instructions = parseDockerfile(text);
  const problems: string[] = [];
  const argDefaults = new Map<string, string>();
  const stages: string[] = [];
  let finalStage = 0;
  instructions.forEach((instruction, index) => {
    const { keyword, args, line } = instruction;
    const at = `line ${line}`;
    if (keyword === 'ARG' && stages.length === 0) {
      const [name, value] = args.split('=', 2);
      if (name !== undefined && value !== undefined) argDefaults.set(name, value);
    }
    if (keyword === 'FROM') {
      const [image = '', , alias] = args.replace(/^--platform=\S+\s+/, '').split(/\s+/);
      const resolved = expandArgs(image, argDefaults);
      if (!stages.includes(image)) {
        if (resolved.includes('$')) problems.push(`${at}: FROM ${image}: an ARG without a default`);
        else problems.push(...lintBaseImage(resolved, at));
      }
      if (alias !== undefined) stages.push(alias);
      else stages.push(`#${stages.length}`);
      finalStage = index;
    }
    if (keyword === 'ADD' && !/^(--\S+\s+)*(https?:|git@)/.test(args))
      problems.push(`${at}: COPY local files instead of ADD (DL3020)`);
    if (keyword === 'RUN') problems.push(...lintRun(args, at));
    if ((keyword === 'CMD' || keyword === 'ENTRYPOINT') && execForm(args) === undefined)
      problems.push(`${at}: ${keyword} in exec form, a JSON array, so signals reach node (DL3025)`);
    if (keyword === 'WORKDIR' && !args.startsWith('/'))
      problems.push(`${at}: WORKDIR must be absolute (DL3000)`);
    if (keyword === 'ENV' && /\b(SLUICE_TOKEN|QWEN_SERVER_TOKEN|OPENAI_API_KEY)=/.test(args))
      problems.push(`${at}: no secret in ENV: it stays in the image`);
  });
  if (stages.length < 2) problems.push('a multi-stage build: compilers stay out of the runtime image');
  problems.push(...lintFinalStage(instructions.slice(finalStage)));
  return problems;
}

/** A base image pinned by digest, or by a tag that starts with a full version (`20.20.2-bookworm-slim`). */
function lintBaseImage(image: string, at: string): string[] {
  const name = image.split('/').pop()!;
  const node = /^node:v?(\d+)\./.exec(name);
  if (node !== null && (Number(node[1]) < MIN_NODE_MAJOR || Number(node[1]) % 2 === 1))
    return [`${at}: FROM ${image}: a maintained Node LTS line (an even major, ${MIN_NODE_MAJOR} or later)`];
  if (name.includes('@sha256:')) return [];
  const tag = name.includes(':') ? name.slice(name.indexOf(':') + 1) : undefined;
  if (tag === undefined) return [`${at}: FROM ${image}: pin the base image's version (DL3006)`];
  if (/^latest\b/.test(tag)) return [`${at}: FROM ${image}: not latest (DL3007)`];
  if (!/^v?\d+\.\d+\.\d+/.test(tag))
    return [`${at}: FROM ${image}: pin a full version tag (major.minor.patch) or a digest`];
  return [];
}

/** The oldest Node major an image may run: LTS lines are even, and Node 20 left maintenance in April 2026. */
export const MIN_NODE_MAJOR = 24;

function lintRun(args: string, at: string): string[] {
  const problems: string[] = [];
  for (const command of args.split(/&&|\|\||;/)) {
    const install = /\bnpm\s+(?:install|i)\b(.*)/.exec(command);
    if (install === null) continue;
    const words = install[1]!.trim().split(/\s+/).filter(Boolean);
    // A project's dependencies come from its lockfile; only a global install of something pinned
    // (a packed .tgz, or name@version) may use npm install.
    if (!words.includes('-g') && !words.includes('--global'))
      problems.push(`${at}: npm ci, not npm install: the lockfile decides`);
    const specs = words.filter((word, i) => !word.startsWith('-') && words[i - 1] !== '--prefix');
    for (const spec of specs.map((word) => word.replace(/^["']|["']$/g, '')))
      if (!spec.endsWith('.tgz') && !/^@?[^@]+@\S+$/.test(spec))
        problems.push(`${at}: npm install -g ${spec}: pin a version (name@version) or install a packed .tgz`);
  }
  if (/\bsudo\b/.test(args)) problems.push(`${at}: no sudo (DL3004)`);
  if (/apt-get\s+install/.test(args)) {
    if (!args.includes('--no-install-recommends'))
      problems.push(`${at}: apt-get install --no-install-recommends (DL3015)`);
    if (!/-y\b|--yes\b/.test(args)) problems.push(`${at}: apt-get install -y (DL3014)`);
    if (!args.includes('rm -rf /var/lib/apt/lists'))
      problems.push(`${at}: remove /var/lib/apt/lists (DL3009)`);
  }
  return problems;
}

/** The runtime image: what it holds, who it runs as, its health check, its volume, port and command. */
function lintFinalStage(stage: Instruction[]): string[] {
  const problems: string[] = [];
  for (const copy of stage.filter((i) => i.keyword === 'COPY' && /node_modules/.test(i.args)))
    problems.push(
      `line ${copy.line}: the runtime stage holds the installed daemon tarball (the bundle and better-sqlite3), not a node_modules`,
    );
  const last = (keyword: string): Instruction | undefined =>
    stage.filter((i) => i.keyword === keyword).at(-1);
  const user = last('USER')?.args.split(':')[0];
  if (user === undefined || user === 'root' || user === '0')
    problems.push('the runtime stage needs a non-root USER (DL3002)');
  const health = last('HEALTHCHECK');
  if (health === undefined || /^NONE\b/i.test(health.args))
    problems.push('the runtime stage needs a HEALTHCHECK');
  const command = [
    ...(execForm(last('ENTRYPOINT')?.args ?? '') ?? []),
    ...(execForm(last('CMD')?.args ?? '') ?? []),
  ];
  if (!command.includes('serve')) problems.push('the command must run `serve`');
  const dataDir = flagValue(command, '--data-dir');
  const volumes = stage
    .filter((i) => i.keyword === 'VOLUME')
    .flatMap((i) => execForm(i.args) ?? i.args.split(/\s+/));
  if (dataDir === undefined) problems.push('the command must name its --data-dir');
  else if (!volumes.includes(dataDir)) problems.push(`VOLUME for the data directory ${dataDir}`);
  const port = flagValue(command, '--port') ?? '4170';
  const exposed = stage.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
  if (!exposed.some((entry) => entry.split('/')[0] === port))
    problems.push(`EXPOSE the port it listens on (${port})`);
  if (flagValue(command, '--hostname') !== '0.0.0.0')
    problems.push('bind --hostname 0.0.0.0: a container is reached from outside its loopback');
  return problems;
}

/** `[Section]` → key → values (a key may repeat) of a unit file. */
export function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header !== null) {
      current = new Map();
      sections.set(header[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    if (current === undefined || eq < 0) continue;
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/** systemd's time span (`30`, `30s`, `2min`, `1min 30s`) in ms. */
export function timeSpanMs(span: string): number {
  const units: Record<string, number> = {
    '': 1000,
    ms: 1,
    s: 1000,
    sec: 1000,
    m: 60_000,
    min: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  for (const part of span.trim().split(/\s+/)) {
    const match = /^(\d+)([a-z]*)$/.exec(part);
    const unit = match === null ? undefined : units[match[2]!];
    if (match === null || unit === undefined) return NaN;
    total += Number(match[1]) * unit;
  }
  return total;
}

/** The rules Sluice's unit must keep; `defaultDrainMs` is the drain timeout of a unit without the flag. */
export function lintUnit(text: string, defaultDrainMs: number): string[] {
  const service = parseUnit(text).get('Service') ?? new Map<string, string[]>();
  const one = (key: string): string | undefined => service.get(key)?.at(-1);
  const problems: string[] = [];
  const exec = one('ExecStart') ?? '';
  const argv = exec.replace(/^[-@:+!]+/, '').split(/\s+/);
  if (!argv[0]?.startsWith('/'))
    problems.push(`ExecStart must start with an absolute path, got "${argv[0] ?? ''}"`);
  if (!argv.includes('serve')) problems.push('ExecStart must run `serve`');
  const user = one('User');
  if (user === undefined || user === 'root' || user === '0') problems.push('User= a service user, not root');
  if (one('Type') === undefined) problems.push('Type= (exec: the daemon does not notify)');
  const expected: Record<string, string> = {
    Restart: 'on-failure',
    NoNewPrivileges: 'yes',
    ProtectSystem: 'strict',
    PrivateTmp: 'yes',
    KillSignal: 'SIGTERM',
  };
  for (const [key, value] of Object.entries(expected))
    if (one(key) !== value) problems.push(`${key}=${value}, got ${one(key) ?? 'nothing'}`);
  const dataDir = argv[argv.indexOf('--data-dir') + 1];
  if (!argv.includes('--data-dir') || dataDir === undefined)
    problems.push('ExecStart must name its --data-dir');
  else if (!(service.get('ReadWritePaths') ?? []).flatMap((v) => v.split(/\s+/)).includes(dataDir))
    problems.push(`ReadWritePaths= the data directory ${dataDir}`);
  if (!argv.includes('--config')) problems.push('ExecStart must read its flags from a --config file');
  const workspace = argv.includes('--workspace')
    ? argv[argv.indexOf('--workspace') + 1]
    : one('WorkingDirectory');
  if (workspace === undefined) problems.push('ExecStart must name its --workspace');
  else if (dataDir !== undefined && (workspace === dataDir || workspace.startsWith(`${dataDir}/`)))
    problems.push(`the workspace ${workspace} must be apart from the data directory ${dataDir}`);
  else if (!(service.get('ReadWritePaths') ?? []).flatMap((v) => v.split(/\s+/)).includes(workspace))
    problems.push(`ReadWritePaths= the workspace ${workspace}`);
  const drainFlag = argv.indexOf('--drain-timeout-ms');
  const drainMs = drainFlag >= 0 ? Number(argv[drainFlag + 1]) : defaultDrainMs;
  const stopMs = timeSpanMs(one('TimeoutStopSec') ?? '');
  if (!(stopMs > drainMs))
    problems.push(
      `TimeoutStopSec (${one('TimeoutStopSec') ?? 'unset'}) must exceed the drain timeout (${drainMs} ms)`,
    );
  return problems;
}
