import { SignJWT, jwtVerify } from 'jose';
import type { MetaStore } from '../store/index.js';
import type { UserRow } from '../store/users.js';
import { newId, randomToken } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { ApiError, badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { hashPassword, hashToken, verifyPassword } from './passwords.js';
import { LoginThrottle } from './login-throttle.js';

/** The authenticated caller. Its own tenant id equals its user id (as in RAGFlow). */
export interface Principal {
  userId: string;
  email: string;
  nickname: string;
  tenantId: string;
  /** Other tenants (workspaces) the user is a member of. */
  teamTenants: string[];
  isAdmin: boolean;
}

const EMAIL = /^[\w.+-]+@([\w-]+\.)+[\w-]{2,}$/;
const NICKNAME = /^[\w ._'-]+$/u;
const API_KEY_PREFIX = 'cairn-';
const JWT_TTL = '7d';
/** RAGFlow's share tokens are 32 characters. */
const BETA_LENGTH = 32;
const newBeta = () => randomToken(24).slice(0, BETA_LENGTH);
/** One answer for an unknown e-mail and a wrong password: log-in does not tell which e-mails are registered. */
export const LOGIN_REFUSED = 'Email and password do not match!';

/** A log-in refused by the throttle (HTTP 429); the router sends `retryAfterSeconds` as Retry-After. */
export class TooManyLoginAttempts extends ApiError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, `Too many failed log-ins for this account or from this address: try again in ${retryAfterSeconds} s`);
  }
}

export interface AuthOptions {
  /** CAIRN_MIN_PASSWORD_LENGTH: the shortest password sign-up and password changes accept. */
  minPasswordLength: number;
  throttle?: LoginThrottle;
}

export class AuthService {
  readonly minPasswordLength: number;
  private readonly throttle: LoginThrottle;
  /** Verified against when the e-mail is unknown, so both refusals take the time of one scrypt. */
  private decoyHash: Promise<string> | undefined;

  constructor(
    private readonly store: MetaStore,
    private readonly jwtSecret: Uint8Array,
    options: AuthOptions,
  ) {
    this.minPasswordLength = options.minPasswordLength;
    this.throttle = options.throttle ?? new LoginThrottle();
  }

  /** Refuses a password shorter than CAIRN_MIN_PASSWORD_LENGTH (log-in itself accepts any: older passwords keep working). */
  private checkNewPassword(password: string): void {
    if (password.length < 1) throw badRequest('Password cannot be empty.');
    if (password.length < this.minPasswordLength) throw badRequest(`Password must be at least ${this.minPasswordLength} characters (CAIRN_MIN_PASSWORD_LENGTH).`);
  }

  async register(input: { email: string; nickname: string; password: string }, isAdmin = false): Promise<UserRow> {
    const email = input.email.trim().toLowerCase();
    const nickname = input.nickname.trim();
    if (!EMAIL.test(email)) throw badRequest(`Invalid email address: ${input.email}!`);
    if (!nickname) throw badRequest('Nickname cannot be empty.');
    if (nickname.length > 100) throw badRequest('Nickname must be at most 100 characters.');
    if (!NICKNAME.test(nickname)) throw badRequest('Nickname contains invalid characters.');
    this.checkNewPassword(input.password);
    if (await this.store.users.byEmail(email)) throw badRequest(`Email: ${email} has already registered!`);
    const now = nowMs();
    const user: UserRow = {
      id: newId(),
      email,
      nickname,
      password_hash: await hashPassword(input.password),
      is_admin: isAdmin ? 1 : 0,
      create_time: now,
      update_time: now,
    };
    await this.store.users.create(user);
    return user;
  }

  /** Sets the password of the user with this email (an operator's command: no old password asked). */
  async setPassword(email: string, password: string): Promise<UserRow> {
    this.checkNewPassword(password);
    const user = await this.store.users.byEmail(email.trim());
    if (!user) throw notFound(`Email: ${email} is not registered!`);
    await this.store.users.setPasswordHash(user.id, await hashPassword(password), nowMs());
    return user;
  }

  /**
   * Checks the password and returns a login token (JWT). `address` is the client's, for the throttle
   * (login-throttle.ts): while the account or the address is in back-off the answer is a 429 at once.
   */
  async login(email: string, password: string, address: string): Promise<{ user: UserRow; token: string }> {
    const account = email.trim().toLowerCase();
    const waitMs = this.throttle.waitMs(account, address);
    if (waitMs > 0) throw new TooManyLoginAttempts(Math.ceil(waitMs / 1000));
    const user = await this.store.users.byEmail(email.trim());
    const ok = user ? await verifyPassword(password, user.password_hash) : await verifyPassword(password, await (this.decoyHash ??= hashPassword(randomToken(16))));
    if (!user || !ok) {
      this.throttle.failed(account, address);
      throw unauthorized(LOGIN_REFUSED);
    }
    this.throttle.succeeded(account, address);
    return { user, token: await this.issueToken(user.id) };
  }

  issueToken(userId: string): Promise<string> {
    return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuedAt().setExpirationTime(JWT_TTL).sign(this.jwtSecret);
  }

  /** Creates an API key; the token is returned once and only its hash is kept. */
  async createApiKey(userId: string, name = ''): Promise<{ id: string; token: string; beta: string; create_time: number }> {
    const token = API_KEY_PREFIX + randomToken(32);
    const now = nowMs();
    const id = newId();
    const beta = newBeta();
    await this.store.apiKeys.create({ id, user_id: userId, token_hash: hashToken(token), token_prefix: token.slice(0, 12), name, create_time: now, last_used_at: null, beta });
    return { id, token, beta, create_time: now };
  }

  /** The caller's keys, by prefix, each with its share token (`beta`), given to keys made before it existed (as RAGFlow). */
  async listApiKeys(userId: string) {
    const rows = await this.store.apiKeys.listForUser(userId);
    for (const r of rows.filter((k) => !k.beta)) await this.store.apiKeys.setBeta(r.id, (r.beta = newBeta()));
    return rows.map((r) => ({
      id: r.id,
      tenant_id: userId,
      name: r.name,
      token: `${r.token_prefix}…`,
      beta: r.beta,
      create_time: toSeconds(r.create_time),
      create_date: toHttpDate(r.create_time),
      last_used_at: r.last_used_at === null ? null : toSeconds(r.last_used_at),
    }));
  }

  /** Revokes a key named by its id or by the token itself. */
  async revokeApiKey(userId: string, idOrToken: string): Promise<void> {
    const key = idOrToken.startsWith(API_KEY_PREFIX) ? hashToken(idOrToken) : idOrToken;
    if ((await this.store.apiKeys.delete(userId, key)) === 0) throw notFound(`API key ${idOrToken.slice(0, 12)}… not found`);
  }

  /** Resolves an Authorization header ("Bearer <key>" or a bare key/token) to a principal. */
  async resolve(header: string | undefined): Promise<Principal | undefined> {
    const token = header?.replace(/^\s*bearer\s+/i, '').trim();
    if (!token) return undefined;
    let userId: string | undefined;
    if (token.startsWith(API_KEY_PREFIX)) {
      const key = await this.store.apiKeys.byHash(hashToken(token));
      if (key) {
        userId = key.user_id;
        if (!key.last_used_at || nowMs() - key.last_used_at > 60_000) await this.store.apiKeys.touch(key.id, nowMs());
      }
    } else {
      try {
        const { payload } = await jwtVerify(token, this.jwtSecret, { algorithms: ['HS256'] });
        userId = payload.sub;
      } catch {
        userId = undefined;
      }
    }
    return userId ? this.principalFor(userId) : undefined;
  }

  /** Resolves an API key's share token (`beta`): accepted only by routes that say so (the /searchbots routes). */
  async resolveBeta(header: string | undefined): Promise<Principal | undefined> {
    const token = header?.replace(/^\s*bearer\s+/i, '').trim();
    if (!token || token.length !== BETA_LENGTH) return undefined;
    const key = await this.store.apiKeys.byBeta(token);
    return key ? this.principalFor(key.user_id) : undefined;
  }

  async principalFor(userId: string): Promise<Principal | undefined> {
    const user = await this.store.users.byId(userId);
    if (!user) return undefined;
    const tenants = await this.store.users.tenantsOf(user.id);
    return {
      userId: user.id,
      email: user.email,
      nickname: user.nickname,
      tenantId: user.id,
      teamTenants: tenants.filter((t) => t !== user.id),
      isAdmin: user.is_admin === 1,
    };
  }

  /** Tenants (workspaces) the caller belongs to, own first. */
  async listTenants(p: Principal) {
    const ids = [p.tenantId, ...p.teamTenants];
    const out = [];
    for (const id of ids) {
      const owner = await this.store.users.byId(id);
      if (owner) out.push({ tenant_id: id, name: `${owner.nickname}'s workspace`, role: id === p.tenantId ? 'owner' : 'normal', owner_email: owner.email });
    }
    return out;
  }

  async listMembers(p: Principal, tenantId: string) {
    this.requireMemberOf(p, tenantId);
    const rows = await this.store.users.listMembers(tenantId);
    return rows.map((r) => ({ user_id: r.user_id, email: r.email, nickname: r.nickname, role: r.role, create_time: toSeconds(r.create_time) }));
  }

  /** Only the tenant owner manages membership. */
  async addMember(p: Principal, tenantId: string, email: string) {
    this.requireOwnerOf(p, tenantId);
    const user = await this.store.users.byEmail(email.trim());
    if (!user) throw notFound(`User with email ${email} not found`);
    if (user.id === tenantId) throw badRequest('The owner is already a member of the workspace');
    await this.store.users.addMember(tenantId, user.id, nowMs());
    return { user_id: user.id, email: user.email, nickname: user.nickname, role: 'normal' };
  }

  async removeMember(p: Principal, tenantId: string, userId: string): Promise<void> {
    this.requireOwnerOf(p, tenantId);
    if (userId === tenantId) throw badRequest('The owner cannot be removed from the workspace');
    if ((await this.store.users.removeMember(tenantId, userId)) === 0) throw notFound(`User ${userId} is not a member of this workspace`);
  }

  private requireMemberOf(p: Principal, tenantId: string): void {
    if (tenantId !== p.tenantId && !p.teamTenants.includes(tenantId)) throw notFound(`Workspace ${tenantId} not found`);
  }

  private requireOwnerOf(p: Principal, tenantId: string): void {
    this.requireMemberOf(p, tenantId);
    if (tenantId !== p.tenantId) throw forbidden('Only the owner of the workspace can manage its members');
  }
}

export function userView(user: UserRow) {
  return {
    id: user.id,
    email: user.email,
    nickname: user.nickname,
    is_superuser: user.is_admin === 1,
    create_time: toSeconds(user.create_time),
    create_date: toHttpDate(user.create_time),
  };
}
