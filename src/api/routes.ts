import type { Request, RequestHandler, Response } from 'express';
import type { JsonSchema } from './validation.js';
import type { Principal } from '../services/auth.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteContext<B = any, Q = any> {
  principal: Principal;
  params: Record<string, string>;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/** One HTTP route: its schemas feed both request validation and the OpenAPI document. */
export interface RouteSpec {
  method: HttpMethod;
  /** Express path below /api/v1, e.g. `/datasets/:dataset_id`. */
  path: string;
  summary: string;
  tag: string;
  /** No credentials needed. */
  public?: boolean;
  body?: JsonSchema;
  /** Envelope code for a body that fails validation (HTTP 400), when the spec names one (chunk update: 1002). */
  bodyErrorCode?: number;
  query?: JsonSchema;
  /** Runs before validation (e.g. multipart parsing). */
  middleware?: RequestHandler[];
  /** The handler writes the response itself (streams, files). */
  raw?: boolean;
  handler(ctx: RouteContext): Promise<unknown> | unknown;
}

/** A handler's result with extra top-level envelope keys, e.g. RAGFlow's `total_datasets`. */
export class Reply {
  constructor(
    readonly data: unknown,
    readonly extra: Record<string, unknown> = {},
  ) {}
}

export function route(spec: RouteSpec): RouteSpec {
  return spec;
}
