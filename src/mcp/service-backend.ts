import type { Logger } from 'pino';
import type { Principal } from '../services/auth.js';
import type { DatasetService } from '../services/datasets.js';
import type { ChatService } from '../services/chats.js';
import type { RetrievalService } from '../services/retrieval.js';
import type { DatasetView, ListQuery, McpBackend, RetrieveQuery } from './backend.js';
import { ApiError } from '../errors.js';
import { ModelError } from '../models/types.js';

export interface McpServices {
  datasets: DatasetService;
  chats: ChatService;
  retrieval: RetrievalService;
}

/** The tools' backend inside the API process: the services, called as the request's principal. */
export class ServiceBackend implements McpBackend {
  constructor(
    private readonly services: McpServices,
    private readonly principal: Principal,
    private readonly log: Logger,
  ) {}

  listDatasets(query: ListQuery) {
    return this.safely(async () => {
      const { total, datasets } = await this.services.datasets.list(this.principal, { ...query, orderby: 'create_time', desc: true });
      return { total, datasets: datasets as unknown as DatasetView[] };
    });
  }

  listChats(query: ListQuery) {
    return this.safely(() => this.services.chats.list(this.principal, { ...query, orderby: 'create_time', desc: true }));
  }

  retrieve(input: RetrieveQuery) {
    return this.safely(async () => {
      const { total, chunks } = await this.services.retrieval.retrieve(this.principal, input);
      return { total, chunks };
    });
  }

  /** Service errors carry messages meant for the caller; anything else is logged and not exposed (as over HTTP). */
  private async safely<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ApiError || err instanceof ModelError) throw err;
      this.log.error({ err }, 'mcp tool failed');
      throw new Error('Internal error: the failure was logged');
    }
  }
}
