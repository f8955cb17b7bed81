export { deleteDatasets } from './delete-datasets.js';
export { parseDocument } from './parse-document.js';
export { agentRun } from './agent-run.js';
export { agentComponentDebug } from './agent-debug.js';
export { memoryExtraction } from './memory-extraction.js';
export { graphIndex } from './graph-index.js';
export { raptorIndex } from './raptor-index.js';
export { agentScheduledRun } from './agent-scheduled-run.js';
