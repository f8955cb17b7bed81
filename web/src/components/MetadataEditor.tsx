import { useState } from 'react';

type Meta = Record<string, unknown>;

/** Document metadata (meta_fields) as key/value rows. Values: numbers, true/false and JSON lists keep their type. */
export function MetadataEditor({ value, onChange }: { value: Meta; onChange: (meta: Meta) => void }) {
  const [rows, setRows] = useState(() => Object.entries(value).map(([k, v]) => ({ key: k, text: typeof v === 'string' ? v : JSON.stringify(v) })));

  const commit = (next: { key: string; text: string }[]) => {
    setRows(next);
    const meta: Meta = {};
    for (const r of next) if (r.key.trim()) meta[r.key.trim()] = parseValue(r.text);
    onChange(meta);
  };

  return (
    <fieldset className="metadata">
      <legend>Metadata</legend>
      {rows.length === 0 && <p className="muted">No metadata.</p>}
      {rows.map((r, i) => (
        <div className="meta-row" key={i}>
          <input aria-label={`Metadata key ${i + 1}`} placeholder="key" value={r.key} onChange={(e) => commit(rows.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)))} />
          <input aria-label={`Metadata value ${i + 1}`} placeholder="value" value={r.text} onChange={(e) => commit(rows.map((x, j) => (j === i ? { ...x, text: e.target.value } : x)))} />
          <button type="button" onClick={() => commit(rows.filter((_, j) => j !== i))} aria-label={`Remove metadata ${r.key || i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setRows([...rows, { key: '', text: '' }])}>
        Add a field
      </button>
      <small className="muted">Numbers and true/false keep their type; write a list as JSON, e.g. ["a", "b"].</small>
    </fieldset>
  );
}

function parseValue(text: string): unknown {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t.startsWith('[')) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}
