/**
 * A failure the caller can act on. `code` is the envelope code; `status` the HTTP status.
 * For 400/401/403/404/500 they are equal; chunk errors use 1001/1002 with HTTP 404/400 (spec "Errors").
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: number = status,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, data?: unknown) => new ApiError(400, message, 400, data);
export const unauthorized = (message = 'Unauthorized: missing or invalid API key or token') => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);

/**
 * A service Cairn depends on (Temporal) cannot be reached: HTTP 503 with `Retry-After`. Nothing the request
 * would have changed was kept, so sending it again later is safe.
 */
export class ServiceUnavailable extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, message);
  }
}
