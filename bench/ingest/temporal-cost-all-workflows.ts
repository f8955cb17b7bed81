/** The workflow bundle of bench/ingest/temporal-cost.ts: Cairn's workflows (as a worker bundles them) and the bench's own. */
export * from '../../workflows/index.js';
export * from './temporal-cost-workflows.js';
