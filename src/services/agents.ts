import type { MetaStore } from '../store/index.js';
import type { AgentRow, AgentVersionRow } from '../store/agents.js';
import type { Principal } from './auth.js';
import type { ListPage } from './paging.js';
import { requireManage } from './access.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { validateDsl, DslError } from '../agents/validate.js';
import type { CanvasDsl } from '../agents/dsl.js';
import { agentTemplate, agentTemplates, templateDsl, type AgentTemplate } from '../agents/templates/index.js';
import { validatePipelineDsl } from '../pipelines/validate.js';
import { AGENT_CANVAS, DATAFLOW_CANVAS } from '../pipelines/names.js';
import { webhookBegin, webhookConfig } from '../triggers/webhook-config.js';
import { splitTags } from './agent-tags.js';

export interface AgentInput {
  title?: string;
  description?: string | null;
  dsl?: Record<string, unknown>;
  avatar?: string | null;
  permission?: 'me' | 'team';
  canvas_type?: string | null;
  canvas_category?: string;
  /** Save this DSL as a published version too. */
  release?: boolean | string;
  /** Create from this template (src/agents/templates/) instead of `dsl`. */
  template_id?: string | null;
  /** With `template_id`: the datasets every Retrieval of the template searches. */
  dataset_ids?: string[] | null;
}

export interface ListAgentsInput extends ListPage<'create_time' | 'update_time' | 'title'> {
  keywords?: string;
  title?: string;
  /** Comma-separated categories (RAGFlow's filter): `agent_canvas`, `dataflow_canvas`; none = all. */
  canvas_category?: string;
  /** Comma-separated tags (RAGFlow's filter): agents carrying any of them. */
  tags?: string;
}

const MAX_TITLE = 255;

function checkTitle(title: unknown): string {
  if (typeof title !== 'string' || !title.trim()) throw badRequest('No title in request.');
  const t = title.trim();
  if (t.length > MAX_TITLE) throw badRequest(`Agent title must be at most ${MAX_TITLE} characters`);
  return t;
}

/** An agent canvas is validated (and its run state filled) as an agent; a pipeline as a pipeline, unchanged. */
function checkDsl(dsl: unknown, category: string): CanvasDsl | Record<string, unknown> {
  if (dsl === undefined || dsl === null) throw badRequest('No DSL data in request.');
  try {
    if (category === DATAFLOW_CANVAS) return validatePipelineDsl(dsl);
    const canvas = validateDsl(dsl);
    // A webhook Begin's settings are checked on save, so a call never meets one that cannot be enforced.
    const webhook = webhookBegin(canvas);
    if (webhook) webhookConfig(webhook);
    return canvas;
  } catch (err) {
    if (err instanceof DslError) throw badRequest(`Invalid DSL: ${err.message}`);
    throw err;
  }
}

export const isRelease = (v: unknown) => v === true || v === 'true';

/** Agents: canvases in RAGFlow's DSL, shared like datasets (`me` / `team`), with saved and published versions. */
export class AgentService {
  constructor(private readonly store: MetaStore) {}

  async create(p: Principal, input: AgentInput) {
    if (input.template_id !== undefined && input.template_id !== null) input = await this.fromTemplate(p, input);
    const title = checkTitle(input.title);
    const category = input.canvas_category ?? AGENT_CANVAS;
    const dsl = checkDsl(input.dsl, category);
    if (await this.store.agents.titleTaken(p.tenantId, title.toLowerCase())) throw badRequest(`${title} already exists.`);
    const now = nowMs();
    const row: AgentRow = {
      id: newId(),
      tenant_id: p.tenantId,
      created_by: p.userId,
      title,
      title_key: title.toLowerCase(),
      description: input.description ?? null,
      avatar: input.avatar ?? null,
      permission: input.permission ?? 'me',
      canvas_type: input.canvas_type ?? null,
      canvas_category: category,
      dsl: JSON.stringify(dsl),
      tags: '',
      create_time: now,
      update_time: now,
    };
    await this.store.agents.insert(row);
    await this.saveVersion(row, isRelease(input.release));
    return this.view(row);
  }

  /** The agent templates, RAGFlow's `GET /agents/templates` shape. */
  templates() {
    return agentTemplates().map(({ id, title, description, canvas_type, canvas_category, avatar, dsl }) => ({ id, title, description, canvas_type, canvas_category, avatar: avatar ?? null, dsl }));
  }

  /**
   * A create request for a template: its DSL with `dataset_ids` in every Retrieval, its English title
   * (made unique as datasets are: "<title>(1)", "<title>(2)", …) unless `title` is given, its description
   * and category unless given.
   */
  private async fromTemplate(p: Principal, input: AgentInput): Promise<AgentInput> {
    if (input.dsl !== undefined && input.dsl !== null) throw badRequest('Give either dsl or template_id, not both.');
    const template = agentTemplate(String(input.template_id));
    if (!template) throw badRequest(`No agent template '${String(input.template_id)}'. GET /agents/templates lists them.`);
    const datasetIds = input.dataset_ids ? await this.checkDatasets(p, input.dataset_ids) : undefined;
    const given = input.title === undefined || input.title === null ? undefined : input.title;
    return {
      ...input,
      title: given ?? (await this.freeTitle(p.tenantId, template)),
      description: input.description ?? template.description.en,
      avatar: input.avatar ?? template.avatar ?? null,
      canvas_type: input.canvas_type ?? template.canvas_type,
      canvas_category: input.canvas_category ?? template.canvas_category,
      dsl: templateDsl(template, datasetIds),
      template_id: undefined,
    };
  }

  private async freeTitle(tenantId: string, template: AgentTemplate): Promise<string> {
    const base = template.title.en;
    if (!(await this.store.agents.titleTaken(tenantId, base.toLowerCase()))) return base;
    for (let i = 1; ; i++) {
      const candidate = `${base}(${i})`;
      if (!(await this.store.agents.titleTaken(tenantId, candidate.toLowerCase()))) return candidate;
    }
  }

  /** Datasets for a template's Retrievals: each one the caller's own workspace's (a run searches as the agent's owner). */
  private async checkDatasets(p: Principal, ids: string[]): Promise<string[]> {
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup) throw badRequest(`\`dataset_ids\` lists dataset '${dup}' twice`);
    for (const id of ids) {
      const dataset = requireManage(p, await this.store.datasets.byId(id), 'Dataset', id);
      if (dataset.tenant_id !== p.tenantId) throw badRequest(`Dataset '${id}' belongs to another workspace: an agent searches only its own workspace's datasets`);
    }
    return ids;
  }

  /** The agent if the caller may use it: its tenant's members for `team`, the owner tenant always; 404 otherwise. */
  async get(p: Principal, id: string): Promise<AgentRow> {
    return requireManage(p, await this.store.agents.byId(id), 'Agent', id);
  }

  /** One canvas; a pipeline also lists the datasets ingesting through it (RAGFlow's `datasets`), those the caller may see. */
  async detail(p: Principal, id: string) {
    const agent = await this.get(p, id);
    const view = await this.view(agent);
    if (agent.canvas_category !== DATAFLOW_CANVAS) return view;
    const users = await this.store.datasets.usingPipeline(agent.id);
    const visible = users.filter((d) => d.tenant_id === p.tenantId || (d.permission === 'team' && p.teamTenants.includes(d.tenant_id)));
    return { ...view, datasets: visible.map((d) => ({ id: d.id, name: d.name })) };
  }

  /** The agent if it can run as one (sessions, completions): a pipeline runs on documents instead. */
  async runnable(p: Principal, id: string): Promise<AgentRow> {
    const agent = await this.get(p, id);
    if (agent.canvas_category === DATAFLOW_CANVAS) {
      throw badRequest(`'${agent.title}' is an ingestion pipeline (canvas_category ${DATAFLOW_CANVAS}): pipelines run on documents, not as agent sessions or completions.`);
    }
    return agent;
  }

  async list(p: Principal, input: ListAgentsInput) {
    const query = {
      tenantIds: [p.tenantId, ...p.teamTenants],
      ownTenantId: p.tenantId,
      id: input.id,
      title: input.title ?? input.name,
      keywords: input.keywords,
      categories: input.canvas_category ? [...new Set(input.canvas_category.split(',').map((c) => c.trim()).filter(Boolean))] : undefined,
      tags: input.tags ? splitTags(input.tags) : undefined,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    };
    const [rows, total] = await Promise.all([this.store.agents.list(query), this.store.agents.count(query)]);
    return { canvas: await Promise.all(rows.map((r) => this.view(r))), total };
  }

  async update(p: Principal, id: string, input: AgentInput) {
    const current = await this.get(p, id);
    if (input.canvas_category !== undefined && input.canvas_category !== current.canvas_category) {
      throw badRequest(`canvas_category cannot change (this canvas is ${current.canvas_category}): create a new one instead.`);
    }
    const patch: Partial<AgentRow> = { update_time: nowMs() };
    if (input.title !== undefined && input.title !== null) {
      const title = checkTitle(input.title);
      if (await this.store.agents.titleTaken(current.tenant_id, title.toLowerCase(), id)) throw badRequest(`${title} already exists.`);
      patch.title = title;
      patch.title_key = title.toLowerCase();
    }
    if (input.description !== undefined && input.description !== null) patch.description = input.description;
    if (input.avatar !== undefined && input.avatar !== null) patch.avatar = input.avatar;
    if (input.canvas_type !== undefined && input.canvas_type !== null) patch.canvas_type = input.canvas_type;
    if (input.permission !== undefined) {
      if (current.tenant_id !== p.tenantId) throw forbidden('Only the owner of the agent may change its permission');
      patch.permission = input.permission;
    }
    if (input.dsl !== undefined && input.dsl !== null) patch.dsl = JSON.stringify(checkDsl(input.dsl, current.canvas_category));
    await this.store.agents.update(id, patch);
    const updated = (await this.store.agents.byId(id))!;
    if (patch.dsl || isRelease(input.release)) await this.saveVersion(updated, isRelease(input.release));
    return { update_time: toSeconds(updated.update_time) };
  }

  async delete(p: Principal, id: string): Promise<string[]> {
    const agent = await this.get(p, id);
    if (agent.tenant_id !== p.tenantId) throw forbidden('Only the owner of the agent is authorized for this operation.');
    const sessions = await this.store.agentSessions.idsOfAgent(id);
    await this.store.agents.delete(id);
    return sessions;
  }

  async versions(p: Principal, id: string) {
    await this.get(p, id);
    return (await this.store.agents.versions(id)).map(versionView);
  }

  async version(p: Principal, id: string, versionId: string) {
    await this.get(p, id);
    return versionView(await this.requireVersion(id, versionId));
  }

  /** Publishes (or withdraws) a saved version; sessions created with `release` use the latest published one. */
  async setVersionRelease(p: Principal, id: string, versionId: string, release: boolean) {
    await this.get(p, id);
    await this.requireVersion(id, versionId);
    await this.store.agents.setRelease(versionId, release);
    return versionView((await this.store.agents.version(id, versionId))!);
  }

  async deleteVersion(p: Principal, id: string, versionId: string): Promise<void> {
    await this.get(p, id);
    await this.requireVersion(id, versionId);
    await this.store.agents.deleteVersion(versionId);
  }

  private async requireVersion(id: string, versionId: string) {
    const v = await this.store.agents.version(id, versionId);
    if (!v) throw notFound(`Version '${versionId}' of agent '${id}' not found`);
    return v;
  }

  /** The DSL a new session runs: the draft, or with `release` the latest published version. */
  async sessionDsl(agent: AgentRow, release: boolean): Promise<{ dsl: CanvasDsl; versionTitle: string | null }> {
    if (!release) return { dsl: JSON.parse(agent.dsl) as CanvasDsl, versionTitle: null };
    const published = await this.store.agents.latestRelease(agent.id);
    if (!published) throw badRequest('No available published version');
    return { dsl: JSON.parse(published.dsl) as CanvasDsl, versionTitle: published.title };
  }

  private async saveVersion(agent: AgentRow, release: boolean): Promise<void> {
    const now = nowMs();
    await this.store.agents.addVersion({
      id: newId(),
      agent_id: agent.id,
      title: `${agent.title}_${new Date(now).toISOString().slice(0, 19).replace('T', ' ')}`,
      description: agent.description,
      dsl: agent.dsl,
      release: release ? 1 : 0,
      create_time: now,
    });
  }

  private async view(row: AgentRow) {
    const published = await this.store.agents.latestRelease(row.id);
    return {
      id: row.id,
      avatar: row.avatar,
      user_id: row.tenant_id,
      tenant_id: row.tenant_id,
      title: row.title,
      description: row.description,
      permission: row.permission,
      canvas_type: row.canvas_type,
      canvas_category: row.canvas_category,
      dsl: JSON.parse(row.dsl) as unknown,
      tags: row.tags,
      release: Boolean(published),
      last_publish_time: published ? toSeconds(published.create_time) : null,
      create_time: toSeconds(row.create_time),
      update_time: toSeconds(row.update_time),
      create_date: toHttpDate(row.create_time),
      update_date: toHttpDate(row.update_time),
    };
  }
}

function versionView(v: AgentVersionRow) {
  return {
    id: v.id,
    title: v.title,
    description: v.description,
    release: v.release === 1,
    create_time: toSeconds(v.create_time),
    dsl: JSON.parse(v.dsl) as unknown,
  };
}
