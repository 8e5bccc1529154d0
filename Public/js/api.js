// The HTTP API as the client uses it: the token in sessionStorage, JSON in and out,
// problem+json errors turned into ApiError with the server's code and words.

const TOKEN = 'mockstock.token';
const USER = 'mockstock.user';

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || 'error';
    this.line = problem.line;
  }
}

export const session = {
  get token() { return sessionStorage.getItem(TOKEN); },
  get user() {
    try { return JSON.parse(sessionStorage.getItem(USER) || 'null'); } catch { return null; }
  },
  save({ token, user }) {
    sessionStorage.setItem(TOKEN, token);
    sessionStorage.setItem(USER, JSON.stringify(user));
  },
  /** Keeps what GET /api/me adds to the user (a class's student's `displayName`, `managedBy`). */
  remember(user) {
    if (sessionStorage.getItem(TOKEN)) sessionStorage.setItem(USER, JSON.stringify({ ...this.user, ...user }));
  },
  clear() {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(USER);
  },
};

/** Called when the server refuses the token (expired, revoked): set by the app. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return { title: response.statusText || 'The server did not answer as expected.' };
  }
}

/** Sends a request; returns the parsed JSON (null for 204) or throws ApiError. */
export async function api(path, { method = 'GET', body, headers = {}, raw = false } = {}) {
  const request = { method, headers: { Accept: 'application/json', ...headers } };
  if (session.token) request.headers.Authorization = `Bearer ${session.token}`;
  if (body !== undefined) {
    request.headers['Content-Type'] = 'application/json';
    request.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, { ...request, signal: AbortSignal.timeout(30000) });
  } catch (error) {
    const detail = error?.name === 'TimeoutError' ? 'The server took too long to answer. Try again.'
      : 'The server cannot be reached. Check your connection and try again.';
    throw new ApiError(0, { code: 'network', detail });
  }
  if (response.status === 401 && session.token && !path.startsWith('/api/auth/')) {
    onUnauthorized();
  }
  if (!response.ok) throw new ApiError(response.status, await problemOf(response));
  if (raw) return response;
  if (response.status === 204) return null;
  return response.json();
}

/** Downloads a file the server makes (with the caller's token: a CSV, or with `accept`
 * another type) and saves it as a file, under the server's name (Content-Disposition),
 * else `fallback`; returns the name. */
export async function saveDownload(path, fallback, accept = 'text/csv') {
  const response = await api(path, { raw: true, headers: { Accept: accept } });
  const header = response.headers.get('Content-Disposition') ?? '';
  const given = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header)?.[1];
  const name = (given ? decodeURIComponent(given).replace(/[\\/]/g, '').trim() : '') || fallback;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return name;
}

/** Uploads a file body with progress (fetch has no upload progress; XHR does). */
export function upload(path, file, contentType, onProgress, method = 'POST', headers = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    xhr.setRequestHeader('Content-Type', contentType);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Accept', 'application/json');
    if (session.token) xhr.setRequestHeader('Authorization', `Bearer ${session.token}`);
    xhr.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(event.loaded / event.total); };
    xhr.onload = () => {
      if (xhr.status === 401 && session.token) onUnauthorized();
      let parsed = {};
      try { parsed = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed);
      else reject(new ApiError(xhr.status, parsed));
    };
    xhr.onerror = () => reject(new ApiError(0, { code: 'network', detail: 'The upload was interrupted.' }));
    xhr.onabort = xhr.onerror;
    xhr.send(file);
  });
}

/** A fresh Idempotency-Key, so a repeated click or a retry never trades twice. */
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

let historyAnswer = null;
/** The days the market's price history covers, `{from, through}` or null (from
 * GET /api/market/clock), asked once a minute at most. */
export function marketHistory() {
  if (!historyAnswer || Date.now() - historyAnswer.at > 60000) {
    const answer = { at: Date.now(), span: api('/api/market/clock').then((clock) => clock.history) };
    answer.span.catch(() => { if (historyAnswer === answer) historyAnswer = null; });
    historyAnswer = answer;
  }
  return historyAnswer.span;
}
