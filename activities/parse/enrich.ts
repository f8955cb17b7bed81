import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { ChunkDraft } from '../../src/chunking/types.js';
import { enrichChunks as generateKeywords, enrichmentLabel, wantsEnrichment, type EnrichmentProgress, type KeywordSettings } from '../../src/enrichment/keywords.js';
import { ModelError } from '../../src/models/types.js';
import { readJson, workPrefix, writeJson } from '../work-files.js';
import { BANDS, STALE, keepAlive, staleRun, type RunGuard, type RunRef } from './run.js';

/** The optional middle step: keywords and questions for each chunk, written by the dataset's chat model. */
export function enrichActivities({ store, blobs, models, enrichConcurrency: concurrency }: Pick<ActivityDeps, 'store' | 'blobs' | 'models' | 'enrichConcurrency'>, { currentRun, watchRun, report }: RunGuard) {
  return {
    /**
     * parser_config auto_keywords / auto_questions: the dataset's chat model writes keywords and
     * questions for each chunk, stored with it (keywords searched, questions searched and embedded).
     * Every answer is kept in the enrichment cache as it arrives, so a retried attempt (a killed
     * worker, a model failure) and a later re-parse ask only what was never answered.
     */
    async enrichChunks(ref: RunRef & { chunksKey: string; enrich: KeywordSettings }): Promise<{ chunksKey: string; progress?: EnrichmentProgress }> {
      const doc = await currentRun(ref);
      if (!wantsEnrichment(ref.enrich)) return { chunksKey: ref.chunksKey };
      const ds = await store.datasets.byId(doc.dataset_id);
      if (!ds) throw ApplicationFailure.nonRetryable(`dataset ${doc.dataset_id} no longer exists`, STALE);
      const label = enrichmentLabel(ref.enrich);
      const llmId = (JSON.parse(doc.parser_config) as { llm_id?: unknown }).llm_id;
      const model = await models.chat(ds.tenant_id, typeof llmId === 'string' && llmId ? llmId : null).catch((err: Error) => {
        throw ApplicationFailure.nonRetryable(`generating ${label} needs a chat model (parser_config.llm_id or the default chat model): ${err.message}`, 'NoChatModel');
      });
      const drafts = await readJson<ChunkDraft[]>(blobs, ref.chunksKey);
      const [from, to] = BANDS.enrich;
      await report(ref, from, `Generating ${label}: 0/${drafts.length} chunks`);
      const stop = keepAlive();
      const run = watchRun(ref);
      try {
        const { drafts: enriched, progress } = await generateKeywords(drafts, ref.enrich, {
          cache: store.enrichment,
          tenantId: ds.tenant_id,
          model,
          concurrency,
          signal: run.signal,
          onProgress: async (p) => {
            heartbeat(p);
            await report(ref, from + ((to - from) * p.done) / Math.max(1, p.total), `Generating ${label}: ${p.done}/${p.total} chunks`);
          },
        });
        const chunksKey = `${workPrefix(doc.dataset_id, doc.id, ref.runSeq)}/chunks-enriched.json`;
        await writeJson(blobs, chunksKey, enriched);
        const calls = progress.model_calls + progress.cached_calls;
        await report(ref, to, `Generated ${label} for ${drafts.length} chunks: ${calls} model answers (${progress.cached_calls} from cache), ${progress.tokens} tokens`);
        // The counts in the result: the step's cost stays readable in the workflow history (Temporal UI, bench/enrich).
        return { chunksKey, progress };
      } catch (err) {
        if (run.stale()) throw staleRun(ref);
        throw enrichmentFailure(err, label, model.id);
      } finally {
        run.stop();
        stop();
      }
    },
  };
}

/**
 * A model that refuses the request (wrong key, unknown model: ModelError status 4xx) fails the
 * document at once; an unreachable or failing one is retried by Temporal, with the model named.
 */
function enrichmentFailure(err: unknown, label: string, modelId: string): unknown {
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('parsing was cancelled');
  const message = `generating ${label} with ${modelId} failed: ${err instanceof Error ? err.message : String(err)}`;
  if (err instanceof ModelError && err.status < 500) return ApplicationFailure.nonRetryable(message, 'ModelRefused');
  return ApplicationFailure.retryable(message, err instanceof Error ? err.name : 'Error');
}
