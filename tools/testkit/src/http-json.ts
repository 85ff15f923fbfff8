/** An HTTP answer as the end-to-end tests read it: the status and the parsed JSON body. */
export interface JsonAnswer {
  status: number;
  // The tests read into the body freely; what it holds is what they assert.
  body: any;
}

/** Fetches and parses JSON, keeping the raw text when it is not JSON (the assertion then shows it). */
export async function requestJson(url: string, init: RequestInit = {}): Promise<JsonAnswer> {
  const response = await fetch(url, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** POSTs `body` as JSON (a string is sent as it is, for malformed bodies). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return requestJson(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getJson(url: string, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return requestJson(url, { headers });
}
