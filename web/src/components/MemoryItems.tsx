import { useState } from 'react';
import { api } from '../api/http.js';
import { FormDialog } from './FormDialog.js';
import { ErrorMessage, TextArea, formatTime } from './ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';

/** What the memory page reads of an item for its state (docs/memories.md "Facts stay current"). */
export interface ItemValidity {
  message_id: number;
  message_type: string;
  invalid_at: number | null;
  replaced_by: number | null;
}

/** Current: no `invalid_at`, or one still in the future (an extracted "until Friday"). */
export function isCurrent(item: ItemValidity, nowSeconds = Date.now() / 1000): boolean {
  return item.invalid_at === null || item.invalid_at > nowSeconds;
}

/** An item's state: replaced (by which), no longer valid (retracted or expired), or valid until a date. */
export function ItemState({ item }: { item: ItemValidity }) {
  if (isCurrent(item)) return item.invalid_at === null ? null : <span className="badge">valid until {formatTime(item.invalid_at)}</span>;
  const since = formatTime(item.invalid_at);
  return item.replaced_by !== null ? (
    <span className="badge bad wrap">
      replaced by #{item.replaced_by} · {since}
    </span>
  ) : (
    <span className="badge bad wrap">invalid since {since}</span>
  );
}

/**
 * A message's extracted items with their text, state and, for current ones, Correct (a new version
 * replaces the item) and Retract (no longer current, never deleted). Texts load when the list opens:
 * the listing carries none, and a page of messages may hold hundreds of items.
 */
export function ExtractedItems({ memoryId, items, onChanged }: { memoryId: string; items: ItemValidity[]; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  if (!items.length) return <span className="muted">—</span>;
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {items.length} item{items.length === 1 ? '' : 's'}: {[...new Set(items.map((x) => x.message_type))].join(', ')}
      </summary>
      {open && (
        <ul className="chunk-list" aria-label="Extracted items">
          {items.map((item) => (
            <ItemRow key={item.message_id} memoryId={memoryId} item={item} onChanged={onChanged} />
          ))}
        </ul>
      )}
    </details>
  );
}

function ItemRow({ memoryId, item, onChanged }: { memoryId: string; item: ItemValidity; onChanged: () => void }) {
  const ref = `${memoryId}:${item.message_id}`;
  const content = useLoad((signal) => api.get<{ content: string }>(`/messages/${ref}/content`, undefined, signal), [ref]);
  const [correcting, setCorrecting] = useState(false);
  const retract = useConfirmedAction(onChanged);
  const current = isCurrent(item);
  return (
    <li className={current ? 'chunk' : 'chunk disabled'} aria-label={`Item ${item.message_id}`}>
      <div className="chunk-meta">
        <span>
          #{item.message_id} {item.message_type}
        </span>
        <ItemState item={item} />
      </div>
      <ErrorMessage error={content.error} />
      <p className="chunk-content">{content.data?.content ?? '…'}</p>
      <ErrorMessage error={retract.error} />
      {current && (
        <div className="chunk-meta">
          <button type="button" onClick={() => setCorrecting(true)} disabled={!content.data} aria-label={`Correct item ${item.message_id}`}>
            Correct
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => retract.confirmThenRun('Retract this item? It is no longer returned (kept as history, shown with "Show history").', () => api.post(`/messages/${ref}/retract`))}
            disabled={retract.busy}
            aria-label={`Retract item ${item.message_id}`}
          >
            Retract
          </button>
        </div>
      )}
      {correcting && content.data && (
        <CorrectDialog
          itemRef={ref}
          id={item.message_id}
          text={content.data.content}
          onClose={() => setCorrecting(false)}
          onCorrected={() => {
            setCorrecting(false);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

/** The item's text to edit; saved as a new item that replaces this one (the old stays as history). */
function CorrectDialog({ itemRef, id, text, onClose, onCorrected }: { itemRef: string; id: number; text: string; onClose: () => void; onCorrected: () => void }) {
  const [value, setValue] = useState(text);
  const { busy, error, run } = useAction();
  const submit = async () => {
    const done = await run(() => api.post(`/messages/${itemRef}/correct`, { content: value }));
    if (done !== undefined) onCorrected();
  };
  return (
    <FormDialog title={`Correct item #${id}`} onClose={onClose} onSubmit={submit} busy={busy} error={error} submitLabel="Save correction" busyLabel="Saving…" submitDisabled={!value.trim() || value === text} wide>
      <TextArea
        label="Corrected text"
        rows={4}
        required
        value={value}
        onChange={(e) => setValue(e.target.value)}
        hint="Saved as a new item that replaces this one; this one stays as history, marked replaced."
      />
    </FormDialog>
  );
}
