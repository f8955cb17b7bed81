import { useEffect, useState } from 'react';
import { CheckboxField, TextArea, TextField } from './ui.js';

type Config = Record<string, unknown>;

/**
 * parser_config as a form. Only the keys the chunkers read get a form control (chunk size,
 * delimiters, tables as HTML, parent/child chunks); every other key of RAGFlow's ParserConfig can
 * be edited in the JSON view, which the server validates.
 */
export function ParserConfigForm({ method, value, onChange }: { method: string; value: Config; onChange: (config: Config) => void }) {
  const [asJson, setAsJson] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(value, null, 2));
  const [jsonError, setJsonError] = useState<string>();

  useEffect(() => {
    if (!asJson) setText(JSON.stringify(value, null, 2));
  }, [value, asJson]);

  const set = (key: string, v: unknown) => onChange({ ...value, [key]: v });
  const parentChild = (value.parent_child ?? {}) as Config;
  const setParentChild = (key: string, v: unknown) => onChange({ ...value, parent_child: { ...parentChild, [key]: v } });
  const textual = method === 'naive';

  return (
    <fieldset className="parser-config">
      <legend>Parser settings ({method})</legend>
      <CheckboxField label="Edit as JSON" checked={asJson} onChange={(e) => setAsJson(e.target.checked)} />
      {asJson ? (
        <TextArea
          label="parser_config (JSON)"
          rows={10}
          className="mono"
          value={text}
          hint={jsonError ?? 'Every ParserConfig key; the server names any key it refuses.'}
          aria-invalid={jsonError ? true : undefined}
          onChange={(e) => {
            setText(e.target.value);
            try {
              const parsed = JSON.parse(e.target.value);
              if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('parser_config must be a JSON object');
              setJsonError(undefined);
              onChange(parsed);
            } catch (err) {
              setJsonError(`Not valid: ${(err as Error).message}`);
            }
          }}
        />
      ) : textual ? (
        <>
          <TextField
            label="Chunk size (tokens)"
            type="number"
            min={1}
            max={2048}
            value={Number(value.chunk_token_num ?? 512)}
            onChange={(e) => set('chunk_token_num', Number(e.target.value))}
          />
          <TextField
            label="Delimiters"
            value={escapeControls(String(value.delimiter ?? '\n'))}
            hint="Characters that end a piece of text; \n is a new line, `…` quotes a multi-character delimiter."
            onChange={(e) => set('delimiter', unescapeControls(e.target.value))}
          />
          <CheckboxField label="Tables as HTML" checked={value.html4excel === true} onChange={(e) => set('html4excel', e.target.checked)} />
          <CheckboxField
            label="Parent/child chunks"
            hint="Small child chunks are matched; their parent chunk is returned."
            checked={parentChild.use_parent_child === true}
            onChange={(e) => setParentChild('use_parent_child', e.target.checked)}
          />
          {parentChild.use_parent_child === true && (
            <TextField
              label="Child delimiters"
              value={escapeControls(String(parentChild.children_delimiter ?? '\n'))}
              onChange={(e) => setParentChild('children_delimiter', unescapeControls(e.target.value))}
            />
          )}
        </>
      ) : (
        <p className="muted">The {method} method has no settings of its own; use the JSON view for advanced keys.</p>
      )}
    </fieldset>
  );
}

/** Newlines and tabs shown as \n and \t in a one-line input, and back. */
function escapeControls(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

function unescapeControls(s: string): string {
  return s.replace(/\\(\\|n|t)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\'));
}
