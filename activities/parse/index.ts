import type { ActivityDeps } from '../deps.js';
import { runGuard } from './run.js';
import { extractActivities, fileParser } from './extract.js';
import { enrichActivities } from './enrich.js';
import { chunkEmbedder, embedActivities } from './embed.js';
import { documentIndexer, indexActivities } from './index-chunks.js';
import { pipelineActivities } from './pipeline.js';
import { finishActivities } from './finish.js';

/**
 * The steps of the parseDocument workflow (workflows/parse-document.ts), one module per step: extract and
 * chunk, enrich (keywords and questions), embed, index, the end of a run that did not finish, and the
 * steps of an ingestion pipeline (pipeline.ts). Every
 * step checks that its run is still the document's current one (run.ts) before it writes.
 */
export function parseActivities(deps: ActivityDeps) {
  const guard = runGuard(deps);
  const embed = chunkEmbedder(deps, guard);
  const extract = extractActivities(deps, guard);
  const enrich = enrichActivities(deps, guard);
  const indexing = indexActivities(deps, guard, embed);
  return {
    ...extract,
    ...enrich,
    ...embedActivities(deps, guard, embed),
    ...indexing,
    ...finishActivities(deps),
    ...pipelineActivities(deps, guard, { parseFile: fileParser(deps, guard), embed, indexer: documentIndexer(deps), chunkMethod: { ...extract, ...enrich, ...indexing } }),
  };
}
