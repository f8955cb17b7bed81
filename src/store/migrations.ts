import { Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import { columnTypes, onPostgres } from './dialect.js';

/**
 * Versioned migrations, applied in name order at start. Written with the portable schema builder;
 * column types come from columnTypes (dialect.ts), which spells on PostgreSQL what SQLite does.
 */
const migrations: Record<string, Migration> = {
  '0001_accounts_and_datasets': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('users')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('email', t.string(255), (c) => c.notNull().unique())
        .addColumn('nickname', t.string(100), (c) => c.notNull())
        .addColumn('password_hash', t.text, (c) => c.notNull())
        .addColumn('is_admin', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tenant_members')
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('user_id', t.string(32), (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', t.string(16), (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('tenant_members_pk', ['tenant_id', 'user_id'])
        .execute();
      await db.schema.createIndex('tenant_members_user').on('tenant_members').column('user_id').execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('user_id', t.string(32), (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', t.string(64), (c) => c.notNull().unique())
        .addColumn('token_prefix', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('last_used_at', t.bigint)
        .execute();
      await db.schema
        .createTable('datasets')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(128), (c) => c.notNull())
        .addColumn('name_key', t.string(128), (c) => c.notNull())
        .addColumn('avatar', t.text)
        .addColumn('description', t.text)
        .addColumn('embedding_model', t.string(255), (c) => c.notNull())
        .addColumn('permission', t.string(8), (c) => c.notNull())
        .addColumn('chunk_method', t.string(32), (c) => c.notNull())
        .addColumn('parser_config', t.text, (c) => c.notNull())
        .addColumn('pagerank', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('language', t.string(32), (c) => c.notNull().defaultTo('English'))
        .addColumn('status', t.string(16), (c) => c.notNull().defaultTo('active'))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('datasets_tenant_name').on('datasets').columns(['tenant_id', 'name_key']).execute();
      await db.schema
        .createTable('documents')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('dataset_id', t.string(32), (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('location', t.string(255), (c) => c.notNull())
        .addColumn('size', t.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn('type', t.string(16), (c) => c.notNull().defaultTo(''))
        .addColumn('suffix', t.string(16), (c) => c.notNull().defaultTo(''))
        .addColumn('chunk_method', t.string(32), (c) => c.notNull())
        .addColumn('parser_config', t.text, (c) => c.notNull())
        .addColumn('source_type', t.string(16), (c) => c.notNull().defaultTo('local'))
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('run', t.string(8), (c) => c.notNull().defaultTo('UNSTART'))
        .addColumn('progress', t.real, (c) => c.notNull().defaultTo(0))
        .addColumn('progress_msg', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('process_begin_at', t.bigint)
        .addColumn('process_duration', t.real, (c) => c.notNull().defaultTo(0))
        .addColumn('chunk_count', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('token_count', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('meta_fields', t.text, (c) => c.notNull().defaultTo('{}'))
        .addColumn('run_seq', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('documents_dataset').on('documents').columns(['dataset_id', 'create_time']).execute();
      await sql`select 1`.execute(db);
    },
  },
  '0002_model_providers': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('provider_instances')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('factory', t.string(64), (c) => c.notNull())
        .addColumn('instance_name', t.string(128), (c) => c.notNull())
        .addColumn('api_key', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('base_url', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .addUniqueConstraint('provider_instances_name', ['tenant_id', 'factory', 'instance_name'])
        .execute();
      await db.schema
        .createTable('provider_models')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('instance_id', t.string(32), (c) => c.notNull().references('provider_instances.id').onDelete('cascade'))
        .addColumn('model_name', t.string(255), (c) => c.notNull())
        .addColumn('model_types', t.text, (c) => c.notNull())
        .addColumn('max_tokens', t.integer, (c) => c.notNull().defaultTo(8192))
        .addColumn('vision', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addUniqueConstraint('provider_models_name', ['instance_id', 'model_name'])
        .execute();
      await db.schema
        .createTable('tenant_defaults')
        .addColumn('tenant_id', t.string(32), (c) => c.primaryKey())
        .addColumn('chat_model', t.string(255))
        .addColumn('embedding_model', t.string(255))
        .addColumn('rerank_model', t.string(255))
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
    },
  },
  '0003_chats': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('chats')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('description', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('icon', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('llm_id', t.string(255))
        .addColumn('llm_setting', t.text, (c) => c.notNull())
        .addColumn('prompt_config', t.text, (c) => c.notNull())
        .addColumn('similarity_threshold', t.real, (c) => c.notNull())
        .addColumn('vector_similarity_weight', t.real, (c) => c.notNull())
        .addColumn('top_n', t.integer, (c) => c.notNull())
        .addColumn('top_k', t.integer, (c) => c.notNull())
        .addColumn('rerank_id', t.string(255), (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chats_tenant').on('chats').columns(['tenant_id', 'create_time']).execute();
      await db.schema
        .createTable('chat_datasets')
        .addColumn('chat_id', t.string(32), (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('dataset_id', t.string(32), (c) => c.notNull())
        .addColumn('position', t.integer, (c) => c.notNull())
        .addPrimaryKeyConstraint('chat_datasets_pk', ['chat_id', 'dataset_id'])
        .execute();
      await db.schema
        .createTable('chat_sessions')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('chat_id', t.string(32), (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('user_id', t.string(255), (c) => c.notNull().defaultTo(''))
        .addColumn('messages', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chat_sessions_chat').on('chat_sessions').columns(['chat_id', 'create_time']).execute();
    },
  },
  '0004_agents': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('agents')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('title', t.string(255), (c) => c.notNull())
        .addColumn('title_key', t.string(255), (c) => c.notNull())
        .addColumn('description', t.text)
        .addColumn('avatar', t.text)
        .addColumn('permission', t.string(8), (c) => c.notNull())
        .addColumn('canvas_type', t.string(64))
        .addColumn('canvas_category', t.string(32), (c) => c.notNull())
        .addColumn('dsl', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agents_tenant_title').on('agents').columns(['tenant_id', 'title_key']).unique().execute();
      await db.schema
        .createTable('agent_versions')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('agent_id', t.string(32), (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('title', t.string(255), (c) => c.notNull())
        .addColumn('description', t.text)
        .addColumn('dsl', t.text, (c) => c.notNull())
        .addColumn('release', t.integer, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_versions_agent').on('agent_versions').columns(['agent_id', 'create_time']).execute();
      await db.schema
        .createTable('agent_sessions')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('agent_id', t.string(32), (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('user_id', t.string(255), (c) => c.notNull().defaultTo(''))
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('source', t.string(16), (c) => c.notNull())
        .addColumn('messages', t.text, (c) => c.notNull())
        .addColumn('reference', t.text, (c) => c.notNull())
        .addColumn('dsl', t.text, (c) => c.notNull())
        .addColumn('version_title', t.string(255))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_sessions_agent').on('agent_sessions').columns(['agent_id', 'update_time']).execute();
      // SqliteRunEvents also creates this table when its file has none (its index file may not be the
      // metadata file), hence "if not exists".
      await db.schema
        .createTable('run_events')
        .ifNotExists()
        .addColumn('seq', onPostgres(db) ? 'bigserial' : 'integer', (c) => (onPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('run_key', t.string(64), (c) => c.notNull())
        .addColumn('body', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('run_events_run').ifNotExists().on('run_events').columns(['run_key', 'seq']).execute();
    },
  },
  '0005_memories': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('memories')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(128), (c) => c.notNull())
        .addColumn('name_key', t.string(128), (c) => c.notNull())
        .addColumn('avatar', t.text)
        .addColumn('description', t.text)
        .addColumn('memory_type', t.integer, (c) => c.notNull())
        .addColumn('storage_type', t.string(16), (c) => c.notNull().defaultTo('table'))
        .addColumn('embd_id', t.string(255), (c) => c.notNull())
        .addColumn('llm_id', t.string(255), (c) => c.notNull())
        .addColumn('permission', t.string(8), (c) => c.notNull())
        .addColumn('memory_size', t.bigint, (c) => c.notNull())
        .addColumn('forgetting_policy', t.string(16), (c) => c.notNull().defaultTo('FIFO'))
        .addColumn('temperature', t.real, (c) => c.notNull())
        .addColumn('system_prompt', t.text, (c) => c.notNull())
        .addColumn('user_prompt', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('memories_tenant_name').on('memories').columns(['tenant_id', 'name_key']).unique().execute();
      await db.schema
        .createTable('memory_tasks')
        .addColumn('memory_id', t.string(32), (c) => c.notNull().references('memories.id').onDelete('cascade'))
        .addColumn('message_id', t.bigint, (c) => c.notNull())
        .addColumn('progress', t.real, (c) => c.notNull().defaultTo(0))
        .addColumn('progress_msg', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_tasks_pk', ['memory_id', 'message_id'])
        .execute();
    },
  },
  '0006_mcp_servers': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('mcp_servers')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('url', t.text, (c) => c.notNull())
        .addColumn('server_type', t.string(32), (c) => c.notNull())
        .addColumn('headers', t.text, (c) => c.notNull())
        .addColumn('description', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mcp_servers_tenant_name').on('mcp_servers').columns(['tenant_id', 'name']).unique().execute();
    },
  },
  '0007_dataset_metadata_config': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // RAGFlow's AutoMetadataConfig of a dataset (GET|PUT /datasets/{id}/metadata/config), JSON.
      await db.schema.alterTable('datasets').addColumn('metadata_config', t.text).execute();
    },
  },
  '0008_settings': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // Installation-wide values every process must share, e.g. the JWT signing secret on PostgreSQL.
      await db.schema
        .createTable('settings')
        .addColumn('key', t.string(64), (c) => c.primaryKey())
        .addColumn('value', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
    },
  },
  '0009_documents_run_index': {
    async up(db: Kysely<any>) {
      // /metrics counts documents per run state at every scrape: with this covering index that is an index
      // scan instead of a table scan.
      await db.schema.createIndex('documents_run').on('documents').column('run').execute();
    },
  },
  '0010_enrichment': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // Model answers of enrichment jobs (keywords, questions, RAPTOR summaries, graph extraction) by the
      // hash of what was asked: a re-parse or a resumed job never pays for the same call twice.
      await db.schema
        .createTable('enrichment_cache')
        .addColumn('key', t.string(64), (c) => c.primaryKey())
        .addColumn('value', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      // The latest dataset-wide index job of each type (raptor, graph): RAGFlow's task row, with progress.
      await db.schema
        .createTable('dataset_tasks')
        .addColumn('dataset_id', t.string(32), (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('type', t.string(16), (c) => c.notNull())
        .addColumn('id', t.string(32), (c) => c.notNull())
        .addColumn('status', t.string(16), (c) => c.notNull())
        .addColumn('progress', t.text, (c) => c.notNull())
        .addColumn('message', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .addColumn('finish_time', t.bigint)
        .addPrimaryKeyConstraint('dataset_tasks_pk', ['dataset_id', 'type'])
        .execute();
    },
  },
  '0011_memory_messages': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // The memory index's ledger on the scale-out profile (src/store/milvus-memory-ledger.ts): memory
      // messages, their per-memory totals, the extraction guards, the id sequence, and the messages whose
      // Milvus search copy is still to be written. The embedded profile keeps memories in the index file
      // (memory_rows, memory_usage, …) and leaves these tables empty.
      await db.schema
        .createTable('memory_messages')
        .addColumn('message_id', t.bigint, (c) => c.primaryKey())
        .addColumn('memory_id', t.string(32), (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('message_type', t.string(16), (c) => c.notNull())
        .addColumn('source_id', t.bigint, (c) => c.notNull())
        .addColumn('user_id', t.text, (c) => c.notNull())
        .addColumn('agent_id', t.text, (c) => c.notNull())
        .addColumn('session_id', t.text, (c) => c.notNull())
        .addColumn('session_key', t.text, (c) => c.notNull())
        .addColumn('dedup_key', t.text)
        .addColumn('content', t.text, (c) => c.notNull())
        .addColumn('valid_at', t.bigint, (c) => c.notNull())
        .addColumn('invalid_at', t.bigint)
        .addColumn('forget_at', t.bigint)
        .addColumn('status', t.integer, (c) => c.notNull())
        .addColumn('size', t.bigint, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('dim', t.integer, (c) => c.notNull())
        .addColumn('vector', t.blob)
        .execute();
      await db.schema.createIndex('memory_messages_fifo').on('memory_messages').columns(['memory_id', 'valid_at', 'message_id']).execute();
      await db.schema
        .createIndex('memory_messages_forgotten')
        .on('memory_messages')
        .columns(['memory_id', 'forget_at', 'valid_at', 'message_id'])
        .where(sql.ref('forget_at'), 'is not', null)
        .execute();
      await db.schema.createIndex('memory_messages_source').on('memory_messages').columns(['memory_id', 'source_id']).execute();
      await db.schema
        .createIndex('memory_messages_dedup')
        .on('memory_messages')
        .columns(['memory_id', 'dedup_key'])
        .unique()
        .where(sql.ref('dedup_key'), 'is not', null)
        .execute();
      await db.schema
        .createTable('memory_message_totals')
        .addColumn('memory_id', t.string(32), (c) => c.primaryKey())
        .addColumn('bytes', t.bigint, (c) => c.notNull())
        .addColumn('messages', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('memory_message_guards')
        .addColumn('memory_id', t.string(32), (c) => c.notNull())
        .addColumn('source_id', t.bigint, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_message_guards_pk', ['memory_id', 'source_id'])
        .execute();
      await db.schema
        .createTable('memory_message_sequence')
        .addColumn('id', t.integer, (c) => c.primaryKey())
        .addColumn('last_id', t.bigint, (c) => c.notNull())
        .execute();
      await db.insertInto('memory_message_sequence').values({ id: 1, last_id: 0 }).execute();
      await db.schema
        .createTable('memory_message_sync')
        .addColumn('memory_id', t.string(32), (c) => c.notNull())
        .addColumn('message_id', t.bigint, (c) => c.notNull())
        .addColumn('token', t.string(32), (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_message_sync_pk', ['memory_id', 'message_id'])
        .execute();
    },
  },
  '0012_knowledge_graph': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      const dataset = (c: any) => c.notNull().references('datasets.id').onDelete('cascade');
      // Each graph job writes a build (its own build_id); knowledge_graphs points at the dataset's
      // published build, so readers see the previous graph until a new one is complete.
      await db.schema
        .createTable('knowledge_graphs')
        .addColumn('dataset_id', t.string(32), (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
        .addColumn('build_id', t.string(32), (c) => c.notNull())
        .addColumn('task_id', t.string(32), (c) => c.notNull())
        .addColumn('entities', t.integer, (c) => c.notNull())
        .addColumn('relations', t.integer, (c) => c.notNull())
        .addColumn('communities', t.integer, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      // What each extraction call found (the merge's input), by the unit of chunks it read.
      await db.schema
        .createTable('graph_extractions')
        .addColumn('build_id', t.string(32), (c) => c.notNull())
        .addColumn('unit_key', t.string(64), (c) => c.notNull())
        .addColumn('dataset_id', t.string(32), dataset)
        .addColumn('seq', t.bigint, (c) => c.notNull())
        .addColumn('chunk_ids', t.text, (c) => c.notNull())
        .addColumn('entities', t.text, (c) => c.notNull())
        .addColumn('relations', t.text, (c) => c.notNull())
        .addPrimaryKeyConstraint('graph_extractions_pk', ['build_id', 'unit_key'])
        .execute();
      await db.schema
        .createTable('graph_entities')
        .addColumn('build_id', t.string(32), (c) => c.notNull())
        .addColumn('id', t.string(32), (c) => c.notNull())
        .addColumn('dataset_id', t.string(32), dataset)
        .addColumn('ord', t.integer, (c) => c.notNull())
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('type', t.text, (c) => c.notNull())
        .addColumn('description', t.text, (c) => c.notNull())
        .addColumn('source_ids', t.text, (c) => c.notNull())
        .addColumn('mentions', t.integer, (c) => c.notNull())
        .addColumn('pagerank', t.real, (c) => c.notNull())
        .addColumn('community', t.integer, (c) => c.notNull())
        .addPrimaryKeyConstraint('graph_entities_pk', ['build_id', 'id'])
        .execute();
      await db.schema
        .createTable('graph_relations')
        .addColumn('build_id', t.string(32), (c) => c.notNull())
        .addColumn('source_id', t.string(32), (c) => c.notNull())
        .addColumn('target_id', t.string(32), (c) => c.notNull())
        .addColumn('dataset_id', t.string(32), dataset)
        .addColumn('ord', t.integer, (c) => c.notNull())
        .addColumn('description', t.text, (c) => c.notNull())
        .addColumn('weight', t.real, (c) => c.notNull())
        .addColumn('source_ids', t.text, (c) => c.notNull())
        .addPrimaryKeyConstraint('graph_relations_pk', ['build_id', 'source_id', 'target_id'])
        .execute();
      await db.schema
        .createTable('graph_communities')
        .addColumn('build_id', t.string(32), (c) => c.notNull())
        .addColumn('id', t.integer, (c) => c.notNull())
        .addColumn('dataset_id', t.string(32), dataset)
        .addColumn('entity_ids', t.text, (c) => c.notNull())
        .addColumn('weight', t.real, (c) => c.notNull())
        .addColumn('title', t.text, (c) => c.notNull())
        .addColumn('summary', t.text, (c) => c.notNull())
        .addColumn('findings', t.text, (c) => c.notNull())
        .addColumn('rating', t.real, (c) => c.notNull())
        .addPrimaryKeyConstraint('graph_communities_pk', ['build_id', 'id'])
        .execute();
      for (const table of ['graph_extractions', 'graph_entities', 'graph_relations', 'graph_communities']) {
        await db.schema.createIndex(`${table}_dataset`).on(table).columns(['dataset_id', 'build_id']).execute();
      }
      await db.schema.createIndex('graph_entities_rank').on('graph_entities').columns(['build_id', 'pagerank']).execute();
      await db.schema.createIndex('graph_relations_target').on('graph_relations').columns(['build_id', 'target_id']).execute();
    },
  },
  '0013_search_apps': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // RAGFlow's search apps: a saved retrieval + answer configuration over datasets.
      await db.schema
        .createTable('search_apps')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('name_key', t.string(255), (c) => c.notNull())
        .addColumn('description', t.text, (c) => c.notNull().defaultTo(''))
        .addColumn('avatar', t.text)
        .addColumn('search_config', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .addColumn('update_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('search_apps_tenant_name').on('search_apps').columns(['tenant_id', 'name_key']).unique().execute();
      // The share token of an API key (RAGFlow's `beta`): it opens only the /searchbots routes.
      await db.schema.alterTable('api_keys').addColumn('beta', t.string(32)).execute();
      await db.schema.createIndex('api_keys_beta').on('api_keys').column('beta').unique().execute();
    },
  },
  '0014_ingestion_pipelines': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // A dataset that ingests through a pipeline canvas (RAGFlow's parse_type + pipeline_id); null: its chunk method.
      await db.schema.alterTable('datasets').addColumn('pipeline_id', t.string(32)).execute();
      await db.schema.alterTable('datasets').addColumn('parse_type', t.integer).execute();
      // The pipeline the document's current run ingests through (null: the chunk method): its workflow id names it.
      await db.schema.alterTable('documents').addColumn('pipeline_id', t.string(32)).execute();
      // One row per step of an ingestion run: the ingestion logs.
      await db.schema
        .createTable('ingestion_steps')
        .addColumn('document_id', t.string(32), (c) => c.notNull())
        .addColumn('run_seq', t.integer, (c) => c.notNull())
        .addColumn('step_index', t.integer, (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('dataset_id', t.string(32), (c) => c.notNull())
        .addColumn('pipeline_id', t.string(32))
        .addColumn('component_id', t.string(255), (c) => c.notNull())
        .addColumn('component_name', t.string(32), (c) => c.notNull())
        .addColumn('status', t.string(16), (c) => c.notNull())
        .addColumn('begin_at', t.bigint, (c) => c.notNull())
        .addColumn('end_at', t.bigint)
        .addColumn('output', t.text, (c) => c.notNull().defaultTo('{}'))
        .addColumn('error', t.text)
        .addPrimaryKeyConstraint('ingestion_steps_pk', ['document_id', 'run_seq', 'step_index'])
        .execute();
      await db.schema.createIndex('ingestion_steps_dataset').on('ingestion_steps').columns(['dataset_id', 'begin_at']).execute();
    },
  },
  '0015_agent_runs': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // One row per agent turn (id = the turn's message id): the durable run records (docs/agents.md, "Runs and replay").
      await db.schema
        .createTable('agent_runs')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('agent_id', t.string(32), (c) => c.notNull())
        .addColumn('session_id', t.string(32), (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('status', t.string(16), (c) => c.notNull())
        .addColumn('trigger', t.string(32), (c) => c.notNull())
        .addColumn('request', t.text, (c) => c.notNull())
        .addColumn('replay_of', t.string(32))
        .addColumn('from_component', t.string(255))
        .addColumn('error', t.text)
        .addColumn('start_time', t.bigint, (c) => c.notNull())
        .addColumn('end_time', t.bigint)
        .execute();
      await db.schema.createIndex('agent_runs_session').on('agent_runs').columns(['session_id', 'start_time']).execute();
      // The components a run executed, in the order they started; values whole (the API abridges large ones).
      await db.schema
        .createTable('agent_run_steps')
        .addColumn('run_id', t.string(32), (c) => c.notNull())
        .addColumn('step_index', t.integer, (c) => c.notNull())
        .addColumn('component_id', t.string(255), (c) => c.notNull())
        .addColumn('component_name', t.string(255), (c) => c.notNull())
        .addColumn('component_type', t.string(64), (c) => c.notNull())
        .addColumn('status', t.string(16), (c) => c.notNull())
        .addColumn('reused', t.integer, (c) => c.notNull().defaultTo(0))
        .addColumn('started_at', t.bigint, (c) => c.notNull())
        .addColumn('duration', t.real)
        .addColumn('inputs', t.text, (c) => c.notNull())
        .addColumn('outputs', t.text, (c) => c.notNull())
        .addColumn('error', t.text)
        .addColumn('trace', t.text, (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_run_steps_pk', ['run_id', 'step_index'])
        .execute();
    },
  },
  '0016_agent_triggers': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // An agent's schedules; Temporal's schedule of the same id runs them (and holds paused, next runs).
      await db.schema
        .createTable('agent_schedules')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('agent_id', t.string(32), (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('spec', t.text, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_schedules_agent').on('agent_schedules').columns(['agent_id', 'create_time']).execute();
      // Each call of a trigger (webhook, webhook test, schedule run) and the turn it started.
      await db.schema
        .createTable('agent_trigger_calls')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('agent_id', t.string(32), (c) => c.notNull())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('trigger', t.string(16), (c) => c.notNull())
        .addColumn('schedule_id', t.string(32))
        .addColumn('method', t.string(8))
        .addColumn('status', t.integer)
        .addColumn('session_id', t.string(32))
        .addColumn('message_id', t.string(32))
        .addColumn('error', t.text)
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_trigger_calls_agent').on('agent_trigger_calls').columns(['agent_id', 'create_time']).execute();
      await db.schema.createIndex('agent_trigger_calls_schedule').on('agent_trigger_calls').columns(['schedule_id', 'create_time']).execute();
    },
  },
  '0017_agent_canvas_extras': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // RAGFlow's agent tags: one comma-separated string per canvas ('' = none).
      await db.schema.alterTable('agents').addColumn('tags', t.text, (c) => c.notNull().defaultTo('')).execute();
      // Files uploaded to an agent (POST /agents/{id}/upload), their bytes in the blob store; a completion's `files` names them.
      await db.schema
        .createTable('agent_attachments')
        .addColumn('id', t.string(32), (c) => c.primaryKey())
        .addColumn('tenant_id', t.string(32), (c) => c.notNull())
        .addColumn('agent_id', t.string(32), (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('created_by', t.string(32), (c) => c.notNull())
        .addColumn('name', t.string(255), (c) => c.notNull())
        .addColumn('extension', t.string(32), (c) => c.notNull())
        .addColumn('mime_type', t.string(255), (c) => c.notNull())
        .addColumn('size', t.bigint, (c) => c.notNull())
        .addColumn('create_time', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_attachments_agent').on('agent_attachments').column('agent_id').execute();
    },
  },
  '0020_memory_fact_links': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // Facts stay current (docs/memories.md): the message that superseded an updated, contradicted or corrected
      // item. The scale-out ledger's copy of the embedded index's memory_rows.replaced_by.
      await db.schema.alterTable('memory_messages').addColumn('replaced_by', t.bigint).execute();
    },
  },
  '0021_agent_run_step_references': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // The chunks a step added to its turn's reference, so a replay that reuses the step has them too (docs/agents.md, "Replay").
      await db.schema.alterTable('agent_run_steps').addColumn('reference', t.text).execute();
    },
  },
  '0022_agent_webhook_rates': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      // A webhook's rate limit holds across API replicas: one token bucket per agent, taken atomically (docs/agents.md, "Webhook").
      await db.schema
        .createTable('agent_webhook_rates')
        .addColumn('agent_id', t.string(32), (c) => c.primaryKey())
        .addColumn('tokens', t.real, (c) => c.notNull())
        .addColumn('refilled_at', t.bigint, (c) => c.notNull())
        .execute();
    },
  },
  '0023_documents_run_updated_index': {
    async up(db: Kysely<any>) {
      // The orphaned-run repair reads RUNNING rows unchanged for a while, oldest first, a page at a time
      // (src/services/orphaned-runs.ts): a range of this index, however many documents wait to be parsed.
      await db.schema.createIndex('documents_run_updated').on('documents').columns(['run', 'update_time', 'id']).execute();
    },
  },
};

/** Names of every migration, in the order they apply. */
export const migrationNames = (): string[] => Object.keys(migrations).sort();

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
