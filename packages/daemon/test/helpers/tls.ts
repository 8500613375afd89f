import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A self-signed certificate and its key, made by the `openssl` CLI for one test file. */
export interface TestCertificate {
  /** The directory holding both files (the test removes it). */
  dir: string;
  certFile: string;
  keyFile: string;
  /** The certificate's PEM, for a client's `ca`. */
  cert: string;
}

const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A new P-256 key and a certificate for `subjectAltNames` (default localhost and 127.0.0.1), valid a day. */
export function makeCertificate(
  subjectAltNames: readonly string[] = ['DNS:localhost', 'IP:127.0.0.1'],
): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  openssl(
    ['req', '-x509', ...NEW_KEY, '-keyout', keyFile, '-out', certFile, '-days', '1'].concat([
      '-subj',
      '/CN=sluice-test',
      '-addext',
      `subjectAltName=${subjectAltNames.join(',')}`,
    ]),
  );
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}

/** A self-signed certificate that expired on 2 January 2020 (`openssl ca` sets the dates). */
export function makeExpiredCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  const [certFile, keyFile, request, config] = ['cert.pem', 'key.pem', 'req.csr', 'ca.cnf'].map((f) =>
    join(dir, f),
  );
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '01\n');
  writeFileSync(
    config!,
    `[ca]\ndefault_ca=own\n[own]\ndatabase=${dir}/index.txt\nnew_certs_dir=${dir}\nserial=${dir}/serial\n` +
      'default_md=sha256\npolicy=any\n[any]\ncommonName=supplied\n',
  );
  openssl(['req', '-new', ...NEW_KEY, '-keyout', keyFile!, '-out', request!, '-subj', '/CN=sluice-expired']);
  openssl(
    [
      'ca',
      '-batch',
      '-config',
      config!,
      '-selfsign',
      '-keyfile',
      keyFile!,
      '-in',
      request!,
      '-out',
      certFile!,
    ].concat(['-startdate', '20200101000000Z', '-enddate', '20200102000000Z', '-notext']),
  );
  return { dir, certFile: certFile!, keyFile: keyFile!, cert: readFileSync(certFile!, 'utf8') };
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** An HTTPS answer, its body read whole. */
export interface HttpsAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTPS request over a fresh connection that trusts `ca` only (and checks the host name). */
export function httpsRequest(
  url: string,
  options: { ca: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<HttpsAnswer> {
  const init: RequestOptions = {
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ca: options.ca,
    agent: false,
    timeout: 10_000,
  };
  return new Promise((resolveAnswer, reject) => {
    const req = request(url, init, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in 10 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

const PROMPT_CLIENT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../http/fixtures/prompt-over-tls.mjs',
);

/** What `fixtures/prompt-over-tls.mjs` printed: the turn as the client saw it. */
export interface PromptOverTls {
  url: string;
  stopReason: string;
  /** The event types of the session's SSE stream, up to the turn_complete. */
  types: string[];
  /** The agent's message chunks, joined. */
  text: string;
}

/**
 * Runs a Node client (`sdk`: ours or the official `@qwen-code/sdk`) in a child process that
 * trusts `certFile` through NODE_EXTRA_CA_CERTS, as a user would: it creates a session, sends
 * `text` and reads the SSE stream up to turn_complete. Rejects with its stderr when it fails.
 */
export function promptOverTls(
  sdk: 'sluice' | 'qwen',
  options: { url: string; token: string; certFile: string; text: string; workspace?: string },
): Promise<PromptOverTls> {
  const args = [PROMPT_CLIENT, sdk, options.url, options.token, options.text];
  if (options.workspace !== undefined) args.push(options.workspace);
  return new Promise((resolveRun, reject) => {
    execFile(
      process.execPath,
      args,
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: options.certFile }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`${sdk} client over TLS failed: ${error.message}\n${stderr}`));
        resolveRun(JSON.parse(stdout) as PromptOverTls);
      },
    );
  });
}
