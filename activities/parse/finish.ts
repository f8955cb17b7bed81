import type { ActivityDeps } from '../deps.js';
import { nowMs } from '../../src/time.js';
import { workPrefix } from '../work-files.js';
import type { RunRef } from './run.js';

/** The end of a run that did not finish: the document marked CANCEL or FAIL without partial chunks, and the work files gone. */
export function finishActivities({ store, index, blobs }: Pick<ActivityDeps, 'store' | 'index' | 'blobs'>) {
  return {
    async markCancelled(ref: RunRef): Promise<void> {
      const doc = await store.documents.byId(ref.documentId);
      if (!doc || doc.run_seq !== ref.runSeq) return;
      await index.deleteByDocument(doc.id);
      await store.ingestionSteps.endRunning(doc.id, ref.runSeq, 'CANCEL', nowMs(), 'parsing was stopped');
      await store.documents.updateRun(doc.id, ref.runSeq, {
        run: 'CANCEL',
        progress_msg: 'Cancelled: parsing was stopped; partial chunks were removed',
        chunk_count: 0,
        token_count: 0,
        process_duration: (nowMs() - (doc.process_begin_at ?? nowMs())) / 1000,
        update_time: nowMs(),
      });
    },

    async markFailed(ref: RunRef & { message: string }): Promise<void> {
      const doc = await store.documents.byId(ref.documentId);
      if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'RUNNING') return;
      await index.deleteByDocument(doc.id);
      await store.ingestionSteps.endRunning(doc.id, ref.runSeq, 'FAIL', nowMs(), ref.message);
      await store.documents.updateRun(doc.id, ref.runSeq, {
        run: 'FAIL',
        progress_msg: `Failed: ${ref.message}`,
        chunk_count: 0,
        token_count: 0,
        process_duration: (nowMs() - (doc.process_begin_at ?? nowMs())) / 1000,
        update_time: nowMs(),
      });
    },

    async removeWorkFiles(ref: RunRef & { datasetId: string }): Promise<void> {
      await blobs.deletePrefix(workPrefix(ref.datasetId, ref.documentId, ref.runSeq));
    },
  };
}
