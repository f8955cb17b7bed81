import { Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';

/** Versioned migrations, applied in name order at start. Written with the portable schema builder. */
const migrations: Record<string, Migration> = {
  '0001_accounts_and_datasets': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('email', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('nickname', 'varchar(100)', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tenant_members')
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(32)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('tenant_members_pk', ['tenant_id', 'user_id'])
        .execute();
      await db.schema.createIndex('tenant_members_user').on('tenant_members').column('user_id').execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(32)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('token_prefix', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema
        .createTable('datasets')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_by', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('name_key', 'varchar(128)', (c) => c.notNull())
        .addColumn('avatar', 'text')
        .addColumn('description', 'text')
        .addColumn('embedding_model', 'varchar(255)', (c) => c.notNull())
        .addColumn('permission', 'varchar(8)', (c) => c.notNull())
        .addColumn('chunk_method', 'varchar(32)', (c) => c.notNull())
        .addColumn('parser_config', 'text', (c) => c.notNull())
        .addColumn('pagerank', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('language', 'varchar(32)', (c) => c.notNull().defaultTo('English'))
        .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('active'))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('datasets_tenant_name').on('datasets').columns(['tenant_id', 'name_key']).execute();
      await db.schema
        .createTable('documents')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('location', 'varchar(255)', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('type', 'varchar(16)', (c) => c.notNull().defaultTo(''))
        .addColumn('suffix', 'varchar(16)', (c) => c.notNull().defaultTo(''))
        .addColumn('chunk_method', 'varchar(32)', (c) => c.notNull())
        .addColumn('parser_config', 'text', (c) => c.notNull())
        .addColumn('source_type', 'varchar(16)', (c) => c.notNull().defaultTo('local'))
        .addColumn('created_by', 'varchar(32)', (c) => c.notNull())
        .addColumn('run', 'varchar(8)', (c) => c.notNull().defaultTo('UNSTART'))
        .addColumn('progress', 'real', (c) => c.notNull().defaultTo(0))
        .addColumn('progress_msg', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('process_begin_at', 'bigint')
        .addColumn('process_duration', 'real', (c) => c.notNull().defaultTo(0))
        .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('token_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('meta_fields', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('run_seq', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('documents_dataset').on('documents').columns(['dataset_id', 'create_time']).execute();
      await sql`select 1`.execute(db);
    },
  },
  '0002_model_providers': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('provider_instances')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('factory', 'varchar(64)', (c) => c.notNull())
        .addColumn('instance_name', 'varchar(128)', (c) => c.notNull())
        .addColumn('api_key', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('base_url', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('provider_instances_name', ['tenant_id', 'factory', 'instance_name'])
        .execute();
      await db.schema
        .createTable('provider_models')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('instance_id', 'varchar(32)', (c) => c.notNull().references('provider_instances.id').onDelete('cascade'))
        .addColumn('model_name', 'varchar(255)', (c) => c.notNull())
        .addColumn('model_types', 'text', (c) => c.notNull())
        .addColumn('max_tokens', 'integer', (c) => c.notNull().defaultTo(8192))
        .addColumn('vision', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('provider_models_name', ['instance_id', 'model_name'])
        .execute();
      await db.schema
        .createTable('tenant_defaults')
        .addColumn('tenant_id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('chat_model', 'varchar(255)')
        .addColumn('embedding_model', 'varchar(255)')
        .addColumn('rerank_model', 'varchar(255)')
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0003_chats': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('chats')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_by', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('icon', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('llm_id', 'varchar(255)')
        .addColumn('llm_setting', 'text', (c) => c.notNull())
        .addColumn('prompt_config', 'text', (c) => c.notNull())
        .addColumn('similarity_threshold', 'real', (c) => c.notNull())
        .addColumn('vector_similarity_weight', 'real', (c) => c.notNull())
        .addColumn('top_n', 'integer', (c) => c.notNull())
        .addColumn('top_k', 'integer', (c) => c.notNull())
        .addColumn('rerank_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chats_tenant').on('chats').columns(['tenant_id', 'create_time']).execute();
      await db.schema
        .createTable('chat_datasets')
        .addColumn('chat_id', 'varchar(32)', (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('chat_datasets_pk', ['chat_id', 'dataset_id'])
        .execute();
      await db.schema
        .createTable('chat_sessions')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('chat_id', 'varchar(32)', (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('messages', 'text', (c) => c.notNull())
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chat_sessions_chat').on('chat_sessions').columns(['chat_id', 'create_time']).execute();
    },
  },
  '0004_agents': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('agents')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_by', 'varchar(32)', (c) => c.notNull())
        .addColumn('title', 'varchar(255)', (c) => c.notNull())
        .addColumn('title_key', 'varchar(255)', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('avatar', 'text')
        .addColumn('permission', 'varchar(8)', (c) => c.notNull())
        .addColumn('canvas_type', 'varchar(64)')
        .addColumn('canvas_category', 'varchar(32)', (c) => c.notNull())
        .addColumn('dsl', 'text', (c) => c.notNull())
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agents_tenant_title').on('agents').columns(['tenant_id', 'title_key']).unique().execute();
      await db.schema
        .createTable('agent_versions')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('agent_id', 'varchar(32)', (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('title', 'varchar(255)', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('dsl', 'text', (c) => c.notNull())
        .addColumn('release', 'integer', (c) => c.notNull())
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_versions_agent').on('agent_versions').columns(['agent_id', 'create_time']).execute();
      await db.schema
        .createTable('agent_sessions')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('agent_id', 'varchar(32)', (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('source', 'varchar(16)', (c) => c.notNull())
        .addColumn('messages', 'text', (c) => c.notNull())
        .addColumn('reference', 'text', (c) => c.notNull())
        .addColumn('dsl', 'text', (c) => c.notNull())
        .addColumn('version_title', 'varchar(255)')
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_sessions_agent').on('agent_sessions').columns(['agent_id', 'update_time']).execute();
      await db.schema
        .createTable('run_events')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('run_key', 'varchar(64)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('run_events_run').on('run_events').columns(['run_key', 'seq']).execute();
    },
  },
  '0005_memories': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('memories')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_by', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('name_key', 'varchar(128)', (c) => c.notNull())
        .addColumn('avatar', 'text')
        .addColumn('description', 'text')
        .addColumn('memory_type', 'integer', (c) => c.notNull())
        .addColumn('storage_type', 'varchar(16)', (c) => c.notNull().defaultTo('table'))
        .addColumn('embd_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('llm_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('permission', 'varchar(8)', (c) => c.notNull())
        .addColumn('memory_size', 'bigint', (c) => c.notNull())
        .addColumn('forgetting_policy', 'varchar(16)', (c) => c.notNull().defaultTo('FIFO'))
        .addColumn('temperature', 'real', (c) => c.notNull())
        .addColumn('system_prompt', 'text', (c) => c.notNull())
        .addColumn('user_prompt', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('memories_tenant_name').on('memories').columns(['tenant_id', 'name_key']).unique().execute();
      await db.schema
        .createTable('memory_tasks')
        .addColumn('memory_id', 'varchar(32)', (c) => c.notNull().references('memories.id').onDelete('cascade'))
        .addColumn('message_id', 'bigint', (c) => c.notNull())
        .addColumn('progress', 'real', (c) => c.notNull().defaultTo(0))
        .addColumn('progress_msg', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_tasks_pk', ['memory_id', 'message_id'])
        .execute();
    },
  },
  '0006_mcp_servers': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('mcp_servers')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('server_type', 'varchar(32)', (c) => c.notNull())
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', 'bigint', (c) => c.notNull())
        .addColumn('update_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mcp_servers_tenant_name').on('mcp_servers').columns(['tenant_id', 'name']).unique().execute();
    },
  },
  '0007_dataset_metadata_config': {
    async up(db: Kysely<any>) {
      // RAGFlow's AutoMetadataConfig of a dataset (GET|PUT /datasets/{id}/metadata/config), JSON.
      await db.schema.alterTable('datasets').addColumn('metadata_config', 'text').execute();
    },
  },
};

class InCodeProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
