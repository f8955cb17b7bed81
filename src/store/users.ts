import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable, TenantMembersTable } from './schema.js';

export type UserRow = Selectable<UsersTable>;
export type MemberRow = Selectable<TenantMembersTable>;

/** Users and tenant membership. A user's own tenant id equals the user id. */
export class UserRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(user: UserRow): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('users').values(user).execute();
      await tx
        .insertInto('tenant_members')
        .values({ tenant_id: user.id, user_id: user.id, role: 'owner', create_time: user.create_time })
        .execute();
    });
  }

  byId(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  /** Replaces a user's password hash; false when there is no such user. */
  async setPasswordHash(id: string, passwordHash: string, now: number): Promise<boolean> {
    const res = await this.db.updateTable('users').set({ password_hash: passwordHash, update_time: now }).where('id', '=', id).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Tenants the user belongs to (own tenant included). */
  async tenantsOf(userId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('tenant_members').select('tenant_id').where('user_id', '=', userId).execute();
    return rows.map((r) => r.tenant_id);
  }

  listMembers(tenantId: string): Promise<(MemberRow & { email: string; nickname: string })[]> {
    return this.db
      .selectFrom('tenant_members')
      .innerJoin('users', 'users.id', 'tenant_members.user_id')
      .select(['tenant_members.tenant_id', 'tenant_members.user_id', 'tenant_members.role', 'tenant_members.create_time', 'users.email', 'users.nickname'])
      .where('tenant_members.tenant_id', '=', tenantId)
      .orderBy('tenant_members.create_time')
      .execute();
  }

  async addMember(tenantId: string, userId: string, now: number): Promise<void> {
    await this.db
      .insertInto('tenant_members')
      .values({ tenant_id: tenantId, user_id: userId, role: 'normal', create_time: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async removeMember(tenantId: string, userId: string): Promise<number> {
    const res = await this.db
      .deleteFrom('tenant_members')
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('role', '!=', 'owner')
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
