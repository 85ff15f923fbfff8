/** The management API as the signed-in browser calls it: same origin, session cookie, CSRF header on writes. */

/** The cookie the server sets beside the session; its value goes back in X-CSRFToken on writes. */
const CSRF_COOKIE = 'sightline_csrftoken';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The error's JSON body (DRF's {type, code, detail, attr}, and what a kind adds, such as a query's position). */
    readonly body: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

/** Set beside the session cookie and cleared with it: without it there is no session to ask about. */
export function hasSessionCookie(): boolean {
  return csrfToken() !== '';
}

function csrfToken(): string {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join('='));
  }
  return '';
}

export async function api<T>(path: string, options: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  // A form (a file upload) goes as multipart, its boundary set by the browser.
  const form = options.body instanceof FormData ? options.body : null;
  if (options.body !== undefined && !form) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRFToken'] = csrfToken();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiFailure(0, 'The server could not be reached.');
  }
  const text = await response.text();
  const json = text ? (safeJson(text) as Record<string, unknown> | null) : null;
  if (!response.ok) {
    const detail = json && typeof json['detail'] === 'string' ? json['detail'] : `Request failed (${response.status}).`;
    throw new ApiFailure(response.status, detail, json);
  }
  return json as T;
}

/** A POST whose answer is text (a CSV export); a failure reads as api()'s does. */
export async function apiPostText(path: string, body: unknown): Promise<string> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { Accept: 'text/csv, application/json', 'Content-Type': 'application/json', 'X-CSRFToken': csrfToken() },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  }).catch(() => {
    throw new ApiFailure(0, 'The server could not be reached.');
  });
  const text = await response.text();
  if (response.ok) return text;
  const json = safeJson(text) as Record<string, unknown> | null;
  throw new ApiFailure(response.status, json && typeof json['detail'] === 'string' ? json['detail'] : `Request failed (${response.status}).`, json);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export interface Me {
  uuid: string;
  email: string;
  first_name: string;
  team: { id: number; name: string; timezone: string; api_token: string };
}

export interface Page<T> {
  next: string | null;
  results: T[];
  count?: number;
}
