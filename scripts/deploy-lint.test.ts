import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../packages/daemon/src/defaults.js';
import { ensureDebianPackage } from '../packages/daemon/test/helpers/debian-package.js';
import { lintDockerfile, lintUnit, parseDockerfile } from './deploy-lint.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');
const UNIT = readFileSync(join(ROOT, 'deploy/sluice.service'), 'utf8');

/** The text with `from` replaced by `to`, failing when `from` is not there (the mutation would test nothing). */
function mutate(text: string, from: string | RegExp, to: string): string {
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`mutation ${String(from)} changed nothing`);
  return changed;
}

describe('deploy/Dockerfile', () => {
  test('keeps every rule: pinned base, multi-stage, npm ci, non-root USER, HEALTHCHECK, VOLUME, EXPOSE, exec form', () => {
    expect(lintDockerfile(DOCKERFILE)).toEqual([]);
  });

  test.each([
    ['a floating major tag', /ARG NODE_VERSION=\S+/, 'ARG NODE_VERSION=20', 'full version tag'],
    ['an unpinned base image', /ARG NODE_VERSION=\S+/, 'ARG NODE_VERSION=latest', 'not latest'],
    [
      'a base image without a tag',
      'FROM node:${NODE_VERSION}-bookworm-slim AS build',
      'FROM node AS build',
      'DL3006',
    ],
    ['npm install', 'npm ci --no-audit', 'npm install --no-audit', 'npm ci, not npm install'],
    ['no USER', /^USER node$/m, '', 'non-root USER'],
    ['USER root', /^USER node$/m, 'USER root', 'non-root USER'],
    ['no HEALTHCHECK', /^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, '', 'HEALTHCHECK'],
    [
      'no VOLUME for the data directory',
      'VOLUME ["/data"]',
      'VOLUME ["/var/tmp"]',
      'VOLUME for the data directory /data',
    ],
    ['ADD of local files', 'COPY tsconfig.base.json ./', 'ADD tsconfig.base.json ./', 'DL3020'],
    ['a shell-form CMD', /^CMD \[.*\]$/m, 'CMD serve --data-dir /data', 'exec form'],
    [
      'a shell-form ENTRYPOINT',
      'ENTRYPOINT ["sluice-entrypoint"]',
      'ENTRYPOINT sluice-entrypoint',
      'exec form',
    ],
    ['no EXPOSE', /^EXPOSE 4170$/m, '', 'EXPOSE'],
    ['a loopback bind', '"0.0.0.0"', '"127.0.0.1"', '--hostname 0.0.0.0'],
    ['a token baked into the image', 'SLUICE_LOG_LEVEL=info', 'SLUICE_TOKEN=abc', 'no secret in ENV'],
    ['apt recommends', '--no-install-recommends ', '', 'DL3015'],
    [
      'Node 20, out of maintenance',
      /ARG NODE_VERSION=\S+/,
      'ARG NODE_VERSION=20.20.2',
      'maintained Node LTS',
    ],
    [
      'an odd, never-LTS Node major',
      /ARG NODE_VERSION=\S+/,
      'ARG NODE_VERSION=25.1.0',
      'maintained Node LTS',
    ],
    [
      "the build's node_modules in the runtime image",
      'COPY --from=build /opt/sluice/ /opt/sluice/',
      'COPY --from=build /src/node_modules/ node_modules/',
      'not a node_modules',
    ],
    [
      'an agent installed without its version',
      '"@qwen-code/qwen-code@$QWEN_CODE_VERSION"',
      '@qwen-code/qwen-code',
      'pin a version',
    ],
  ])('the rule checker refuses %s', (_name, from, to, message) => {
    const problems = lintDockerfile(mutate(DOCKERFILE, from, to));
    expect(problems.join('\n')).toContain(message);
  });

  test('the rule checker refuses a single-stage build', () => {
    const single = 'FROM node:24.15.0-bookworm-slim\nRUN npm ci\nUSER node\nHEALTHCHECK CMD ["true"]\n';
    expect(lintDockerfile(single).join('\n')).toContain('multi-stage');
  });

  test('QWEN_CODE_VERSION adds qwen-code to the runtime image, at that version, and only when given', () => {
    const instructions = parseDockerfile(DOCKERFILE);
    const runtime = instructions.slice(instructions.findLastIndex((i) => i.keyword === 'FROM'));
    expect(runtime).toContainEqual(expect.objectContaining({ keyword: 'ARG', args: 'QWEN_CODE_VERSION=""' }));
    const install = runtime.find((i) => i.keyword === 'RUN' && i.args.includes('@qwen-code/qwen-code'));
    expect(install?.args).toMatch(
      /if \[ -n "\$QWEN_CODE_VERSION" \]; then npm install -g [^;]*"@qwen-code\/qwen-code@\$QWEN_CODE_VERSION"/,
    );
  });
});

describe('deploy/sluice.service', () => {
  test('keeps every rule: absolute ExecStart, service user, sandbox, SIGTERM with time to drain', () => {
    expect(lintUnit(UNIT, DEFAULT_DRAIN_TIMEOUT_MS)).toEqual([]);
  });

  test.each([
    ['a relative ExecStart', 'ExecStart=/opt/sluice/bin/sluice', 'ExecStart=sluice', 'absolute path'],
    ['User=root', 'User=sluice', 'User=root', 'not root'],
    ['no Type', /^Type=exec$/m, '', 'Type='],
    ['Restart=always', 'Restart=on-failure', 'Restart=always', 'Restart=on-failure'],
    ['ProtectSystem=full', 'ProtectSystem=strict', 'ProtectSystem=full', 'ProtectSystem=strict'],
    [
      'no ReadWritePaths',
      'ReadWritePaths=/var/lib/sluice',
      'ReadWritePaths=/tmp',
      'ReadWritePaths= the data directory',
    ],
    ['no PrivateTmp', 'PrivateTmp=yes', 'PrivateTmp=no', 'PrivateTmp=yes'],
    ['no NoNewPrivileges', /^NoNewPrivileges=yes$/m, '', 'NoNewPrivileges=yes'],
    ['SIGKILL', 'KillSignal=SIGTERM', 'KillSignal=SIGKILL', 'KillSignal=SIGTERM'],
    [
      'a stop timeout shorter than the drain',
      'TimeoutStopSec=30',
      'TimeoutStopSec=5s',
      'must exceed the drain timeout',
    ],
    ['no config file', ' --config /etc/sluice/sluice.toml', '', '--config file'],
    [
      'a workspace inside the data directory',
      '--workspace /var/lib/sluice-workspace',
      '--workspace /var/lib/sluice/work',
      'apart from the data directory',
    ],
    [
      'a workspace it may not write',
      'ReadWritePaths=/var/lib/sluice /var/lib/sluice-workspace',
      'ReadWritePaths=/var/lib/sluice',
      'ReadWritePaths= the workspace',
    ],
    [
      'a drain longer than the stop timeout',
      '--drain-timeout-ms 10000',
      '--drain-timeout-ms 60000',
      'must exceed',
    ],
  ])('the rule checker refuses %s', (_name, from, to, message) => {
    expect(lintUnit(mutate(UNIT, from, to), DEFAULT_DRAIN_TIMEOUT_MS).join('\n')).toContain(message);
  });

  // systemd-analyze comes with Debian's systemd; installed when missing, never skipped.
  test(
    'systemd-analyze verify finds nothing wrong but the sluice command not installed here',
    async () => {
      const analyze = await ensureDebianPackage('/usr/bin/systemd-analyze', 'systemd');
      const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
      try {
        writeFileSync(join(dir, 'sluice.service'), UNIT);
        const result = spawnSync(analyze, ['verify', join(dir, 'sluice.service')], {
          encoding: 'utf8',
        });
        // The unit runs the installed command (/opt/sluice/bin/sluice), which this host lacks.
        const complaints = result.stderr
          .split('\n')
          .filter(
            (line) =>
              line.trim() !== '' && !/\/opt\/sluice\/bin\/sluice.*(not executable|No such file)/.test(line),
          );
        expect(complaints).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    15 * 60_000, // an install of systemd, where it is missing
  );
});
