/**
 * Errors in PostHog's DRF envelope: {"type","code","detail","attr"}.
 * Every client-visible failure is one of these; anything else is a bug answered as 500.
 */
export type ApiErrorType = 'validation_error' | 'authentication_error' | 'throttled_error' | 'invalid_request' | 'server_error';

export interface ApiErrorBody {
  type: ApiErrorType;
  code: string;
  detail: string;
  attr: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  toBody(): ApiErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
  }
}

export const errors = {
  validation: (detail: string, attr: string | null = null, code = 'invalid_input') => new ApiError(400, 'validation_error', code, detail, attr),
  parse: (detail: string) => new ApiError(400, 'validation_error', 'parse_error', detail),
  notAuthenticated: () => new ApiError(401, 'authentication_error', 'not_authenticated', 'Authentication credentials were not provided.'),
  authenticationFailed: (detail: string) => new ApiError(401, 'authentication_error', 'authentication_failed', detail),
  invalidProjectKey: (detail: string) => new ApiError(401, 'authentication_error', 'invalid_api_key', detail),
  permissionDenied: (detail: string) => new ApiError(403, 'authentication_error', 'permission_denied', detail),
  notFound: (detail = 'Not found.') => new ApiError(404, 'invalid_request', 'not_found', detail),
  methodNotAllowed: (method: string, detail?: string) =>
    new ApiError(405, 'invalid_request', 'method_not_allowed', detail ?? `Method "${method}" not allowed.`),
  payloadTooLarge: (limitBytes: number) => new ApiError(413, 'invalid_request', 'payload_too_large', `Request body exceeds the limit of ${limitBytes} bytes.`),
  unsupportedMediaType: (detail: string) => new ApiError(415, 'invalid_request', 'unsupported_media_type', detail),
  unavailable: (detail: string, retryAfterSeconds: number) =>
    new ApiError(503, 'server_error', 'service_unavailable', detail, null, { 'Retry-After': String(retryAfterSeconds) }),
  server: () => new ApiError(500, 'server_error', 'error', 'A server error occurred.'),
};
