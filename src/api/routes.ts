import type { Request, RequestHandler, Response } from 'express';
import type { JsonSchema } from './validation.js';
import type { Principal } from '../services/auth.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export const API_PREFIX = '/api/v1';

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
  /** Express path below /api/v1, e.g. `/datasets/:dataset_id` (or from the root, with `root`). */
  path: string;
  /** Served at `path` itself rather than below /api/v1 (e.g. /metrics, where scrapers expect it). */
  root?: boolean;
  summary: string;
  tag: string;
  /** An old path or method kept for RAGFlow's clients; another route does the same (OpenAPI `deprecated`). */
  deprecated?: boolean;
  /** No credentials needed. Other routes authenticate before anything reads the request body. */
  public?: boolean;
  /** An API key's share token (RAGFlow's `beta`) is accepted besides the key and a login token (/searchbots routes). */
  beta?: boolean;
  body?: JsonSchema;
  /** Envelope code for a body that fails validation (HTTP 400), when the spec names one (chunk update: 1002). */
  bodyErrorCode?: number;
  query?: JsonSchema;
  /** A multipart/form-data body, for the OpenAPI document only: the route's middleware parses it. */
  multipart?: JsonSchema;
  /** Runs after authentication and before JSON parsing and validation (e.g. multipart parsing). */
  middleware?: RequestHandler[];
  /**
   * A heavy route: it runs only with a place in this admission lane, or is refused with 503 (api/admission.ts).
   * 'short' for retrieval and search, 'long' for streamed model answers and uploads.
   */
  admission?: 'short' | 'long';
  /** The handler writes the response itself (streams, files). */
  raw?: boolean;
  /** What a raw handler answers on success, for the OpenAPI document (default: the JSON envelope). */
  produces?: { contentType: string; description: string };
  /**
   * Answers by status for the OpenAPI document, when the defaults (200 in the envelope or as `produces`
   * says, 4xx in the error envelope) do not say them: several content types, a body schema, another status.
   */
  responses?: Record<string, ResponseDoc>;
  /**
   * The route's error bodies when they are not the envelope (OpenAI-compatible routes): `schema` for
   * the OpenAPI document; with `render`, the app answers every error of the route in that shape, its
   * own (401, 400, 413...) included.
   */
  errors?: { schema: JsonSchema; render?(status: number, message: string): unknown };
  handler(ctx: RouteContext): Promise<unknown> | unknown;
}

/** One documented response: what it means, and its body's schema per content type. */
export interface ResponseDoc {
  description: string;
  content: Record<string, JsonSchema>;
}

/** A handler's result with extra top-level envelope keys, e.g. RAGFlow's `total_datasets`. */
export class Reply {
  constructor(
    readonly data: unknown,
    readonly extra: Record<string, unknown> = {},
  ) {}
}

/** The Express path a route is served at. */
export function servedPath(spec: Pick<RouteSpec, 'path' | 'root'>): string {
  return spec.root ? spec.path : API_PREFIX + spec.path;
}

export function route(spec: RouteSpec): RouteSpec {
  return spec;
}
