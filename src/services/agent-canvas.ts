import type { MetaStore } from '../store/index.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import type { CanvasDsl } from '../agents/dsl.js';
import type { ComponentResult } from '../agents/run-types.js';
import { resetCanvas } from '../agents/reset.js';
import { componentInputForm, nodeNames } from '../agents/input-form.js';
import { debugSetup, DebugInputError, type ComponentDebugInput } from '../agents/component-debug.js';
import { EDITOR_PROMPTS } from '../agents/editor-prompts.js';
import { countTags, normalizeTags } from './agent-tags.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { nowMs, toSeconds } from '../time.js';

/** Runs one component as a durable workflow and waits for its result (the Temporal workflow client). */
export interface ComponentDebugRunner {
  runAgentComponent(input: ComponentDebugInput): Promise<ComponentResult>;
}

/** The editor's agent routes beside CRUD and runs: reset, a component's input form and debug run, prompts, tags. */
export class AgentCanvasService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly runner: ComponentDebugRunner,
  ) {}

  /** RAGFlow's reset: the agent's DSL without run state, saved (no new version: nothing the author wrote changed) and returned. */
  async reset(p: Principal, agentId: string): Promise<CanvasDsl> {
    const agent = await this.agents.get(p, agentId);
    const dsl = resetCanvas(JSON.parse(agent.dsl) as CanvasDsl);
    await this.store.agents.update(agent.id, { dsl: JSON.stringify(dsl), update_time: nowMs() });
    return dsl;
  }

  async inputForm(p: Principal, agentId: string, componentId: string) {
    const { dsl } = await this.component(p, agentId, componentId, false);
    return componentInputForm(dsl.components[componentId]!, nodeNames(dsl));
  }

  /**
   * Runs one component with the given inputs (RAGFlow's `{params: {name: {value}}}`) as the
   * `agentComponentDebug` workflow, on the agent's draft with its run state reset, and returns its outputs
   * (`_ERROR` when it failed, `_elapsed_time` in seconds).
   */
  async debug(p: Principal, agentId: string, componentId: string, params: Record<string, { value?: unknown }>) {
    const { agent, dsl } = await this.component(p, agentId, componentId, true);
    const fresh = resetCanvas(dsl);
    const startedMs = nowMs();
    fresh.globals = {
      'sys.query': '', 'sys.user_id': p.userId, 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [],
      ...fresh.globals,
      'sys.date': new Date(startedMs).toISOString().slice(0, 19).replace('T', ' '),
    };
    let setup;
    try {
      setup = debugSetup(fresh, componentId, params);
    } catch (err) {
      if (err instanceof DebugInputError) throw badRequest(err.message);
      throw err;
    }
    const { graph: _layout, ...canvas } = setup.canvas;
    const runKey = newId();
    const result = await this.runner.runAgentComponent({
      runKey,
      agentId: agent.id,
      sessionId: `debug-${runKey}`,
      tenantId: agent.tenant_id,
      createdAt: toSeconds(startedMs),
      canvas: canvas as CanvasDsl,
      names: nodeNames(dsl),
      request: { query: String(canvas.globals['sys.query'] ?? ''), inputs: setup.inputs, files: [], userId: p.userId },
      componentId,
    });
    return { ...result.outputs, ...(result.error ? { _ERROR: result.error } : {}), _elapsed_time: (nowMs() - startedMs) / 1000 };
  }

  /** The agent and its draft DSL, with the component in it; a pipeline's components do not run here. */
  private async component(p: Principal, agentId: string, componentId: string, toRun: boolean) {
    const agent = toRun ? await this.agents.runnable(p, agentId) : await this.agents.get(p, agentId);
    const dsl = JSON.parse(agent.dsl) as CanvasDsl;
    if (!dsl.components?.[componentId]) throw notFound(`Component '${componentId}' not found in agent '${agentId}'`);
    return { agent, dsl };
  }

  prompts() {
    return EDITOR_PROMPTS;
  }

  /** The tags of the agents the caller sees (own workspace, and team agents of the teams they belong to), with counts. */
  async tags(p: Principal, canvasCategory?: string) {
    const values = await this.store.agents.tagValues({
      tenantIds: [p.tenantId, ...p.teamTenants],
      ownTenantId: p.tenantId,
      categories: canvasCategory ? [canvasCategory] : undefined,
      orderBy: 'update_time',
      desc: true,
      offset: 0,
      limit: 0,
    });
    return countTags(values);
  }

  /** Replaces the agent's tags (a list, or one comma-separated string); RAGFlow answers `true`. */
  async setTags(p: Principal, agentId: string, tags: unknown): Promise<true> {
    const agent = await this.agents.get(p, agentId).catch((err: unknown) => {
      // RAGFlow's single message for a missing agent and one the caller may not touch.
      throw err instanceof ApiError && err.status === 404 ? notFound('Agent not found or no permission.') : err;
    });
    if (tags !== undefined && tags !== null && typeof tags !== 'string' && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string'))) {
      throw badRequest('`tags` must be a list of strings or a comma-separated string');
    }
    await this.store.agents.update(agent.id, { tags: normalizeTags((tags as string[] | string | null | undefined) ?? ''), update_time: nowMs() });
    return true;
  }
}
