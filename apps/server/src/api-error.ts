/** The `type` of an OpenAI-style error object. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'server_error';

/** The body of every error response: `{ error: { message, type, param, code } }` as the OpenAI API sends. */
export interface ErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: ErrorType;
    readonly param: string | null;
    readonly code: string | null;
  };
}

/** A request the server refuses or could not finish: an HTTP status and the OpenAI error object to send. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string | null,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers (Retry-After on 429). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  /** A 400 about one request field. */
  static invalid(param: string, code: string, message: string): ApiError {
    return new ApiError(400, 'invalid_request_error', code, message, param);
  }

  body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
