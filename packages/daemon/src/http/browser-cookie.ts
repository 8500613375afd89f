import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { tokensEqual } from './secrets.js';

/** How long a browser stays signed in: 12 hours (docs/decisions/032). */
export const BROWSER_COOKIE_MAX_AGE_MS = 12 * 60 * 60 * 1000;

/** Options of a {@link BrowserCookie}. */
export interface BrowserCookieOptions {
  /** The cookie's name (`sluice_dashboard`). */
  name: string;
  /** The cookie's `Path` (`/dashboard`): the routes that read it. */
  path: string;
  /** The daemon's bearer token: what a browser signs in with, and part of the signing key. */
  token: string;
  /** How long an issued cookie is good for, in ms; default {@link BROWSER_COOKIE_MAX_AGE_MS}. */
  maxAgeMs?: number;
  /** Wall-clock ms; default `Date.now`. */
  now?: () => number;
  /** Add `Secure` (a daemon served over TLS); default false. */
  secure?: boolean;
}

/**
 * A browser's sign-in by cookie, for any page the daemon serves (the dashboard; the web client
 * of issue 31 makes its own). Owns the signing key: HMAC(token, 32 random bytes drawn at
 * construction), so a cookie is good only for this token and this key — a new token, a restart
 * or {@link revoke} makes every issued cookie fail. The cookie's value is `<expiry>.<mac>`: the
 * expiry (epoch seconds) is signed and checked here, besides the browser's `Max-Age`; it never
 * holds the token.
 */
export class BrowserCookie {
  private readonly name: string;
  private readonly attributes: string;
  private readonly token: string;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private key: Buffer;

  constructor(options: BrowserCookieOptions) {
    if (!/^[A-Za-z0-9_-]+$/.test(options.name))
      throw new RangeError(`name must be letters, digits, '_' or '-', got ${JSON.stringify(options.name)}`);
    if (!options.path.startsWith('/') || /[;\s]/.test(options.path))
      throw new RangeError(
        `path must start with '/' and hold no ';' or space, got ${JSON.stringify(options.path)}`,
      );
    if (options.token.length === 0) throw new RangeError('token must not be empty');
    const maxAgeMs = options.maxAgeMs ?? BROWSER_COOKIE_MAX_AGE_MS;
    if (!Number.isInteger(maxAgeMs) || maxAgeMs < 1000)
      throw new RangeError(`maxAgeMs must be an integer of at least 1000, got ${String(maxAgeMs)}`);
    this.name = options.name;
    this.token = options.token;
    this.maxAgeMs = maxAgeMs;
    this.now = options.now ?? Date.now;
    this.attributes = `Path=${options.path}; HttpOnly; SameSite=Strict${options.secure === true ? '; Secure' : ''}`;
    this.key = this.newKey();
  }

  /** The `Set-Cookie` value that signs a browser in, when `given` is the token (constant time). */
  signIn(given: string): string | undefined {
    return tokensEqual(given, this.token) ? this.issue() : undefined;
  }

  /** A fresh cookie, good for `maxAgeMs` from now: its `Set-Cookie` value. */
  issue(): string {
    const expires = Math.floor((this.now() + this.maxAgeMs) / 1000);
    const maxAge = Math.floor(this.maxAgeMs / 1000);
    return `${this.name}=${expires}.${this.mac(expires)}; Max-Age=${maxAge}; ${this.attributes}`;
  }

  /** The `Set-Cookie` value that makes the browser drop the cookie. */
  clear(): string {
    return `${this.name}=; Max-Age=0; ${this.attributes}`;
  }

  /** Whether a request's `Cookie` header carries a cookie this key signed that has not expired. */
  verify(cookieHeader: string | undefined): boolean {
    const value = cookieOf(cookieHeader, this.name);
    if (value === undefined) return false;
    const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (match === null) return false;
    const expires = Number(match[1]);
    const given = Buffer.from(match[2]!, 'base64url');
    const expected = Buffer.from(this.mac(expires), 'base64url');
    // The MAC is checked before the expiry, so a forged value learns nothing from the timing.
    return (
      given.length === expected.length && timingSafeEqual(given, expected) && expires * 1000 > this.now()
    );
  }

  /** Draws a new key: every cookie issued so far stops working. */
  revoke(): void {
    this.key = this.newKey();
  }

  private newKey(): Buffer {
    return createHmac('sha256', this.token).update(randomBytes(32)).digest();
  }

  private mac(expires: number): string {
    return createHmac('sha256', this.key).update(`${this.name}.${expires}`).digest('base64url');
  }
}

/** The value of cookie `name` in a `Cookie` header, if it has one. */
function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
