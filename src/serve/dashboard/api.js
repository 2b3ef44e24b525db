// The dashboard's only way to data: the JSON API under /api/v1, with the token the user gave kept in
// this tab's sessionStorage and sent as a Bearer header (never a cookie: see serve/dashboard.rs).

const KEY = 'jobq.token';

/** An answer the API refused: its status and its {"error": {code, message}} body. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? 'http_error';
    this.details = body?.error?.details;
  }
}

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(value) {
  if (value) sessionStorage.setItem(KEY, value); else sessionStorage.removeItem(KEY);
}

/** Calls the API; answers the parsed JSON or throws an ApiError. */
export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body ?? {});
export const del = (path) => call('DELETE', path);

/** A query string from an object, leaving empty values out. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.append(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
