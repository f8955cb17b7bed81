import type { Response } from 'express';
import { route, type RouteSpec } from '../routes.js';
import { LIMITS, list, text } from '../schemas.js';
import { FILE_RESPONSES, sendFile, uploadBody, uploadMiddleware } from './documents.js';
import type { AgentCanvasService } from '../../services/agent-canvas.js';
import type { AgentAttachmentService, UploadedFile } from '../../services/agent-attachments.js';
import type { PipelineRerunService } from '../../services/pipeline-rerun.js';
import { CANVAS_CATEGORIES } from '../../pipelines/names.js';
import { contentDisposition } from '../../text/file-names.js';

const tagsBody = {
  type: 'object',
  properties: { tags: { anyOf: [list(text(LIMITS.name), 1000), text(LIMITS.longText), { type: 'null' }] } },
};

/** RAGFlow's debug body: `{params: {name: {value}}}`, one entry per input-form key. */
const debugBody = {
  type: 'object',
  required: ['params'],
  properties: { params: { type: 'object', additionalProperties: { type: 'object' } } },
};

const rerunBody = {
  type: 'object',
  required: ['id', 'dsl', 'component_id'],
  properties: { id: text(LIMITS.id * 2 + 12, 1), dsl: { type: 'object' }, component_id: text(255, 1) },
};

const downloadQuery = { type: 'object', required: ['id'], properties: { id: text(LIMITS.id, 1) } };
const attachmentQuery = { type: 'object', properties: { disposition: { enum: ['inline', 'attachment'] } } };

/** The file inline (shown by the browser) or as a download with its name. */
function sendInline(res: Response, file: { name: string; bytes: Uint8Array; contentType: string }): void {
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.bytes.byteLength));
  res.setHeader('Content-Disposition', contentDisposition('inline', file.name));
  res.end(file.bytes);
}

/**
 * RAGFlow's editor routes of agents beside CRUD and runs (docs/agents.md "Editor routes"). Registered
 * before the agent routes: `/agents/tags` and friends must not be read as `/agents/{agent_id}`.
 */
export function agentCanvasRoutes(canvas: AgentCanvasService, attachments: AgentAttachmentService, rerun: PipelineRerunService, uploadLimit: number): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/agents/prompts', tag: 'agents',
      summary: "Prompt templates the agent editor offers: {task_analysis, plan_generation, reflection, citation_guidelines} (Cairn's texts)",
      handler: () => canvas.prompts(),
    }),
    route({
      method: 'get', path: '/agents/tags', tag: 'agents', query: { type: 'object', properties: { canvas_category: { enum: [...CANVAS_CATEGORIES] } } },
      summary: 'Tags of the agents the caller sees, with how many agents carry each: [{tag, count}], most used first',
      handler: ({ principal, query }) => canvas.tags(principal, query.canvas_category),
    }),
    route({
      method: 'put', path: '/agents/:agent_id/tags', tag: 'agents', body: tagsBody,
      summary: "Replace an agent's tags (a list or a comma-separated string; duplicates dropped case-insensitively); GET /agents?tags=a,b lists agents carrying any of them",
      handler: ({ principal, params, body }) => canvas.setTags(principal, params.agent_id, body.tags),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/reset', tag: 'agents',
      summary: "Clear the agent DSL's run state (history, path, outputs, sys.* globals) and return the DSL",
      handler: ({ principal, params }) => canvas.reset(principal, params.agent_id),
    }),
    route({
      method: 'get', path: '/agents/:agent_id/components/:component_id/input-form', tag: 'agents',
      summary: "A component's input form: what it reads ({key: {type, name}}), the keys its debug run takes",
      handler: ({ principal, params }) => canvas.inputForm(principal, params.agent_id, params.component_id),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/components/:component_id/debug', tag: 'agents', body: debugBody, admission: 'long',
      summary: 'Run one component with the given inputs ({params: {key: {value}}}) as a durable workflow and return its outputs',
      handler: ({ principal, params, body }) => canvas.debug(principal, params.agent_id, params.component_id, body.params),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/upload', tag: 'agents', admission: 'long',
      middleware: [uploadMiddleware(uploadLimit)], multipart: uploadBody(uploadLimit),
      summary: "Upload files for an agent's runs (multipart field `file`, repeatable): upload_info objects to pass in a completion's `files` (sys.files gets their text)",
      handler: ({ principal, params, req }) => attachments.upload(principal, params.agent_id, (req.files ?? []) as UploadedFile[]),
    }),
    route({
      method: 'get', path: '/agents/attachments/:attachment_id/preview', tag: 'agents', raw: true, responses: FILE_RESPONSES,
      summary: 'An uploaded file, for viewing in the browser (Content-Disposition inline)',
      handler: async ({ principal, params, res }) => sendInline(res, await attachments.file(principal, params.attachment_id)),
    }),
    route({
      method: 'get', path: '/agents/attachments/:attachment_id/download', tag: 'agents', raw: true, responses: FILE_RESPONSES, query: attachmentQuery,
      summary: 'An uploaded file, as a download with its name (disposition=inline shows it instead)',
      handler: async ({ principal, params, query, res }) => {
        const file = await attachments.file(principal, params.attachment_id);
        return query.disposition === 'inline' ? sendInline(res, file) : sendFile(res, file);
      },
    }),
    route({
      method: 'get', path: '/agents/download', tag: 'agents', raw: true, responses: FILE_RESPONSES, query: downloadQuery,
      summary: 'An uploaded file by id (?id=), as a download',
      handler: async ({ principal, query, res }) => sendFile(res, await attachments.file(principal, query.id)),
    }),
    route({
      method: 'post', path: '/agents/rerun', tag: 'agents', body: rerunBody,
      summary: "Rerun an ingestion pipeline on a log's document from a component on ({id: ingestion log id, dsl, component_id}); as POST /documents/ingest with from_step",
      handler: ({ principal, body }) => rerun.rerun(principal, body),
    }),
  ];
}
