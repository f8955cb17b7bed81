import type { FormEvent, ReactNode } from 'react';
import { Dialog, ErrorMessage, SubmitButton } from './ui.js';

/**
 * A dialog holding one form: its fields, the error of the last submit, Cancel and the submit button.
 * `onSubmit` runs without the browser's own submission; the caller closes the dialog when it succeeds.
 */
export function FormDialog({
  title,
  open = true,
  onClose,
  onSubmit,
  busy,
  error,
  submitLabel,
  busyLabel,
  submitDisabled,
  wide,
  children,
}: {
  title: string;
  open?: boolean;
  onClose: () => void;
  onSubmit: () => void;
  busy: boolean;
  error?: Error | string | null;
  submitLabel: string;
  busyLabel?: string;
  submitDisabled?: boolean;
  wide?: boolean;
  children: ReactNode;
}) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  return (
    <Dialog title={title} open={open} onClose={onClose} wide={wide}>
      <form onSubmit={submit}>
        {children}
        <ErrorMessage error={error} />
        <div className="form-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <SubmitButton label={submitLabel} busy={busy} busyLabel={busyLabel} disabled={submitDisabled} />
        </div>
      </form>
    </Dialog>
  );
}
