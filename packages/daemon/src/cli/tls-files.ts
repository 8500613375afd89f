import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { StartupError, settingName, type OptionSources } from './startup-error.js';

/** `--tls-cert` and `--tls-key` as `sluice serve` parsed them. */
export type TlsFlags = OptionSources & { tlsCert?: string; tlsKey?: string };

/** The certificate and key the HTTPS server is started with, checked against each other. */
export interface TlsFiles {
  /** The PEM certificate (and any chain after it), as read. */
  cert: Buffer;
  /** The PEM private key, as read. */
  key: Buffer;
  /** The certificate's file, for the log. */
  certFile: string;
  /** When the (first) certificate expires. */
  validTo: Date;
}

/**
 * Reads `--tls-cert` and `--tls-key` (docs/decisions/034): both or neither, each readable PEM,
 * the key the certificate's. Any refusal is a {@link StartupError} naming the setting (its flag,
 * variable or config key) and the file; undefined when neither is given.
 */
export async function readTlsFiles(flags: TlsFlags): Promise<TlsFiles | undefined> {
  const { tlsCert, tlsKey } = flags;
  const certName = settingName('--tls-cert', flags);
  const keyName = settingName('--tls-key', flags);
  if (tlsCert === undefined && tlsKey === undefined) return undefined;
  if (tlsCert === undefined || tlsKey === undefined) {
    const [given, missing] = tlsCert === undefined ? [keyName, certName] : [certName, keyName];
    throw new StartupError(
      `${missing} is missing: ${given} needs it (HTTPS takes a certificate and its key)`,
    );
  }
  const cert = await readPem(certName, tlsCert);
  const key = await readPem(keyName, tlsKey);
  const certificate = parse(certName, tlsCert, 'a PEM certificate', () => {
    if (!cert.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no BEGIN CERTIFICATE line');
    return new X509Certificate(cert);
  });
  const privateKey: KeyObject = parse(keyName, tlsKey, 'an unencrypted PEM private key', () => {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString('latin1')))
      throw new Error('no BEGIN PRIVATE KEY line');
    return createPrivateKey(key);
  });
  if (!certificate.checkPrivateKey(privateKey))
    throw new StartupError(`${keyName}: ${tlsKey} is not the private key of the certificate in ${tlsCert}`);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new StartupError(`${certName}: ${tlsCert} cannot serve TLS: ${(error as Error).message}`);
  }
  return { cert, key, certFile: tlsCert, validTo: new Date(certificate.validTo) };
}

async function readPem(name: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new StartupError(`${name}: cannot read ${file}: ${(error as Error).message}`);
  }
}

function parse<T>(name: string, file: string, what: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new StartupError(`${name}: ${file} is not ${what} (${(error as Error).message})`);
  }
}
