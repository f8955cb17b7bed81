import { route, type RouteSpec } from '../routes.js';
import { TooManyLoginAttempts, userView, type AuthService } from '../../services/auth.js';
import { toHttpDate, toSeconds } from '../../time.js';
import { LIMITS, text } from '../schemas.js';
import { ERROR_REF } from '../openapi.js';

const registerBody = {
  type: 'object',
  required: ['email', 'nickname', 'password'],
  properties: {
    email: { type: 'string', maxLength: 255 },
    // The service allows 100 characters with RAGFlow's message; this bounds what it reads.
    nickname: text(LIMITS.name),
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
};

const loginBody = {
  type: 'object',
  required: ['email', 'password'],
  properties: { email: text(LIMITS.name), password: text(1024) },
};

export function accountRoutes(auth: AuthService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/users', tag: 'accounts', summary: 'Register a user (own workspace included)', public: true, body: registerBody,
      handler: async ({ body, res }) => {
        const user = await auth.register(body);
        res.setHeader('Authorization', await auth.issueToken(user.id));
        res.setHeader('Access-Control-Expose-Headers', 'Authorization');
        return userView(user);
      },
    }),
    route({
      method: 'post', path: '/auth/login', tag: 'accounts', summary: 'Log in; the token is in the Authorization response header', public: true, body: loginBody,
      responses: {
        '401': { description: 'Wrong email or password (one message for both)', content: { 'application/json': ERROR_REF } },
        '429': { description: 'Too many failed log-ins for the account or from the address: retry after the Retry-After header\'s seconds', content: { 'application/json': ERROR_REF } },
      },
      handler: async ({ body, req, res }) => {
        const { user, token } = await auth.login(body.email, body.password, req.ip ?? req.socket.remoteAddress ?? '').catch((err: unknown) => {
          if (err instanceof TooManyLoginAttempts) res.setHeader('Retry-After', String(err.retryAfterSeconds));
          throw err;
        });
        res.setHeader('Authorization', token);
        res.setHeader('Access-Control-Expose-Headers', 'Authorization');
        return { ...userView(user), access_token: token };
      },
    }),
    route({
      method: 'get', path: '/users/me', tag: 'accounts', summary: 'The authenticated user',
      handler: async ({ principal }) => ({ id: principal.userId, email: principal.email, nickname: principal.nickname, tenant_id: principal.tenantId, is_superuser: principal.isAdmin }),
    }),
    route({
      method: 'get', path: '/system/tokens', tag: 'accounts', summary: 'List my API keys (tokens by prefix only; `beta`: the share token the /searchbots routes accept)',
      handler: ({ principal }) => auth.listApiKeys(principal.userId),
    }),
    route({
      method: 'post', path: '/system/tokens', tag: 'accounts', summary: 'Create an API key (the token is shown once) with its share token (`beta`)',
      query: { type: 'object', properties: { name: { type: 'string', maxLength: 255 } } },
      handler: async ({ principal, query }) => {
        const key = await auth.createApiKey(principal.userId, query.name ?? '');
        return { id: key.id, tenant_id: principal.tenantId, token: key.token, beta: key.beta, create_time: toSeconds(key.create_time), create_date: toHttpDate(key.create_time), update_time: null, update_date: null };
      },
    }),
    route({
      method: 'delete', path: '/system/tokens/:token', tag: 'accounts', summary: 'Revoke an API key by its id or token',
      handler: async ({ principal, params }) => {
        await auth.revokeApiKey(principal.userId, params.token);
        return true;
      },
    }),
    route({
      method: 'get', path: '/tenants', tag: 'accounts', summary: 'Workspaces I belong to',
      handler: ({ principal }) => auth.listTenants(principal),
    }),
    route({
      method: 'get', path: '/tenants/:tenant_id/users', tag: 'accounts', summary: 'Members of a workspace',
      handler: ({ principal, params }) => auth.listMembers(principal, params.tenant_id),
    }),
    route({
      method: 'post', path: '/tenants/:tenant_id/users', tag: 'accounts', summary: 'Add a member (workspace owner only)',
      body: { type: 'object', required: ['email'], properties: { email: text(LIMITS.name) } },
      handler: ({ principal, params, body }) => auth.addMember(principal, params.tenant_id, body.email),
    }),
    route({
      method: 'delete', path: '/tenants/:tenant_id/users/:user_id', tag: 'accounts', summary: 'Remove a member (workspace owner only)',
      handler: async ({ principal, params }) => {
        await auth.removeMember(principal, params.tenant_id, params.user_id);
        return true;
      },
    }),
  ];
}
