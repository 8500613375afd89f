import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runSluice, startSluice } from '../helpers/sluice-process.js';
import { makeCertificate, makeExpiredCertificate, type TestCertificate } from '../helpers/tls.js';

// A TLS setting that cannot serve refuses the start, exit 1, with one line naming the setting
// as the operator gave it (flag, variable or config key) and the file (docs/decisions/034).

let certificate: TestCertificate;
let other: TestCertificate;

beforeAll(() => {
  certificate = makeCertificate();
  other = makeCertificate();
});

afterAll(() => {
  for (const made of [certificate, other]) if (made) rmSync(made.dir, { recursive: true, force: true });
});

/** `sluice serve --port 0 …args` run to its exit: the code and the error line. */
async function refusal(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; error: string }> {
  const run = await runSluice(
    ['serve', '--port', '0', '--data-dir', join(certificate.dir, 'data'), ...args],
    env,
  );
  const line = run.stderr.split('\n').find((text) => text.includes('"level":50')) ?? run.stderr;
  return { code: run.code, error: (JSON.parse(line) as { msg: string }).msg };
}

describe('TLS settings that cannot serve refuse the start', () => {
  test('a certificate without its key names the missing --tls-key', async () => {
    expect(await refusal(['--tls-cert', certificate.certFile])).toEqual({
      code: 1,
      error: '--tls-key is missing: --tls-cert needs it (HTTPS takes a certificate and its key)',
    });
  });

  test('a key from SLUICE_TLS_KEY without a certificate names the missing --tls-cert and the variable', async () => {
    expect(await refusal([], { SLUICE_TLS_KEY: certificate.keyFile })).toEqual({
      code: 1,
      error: '--tls-cert is missing: SLUICE_TLS_KEY needs it (HTTPS takes a certificate and its key)',
    });
  });

  test('an unreadable certificate names the setting and the file', async () => {
    const missing = join(certificate.dir, 'absent.pem');
    const { code, error } = await refusal(['--tls-cert', missing, '--tls-key', certificate.keyFile]);
    expect(code).toBe(1);
    expect(error).toMatch(new RegExp(`^--tls-cert: cannot read ${missing}: ENOENT`));
  });

  test('a file that is not a PEM certificate names the setting and the file', async () => {
    const { code, error } = await refusal([
      '--tls-cert',
      certificate.keyFile,
      '--tls-key',
      certificate.keyFile,
    ]);
    expect(code).toBe(1);
    expect(error).toMatch(new RegExp(`^--tls-cert: ${certificate.keyFile} is not a PEM certificate`));
  });

  test('a file that is not a PEM private key names the setting and the file', async () => {
    const garbage = join(certificate.dir, 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n');
    const { code, error } = await refusal(['--tls-cert', certificate.certFile, '--tls-key', garbage]);
    expect(code).toBe(1);
    expect(error).toMatch(new RegExp(`^--tls-key: ${garbage} is not an unencrypted PEM private key`));
  });

  test("another certificate's key is refused, naming both files", async () => {
    expect(await refusal(['--tls-cert', certificate.certFile, '--tls-key', other.keyFile])).toEqual({
      code: 1,
      error: `--tls-key: ${other.keyFile} is not the private key of the certificate in ${certificate.certFile}`,
    });
  });

  test('a config file with tls-cert alone names its key and the missing one', async () => {
    const config = join(certificate.dir, 'sluice.toml');
    writeFileSync(config, `tls-cert = ${JSON.stringify(certificate.certFile)}\n`);
    expect(await refusal(['--config', config])).toEqual({
      code: 1,
      error: `--tls-key is missing: ${config}: tls-cert needs it (HTTPS takes a certificate and its key)`,
    });
  });
});

test('an expired certificate starts, with a warning at any level that clients will refuse it', async () => {
  const expired = makeExpiredCertificate();
  try {
    const sluice = await startSluice(['--tls-cert', expired.certFile, '--tls-key', expired.keyFile], {
      SLUICE_LOG_LEVEL: 'error',
    });
    await sluice.stop();
    const warning = sluice
      .stderr()
      .split('\n')
      .find((line) => line.includes('"certFile"'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({
      level: 40,
      certFile: expired.certFile,
      validTo: '2020-01-02T00:00:00.000Z',
      msg: 'the TLS certificate has expired: clients will refuse it',
    });
  } finally {
    rmSync(expired.dir, { recursive: true, force: true });
  }
});
