import { Reply, route, type RouteSpec } from '../routes.js';
import { sendOk } from '../envelope.js';
import { pagingParams, text } from '../schemas.js';
import { envelopeOrStream } from '../openapi.js';
import { answerAgentWhole, streamAgentEvents } from '../agent-frames.js';
import { badRequest } from '../../errors.js';
import type { AgentRunService } from '../../services/agent-runs.js';

const RUNS = '/agents/:agent_id/sessions/:session_id/runs';

const replayBody = {
  type: 'object',
  required: ['from_component'],
  properties: {
    from_component: text(255, 1),
    inputs: { type: 'object', additionalProperties: { type: 'object' } },
    stream: { type: 'boolean', default: true },
    return_trace: { type: 'boolean', default: false },
  },
};

function stepField(field: string | undefined): 'inputs' | 'outputs' {
  if (field === 'inputs' || field === 'outputs') return field;
  throw badRequest(`A step has 'inputs' and 'outputs', not '${field}'`);
}

/** Run records of agent turns and their replay (docs/agents.md, "Runs and replay"). */
export function agentRunRoutes(runs: AgentRunService): RouteSpec[] {
  return [
    route({
      method: 'get', path: RUNS, tag: 'agent runs', query: { type: 'object', properties: pagingParams() },
      summary: "A session's runs, newest first: status, timings, trigger, and each component's status, duration, inputs and outputs (values over 4 KB abridged, with a link to the whole value)",
      handler: async ({ principal, params, query }) => {
        const { runs: list, total } = await runs.list(principal, params.agent_id!, params.session_id!, query.page || 1, query.page_size || 30);
        return new Reply(list, { total });
      },
    }),
    route({
      method: 'get', path: `${RUNS}/:run_id`, tag: 'agent runs', summary: 'One run of a session (run id = the turn\'s message id) with its steps',
      handler: ({ principal, params }) => runs.detail(principal, params.agent_id!, params.session_id!, params.run_id!),
    }),
    route({
      method: 'get', path: `${RUNS}/:run_id/steps/:step/:field`, tag: 'agent runs', summary: "A step's whole inputs or outputs (field: inputs | outputs; step: its index in the run)",
      handler: ({ principal, params }) => runs.stepValue(principal, params.agent_id!, params.session_id!, params.run_id!, params.step!, stepField(params.field)),
    }),
    route({
      method: 'get', path: `${RUNS}/:run_id/steps/:step/:field/:key`, tag: 'agent runs', summary: "One whole value of a step's inputs or outputs (the link of an abridged value)",
      handler: ({ principal, params }) => runs.stepValue(principal, params.agent_id!, params.session_id!, params.run_id!, params.step!, stepField(params.field), params.key),
    }),
    route({
      method: 'post', path: `${RUNS}/:run_id/replay`, tag: 'agent runs', raw: true, body: replayBody, admission: 'long',
      responses: envelopeOrStream('Canvas events of the new run as server-sent events ending with [DONE] (stream, the default), or the aggregated answer'),
      summary: 'Replay a run as a new turn: components that finished before from_component take their recorded outputs (no model call), from_component and the rest run anew; inputs replace the Begin inputs',
      handler: async (ctx) => {
        const { params, body } = ctx;
        const turn = await runs.replay(ctx.principal, params.agent_id!, params.session_id!, params.run_id!, { from_component: body.from_component, inputs: body.inputs });
        if (body.stream ?? true) return streamAgentEvents(ctx.res, turn);
        const whole = await answerAgentWhole(ctx.res, turn, Boolean(body.return_trace));
        if (whole) sendOk(ctx.res, whole);
      },
    }),
    route({
      method: 'get', path: '/agents/:agent_id/logs/:message_id', tag: 'agent runs', summary: "RAGFlow's turn log: [{component_id, trace: [{path, tool_name, arguments, result, elapsed_time}]}] per component that called tools; {} when none",
      handler: ({ principal, params }) => runs.logs(principal, params.agent_id!, params.message_id!),
    }),
  ];
}
