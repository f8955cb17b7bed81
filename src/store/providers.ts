import type { Kysely, Selectable } from 'kysely';
import type { Database, ProviderInstancesTable, ProviderModelsTable, TenantDefaultsTable } from './schema.js';

export type InstanceRow = Selectable<ProviderInstancesTable>;
export type ModelRow = Selectable<ProviderModelsTable>;
export type DefaultsRow = Selectable<TenantDefaultsTable>;
export type DefaultKind = 'chat_model' | 'embedding_model' | 'rerank_model';

export class ProviderRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertInstance(row: InstanceRow, models: ModelRow[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('provider_instances').values(row).execute();
      if (models.length) await tx.insertInto('provider_models').values(models).execute();
    });
  }

  instances(tenantId: string, factory?: string): Promise<InstanceRow[]> {
    let q = this.db.selectFrom('provider_instances').selectAll().where('tenant_id', '=', tenantId);
    if (factory) q = q.where('factory', '=', factory);
    return q.orderBy('create_time').execute();
  }

  instance(tenantId: string, factory: string, name: string): Promise<InstanceRow | undefined> {
    return this.db
      .selectFrom('provider_instances')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('factory', '=', factory)
      .where('instance_name', '=', name)
      .executeTakeFirst();
  }

  /** Updates the instance and upserts its models (by name) in one transaction. */
  async updateInstance(id: string, patch: Partial<Pick<InstanceRow, 'api_key' | 'base_url' | 'update_time'>>, models: ModelRow[] = []): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('provider_instances').set(patch).where('id', '=', id).execute();
      for (const row of models) await upsertModel(tx, row);
    });
  }

  async deleteInstance(id: string): Promise<void> {
    await this.db.deleteFrom('provider_instances').where('id', '=', id).execute();
  }

  models(instanceIds: string[]): Promise<ModelRow[]> {
    if (instanceIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('provider_models').selectAll().where('instance_id', 'in', instanceIds).orderBy('create_time').orderBy('model_name').execute();
  }

  /** Inserts the models, replacing those of the same name, in one transaction. */
  async upsertModels(rows: ModelRow[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      for (const row of rows) await upsertModel(tx, row);
    });
  }

  async deleteModel(instanceId: string, modelName: string): Promise<number> {
    const res = await this.db.deleteFrom('provider_models').where('instance_id', '=', instanceId).where('model_name', '=', modelName).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  defaults(tenantId: string): Promise<DefaultsRow | undefined> {
    return this.db.selectFrom('tenant_defaults').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  async setDefault(tenantId: string, kind: DefaultKind, modelId: string | null, now: number): Promise<void> {
    await this.db
      .insertInto('tenant_defaults')
      .values({ tenant_id: tenantId, chat_model: null, embedding_model: null, rerank_model: null, [kind]: modelId, update_time: now })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ [kind]: modelId, update_time: now }))
      .execute();
  }
}

async function upsertModel(db: Kysely<Database>, row: ModelRow): Promise<void> {
  await db
    .insertInto('provider_models')
    .values(row)
    .onConflict((oc) => oc.columns(['instance_id', 'model_name']).doUpdateSet({ model_types: row.model_types, max_tokens: row.max_tokens, vision: row.vision }))
    .execute();
}
