import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import type { TurnFile } from '../src/services/agent-attachments.js';
import { agentAttachmentKey } from '../src/services/blob-keys.js';

/**
 * `sys.files` as RAGFlow fills it (`Canvas.get_files`): each file of the turn as text, parsed by Cairn's
 * parsers in a parser process; an image as a data URL. Parsing happens here, in an activity, so the
 * workflow stays deterministic and a worker that dies mid-parse is replaced.
 */
export function agentFileActivities({ store, blobs, parsers }: Pick<ActivityDeps, 'store' | 'blobs' | 'parsers'>) {
  return {
    async agentReadFiles(input: { tenantId: string; agentId: string; files: TurnFile[] }): Promise<string[]> {
      const signal = Context.current().cancellationSignal;
      const texts: string[] = [];
      for (const file of input.files) {
        const row = await store.agentAttachments.byId(file.id);
        const bytes = row && row.agent_id === input.agentId ? await blobs.get(agentAttachmentKey(row.tenant_id, row.id)) : undefined;
        if (!row || !bytes) throw ApplicationFailure.nonRetryable(`the attached file '${file.name}' (${file.id}) is no longer stored`, 'MissingAttachment');
        if (row.mime_type.startsWith('image/')) {
          texts.push(`data:${row.mime_type};base64,${Buffer.from(bytes).toString('base64')}`);
          continue;
        }
        try {
          const doc = bytes.byteLength ? await parsers.extract(bytes, row.name, { signal }) : { sections: [] };
          texts.push(doc.sections.map((s) => s.text).filter(Boolean).join('\n'));
        } catch (err) {
          throw ApplicationFailure.nonRetryable(`the attached file '${row.name}' could not be read: ${err instanceof Error ? err.message : String(err)}`, 'UnreadableAttachment');
        }
      }
      return texts;
    },
  };
}
