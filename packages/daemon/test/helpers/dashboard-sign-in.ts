import { api, type ApiResponse } from './http-client.js';

/** `POST /dashboard/sign-in` (or `path`) with `token` as a form field, as the sign-in page's form sends it. */
export function postSignIn(
  baseUrl: string,
  token: string,
  headers: Record<string, string> = {},
  path = '/dashboard/sign-in',
): Promise<ApiResponse> {
  return api(baseUrl, 'POST', path, {
    rawBody: Buffer.from(new URLSearchParams({ token }).toString()),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

/** Signs in with `token` (at `path`); the `Cookie` header a browser sends back. */
export async function signIn(baseUrl: string, token: string, path?: string): Promise<string> {
  const res = await postSignIn(baseUrl, token, {}, path);
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}, not 303`);
  const set = res.headers['set-cookie'];
  if (set === undefined || set.length !== 1) throw new Error('sign-in set no cookie');
  return set[0]!.split(';', 1)[0]!;
}
