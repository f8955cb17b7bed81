import { useState, type DragEvent } from 'react';
import { uploadFiles } from '../api/upload.js';
import { ProgressBar } from './ui.js';

interface QueuedFile {
  key: number;
  name: string;
  progress: number;
  state: 'waiting' | 'uploading' | 'done' | 'failed';
  message?: string;
}

/** Files upload a few at a time, each in its own request, so each has its own progress and outcome. */
const PARALLEL = 2;
/** An uploaded file's line stays this long ("Uploaded"), then leaves: the documents table lists it from then on. */
export const UPLOADED_LINGER_MS = 4000;
let nextKey = 0;

/**
 * Drop files here (or choose them): each file is uploaded with its own progress bar; a file the
 * server refuses shows the server's reason and the others go on.
 */
export function UploadZone({ datasetId, onUploaded }: { datasetId: string; onUploaded: (documentIds: string[]) => void }) {
  const [queue, setQueue] = useState<QueuedFile[]>([]);
  const [over, setOver] = useState(false);

  const update = (key: number, patch: Partial<QueuedFile>) => setQueue((q) => q.map((f) => (f.key === key ? { ...f, ...patch } : f)));
  const remove = (key: number) => setQueue((q) => q.filter((f) => f.key !== key));

  const start = async (files: File[]) => {
    if (!files.length) return;
    const items = files.map((file) => ({ file, entry: { key: nextKey++, name: file.name, progress: 0, state: 'waiting' as const } }));
    setQueue((q) => [...q.filter((f) => f.state === 'uploading' || f.state === 'waiting'), ...items.map((i) => i.entry)]);
    const pending = [...items];
    const worker = async () => {
      for (let item = pending.shift(); item; item = pending.shift()) {
        const { file, entry } = item;
        update(entry.key, { state: 'uploading' });
        try {
          const result = await uploadFiles(datasetId, [file], (p) => update(entry.key, { progress: p }));
          const refused = result.errors.map((e) => e.message).join('; ');
          update(entry.key, { state: refused ? 'failed' : 'done', progress: 1, message: refused || undefined });
          // A refused file stays until dismissed: its reason must be read.
          if (!refused) setTimeout(() => remove(entry.key), UPLOADED_LINGER_MS);
          if (result.docs.length) onUploaded(result.docs.map((d) => d.id));
        } catch (err) {
          update(entry.key, { state: 'failed', message: (err as Error).message });
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  };

  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void start(Array.from(e.dataTransfer?.files ?? []));
  };

  return (
    <section className="upload" aria-label="Upload documents">
      <div
        className={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
      >
        <p>Drop files here to upload them</p>
        <p className="muted">or</p>
        <label className="button" htmlFor="upload-input">
          Choose files…
        </label>
        <input
          id="upload-input"
          type="file"
          multiple
          className="visually-hidden-input"
          onChange={(e) => {
            void start(Array.from(e.target.files ?? []));
            e.target.value = '';
          }}
        />
      </div>
      {queue.length > 0 && (
        <ul className="upload-list" aria-label="Uploads" aria-live="polite">
          {queue.map((f) => (
            <li key={f.key} className={f.state} data-upload-state={f.state}>
              <span className="name">{f.name}</span>
              {f.state === 'failed' ? (
                <>
                  <span className="error-text" role="alert">
                    Failed: {f.message}
                  </span>
                  <button type="button" className="link" onClick={() => remove(f.key)} aria-label={`Dismiss ${f.name}`}>
                    ×
                  </button>
                </>
              ) : (
                <ProgressBar value={f.progress} label={`Upload of ${f.name}`} />
              )}
              <span className="muted small">{f.state === 'done' ? 'Uploaded' : f.state === 'waiting' ? 'Waiting' : f.state === 'uploading' ? 'Uploading' : ''}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
