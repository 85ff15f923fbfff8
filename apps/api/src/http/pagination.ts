import type { Request } from 'express';

/**
 * The request's absolute URL with some query parameters replaced (null removes one),
 * as DRF builds `next` / `previous` links.
 */
export function absoluteUrlWith(req: Request, params: Record<string, string | number | null>): string {
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  for (const [name, value] of Object.entries(params)) {
    if (value === null) url.searchParams.delete(name);
    else url.searchParams.set(name, String(value));
  }
  return url.toString();
}

/**
 * The most persons one page of a persons list holds (DRF LimitOffsetPagination's max_limit: a
 * larger `limit` is lowered to it, and `next` pages on). Persons carry all their properties, so
 * a page is bounded before it is read (docs/http-api.md#limits).
 */
export const MAX_PERSONS_PAGE_SIZE = 1_000;

/**
 * DRF LimitOffsetPagination's response: count, absolute next/previous links, results. `linkParams`
 * are added to both links (a list that pins its first page's snapshot carries it on).
 */
export function limitOffsetPage<T>(
  req: Request,
  page: { count: number; limit: number; offset: number; results: T[] },
  linkParams: Record<string, string | number> = {},
) {
  const { count, limit, offset } = page;
  const next = offset + limit < count ? absoluteUrlWith(req, { ...linkParams, limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0) {
    // DRF drops `offset` from the first page's link rather than writing offset=0.
    previous =
      offset - limit <= 0
        ? absoluteUrlWith(req, { ...linkParams, limit, offset: null })
        : absoluteUrlWith(req, { ...linkParams, limit, offset: offset - limit });
  }
  return { count, next, previous, results: page.results };
}
