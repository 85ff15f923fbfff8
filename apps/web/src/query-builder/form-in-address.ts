/**
 * A builder's form as its address holds it (`?q=<form JSON>`, so a link reproduces the query):
 * the fields it sets over the defaults; the defaults alone when `q` is absent or not a JSON object.
 */
export function formFromAddress<T extends object>(url: URL, defaults: T): T {
  try {
    const parsed: unknown = JSON.parse(url.searchParams.get('q') ?? '{}');
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...defaults, ...(parsed as Partial<T>) } : defaults;
  } catch {
    return defaults;
  }
}
