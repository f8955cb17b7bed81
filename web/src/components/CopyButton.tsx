import { useState } from 'react';

/** Copies `text`; says so, or says why not (clipboard access needs a secure context). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('Copied');
    } catch {
      setState('Could not copy: select the text and copy it');
    }
  };
  return (
    <span>
      <button type="button" onClick={copy}>
        {label}
      </button>{' '}
      <span role="status" className="muted small">
        {state}
      </span>
    </span>
  );
}
