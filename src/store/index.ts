import { sql } from 'kysely';
import type { MetaDb } from './db.js';
import { UserRepo } from './users.js';
import { ApiKeyRepo } from './api-keys.js';
import { DatasetRepo } from './datasets.js';
import { DocumentRepo } from './documents.js';
import { ProviderRepo } from './providers.js';
import { ChatRepo } from './chats.js';
import { SessionRepo } from './sessions.js';
import { AgentRepo, AgentSessionRepo } from './agents.js';
import { McpServerRepo } from './mcp-servers.js';
import { MemoryRepo } from './memories.js';
import { SettingsRepo } from './settings.js';
import { EnrichmentRepo } from './enrichment.js';
import { GraphRepo } from './graph.js';
import { SearchAppRepo } from './search-apps.js';
import { IngestionStepRepo } from './ingestion-steps.js';
import { AgentRunRepo } from './agent-runs.js';

/** The MetaStore: one repository per table group, all SQL lives below src/store. */
export class MetaStore {
  readonly users: UserRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly datasets: DatasetRepo;
  readonly documents: DocumentRepo;
  readonly providers: ProviderRepo;
  readonly chats: ChatRepo;
  readonly sessions: SessionRepo;
  readonly agents: AgentRepo;
  readonly agentSessions: AgentSessionRepo;
  readonly mcpServers: McpServerRepo;
  readonly memories: MemoryRepo;
  readonly settings: SettingsRepo;
  readonly enrichment: EnrichmentRepo;
  readonly graph: GraphRepo;
  readonly searchApps: SearchAppRepo;
  readonly ingestionSteps: IngestionStepRepo;
  readonly agentRuns: AgentRunRepo;

  constructor(readonly db: MetaDb) {
    this.users = new UserRepo(db.kysely);
    this.apiKeys = new ApiKeyRepo(db.kysely);
    this.datasets = new DatasetRepo(db.kysely);
    this.documents = new DocumentRepo(db.kysely);
    this.providers = new ProviderRepo(db.kysely);
    this.chats = new ChatRepo(db.kysely);
    this.sessions = new SessionRepo(db.kysely);
    this.agents = new AgentRepo(db.kysely);
    this.agentSessions = new AgentSessionRepo(db.kysely);
    this.mcpServers = new McpServerRepo(db.kysely);
    this.memories = new MemoryRepo(db.kysely);
    this.settings = new SettingsRepo(db.kysely);
    this.enrichment = new EnrichmentRepo(db.kysely);
    this.graph = new GraphRepo(db.kysely);
    this.searchApps = new SearchAppRepo(db.kysely);
    this.ingestionSteps = new IngestionStepRepo(db.kysely);
    this.agentRuns = new AgentRunRepo(db.kysely);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db.kysely);
  }
}
