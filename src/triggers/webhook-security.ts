/**
 * The guards of a webhook call (RAGFlow's webhook security): body size, IP whitelist, rate limit, then the
 * Begin's own authentication (none with allow_anonymous, a token header, HTTP Basic, or a JWT).
 */
import { BlockList, isIP } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { importSPKI, jwtVerify, type JWTPayload } from 'jose';
import { ApiError, forbidden, unauthorized } from '../errors.js';
import type { WebhookSecurity } from './webhook-config.js';

export interface CallerFacts {
  /** The peer's address (the socket's; forwarded headers are not trusted). */
  ip: string;
  /** Bytes of the body as read. */
  bodyBytes: number;
  headers: Record<string, string | string[] | undefined>;
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function header(headers: CallerFacts['headers'], name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

export function checkBodySize(security: WebhookSecurity, bytes: number): void {
  if (bytes > security.maxBodyBytes) throw new ApiError(413, `Request body too large: ${bytes} bytes > ${security.maxBodyBytes} (security.max_body_size)`);
}

/** An IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`) is the IPv4 address. */
function plainIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

export function checkIpWhitelist(security: WebhookSecurity, rawIp: string): void {
  if (!security.ipWhitelist.length) return;
  const ip = plainIp(rawIp);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const rule of security.ipWhitelist) {
    const [addr, bits] = rule.split('/');
    const ruleFamily = isIP(addr ?? '') === 6 ? 'ipv6' : isIP(addr ?? '') === 4 ? 'ipv4' : undefined;
    if (!ruleFamily) throw new ApiError(400, `Webhook setting 'security.ip_whitelist' has an entry that is no IP address or CIDR range: ${JSON.stringify(rule)}`);
    if (bits !== undefined) list.addSubnet(addr!, Number(bits), ruleFamily);
    else list.addAddress(addr!, ruleFamily);
  }
  if (!list.check(ip, family)) throw forbidden(`IP ${ip} is not allowed by the webhook's IP whitelist`);
}

/** A webhook call over the agent's `security.rate_limit` (429); the router sends `retryAfterSeconds` as Retry-After. */
export class TooManyWebhookCalls extends ApiError {
  constructor(
    rate: WebhookSecurity['rateLimit'],
    readonly retryAfterSeconds: number,
  ) {
    super(429, `Too many requests: this webhook takes ${rate.limit} calls per ${rate.windowSeconds} s (security.rate_limit); try again in ${retryAfterSeconds} s`);
  }
}

/** The Begin's own authentication: 401 naming what is wrong. */
export async function checkWebhookAuth(security: WebhookSecurity, headers: CallerFacts['headers']): Promise<void> {
  switch (security.authType) {
    case 'none':
      if (!security.allowAnonymous) throw unauthorized('Webhook security is required: this webhook has auth_type none without security.allow_anonymous: true, so it accepts no call');
      return;
    case 'token': {
      const got = header(headers, security.token!.header);
      if (got === undefined || !sameText(got, security.token!.value)) throw unauthorized(`Invalid token authentication: send the token in the header ${security.token!.header}`);
      return;
    }
    case 'basic': {
      const auth = header(headers, 'authorization') ?? '';
      const m = /^Basic\s+(.+)$/i.exec(auth);
      const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
      const colon = decoded.indexOf(':');
      const ok = colon >= 0 && sameText(decoded.slice(0, colon), security.basic!.username) && sameText(decoded.slice(colon + 1), security.basic!.password);
      if (!ok) throw unauthorized('Invalid Basic Auth credentials');
      return;
    }
    case 'jwt':
      await checkJwt(security.jwt!, header(headers, 'authorization') ?? '');
  }
}

async function checkJwt(jwt: NonNullable<WebhookSecurity['jwt']>, auth: string): Promise<void> {
  const m = /^Bearer\s+(\S+)\s*$/.exec(auth);
  if (!m) throw unauthorized('Missing Bearer token: send the JWT as "Authorization: Bearer <token>"');
  const key = jwt.algorithm.startsWith('HS') ? new TextEncoder().encode(jwt.secret) : await importSPKI(jwt.secret, jwt.algorithm).catch(() => {
    throw new ApiError(400, `Webhook setting 'security.jwt.secret' must be a PEM public key for ${jwt.algorithm}`);
  });
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(m[1]!, key, { algorithms: [jwt.algorithm], audience: jwt.audience, issuer: jwt.issuer }));
  } catch (err) {
    throw unauthorized(`Invalid JWT: ${(err as Error).message}`);
  }
  const missing = jwt.requiredClaims.filter((c) => !(c in payload));
  if (missing.length) throw unauthorized(`Invalid JWT: missing claim(s) ${missing.join(', ')}`);
}
