import { useEffect, useId, useRef, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import { Link } from '../router.js';

/** An error from the API (or anything else), shown with the server's message. */
export function ErrorMessage({ error, onDismiss }: { error: Error | string | undefined | null; onDismiss?: () => void }) {
  if (!error) return null;
  const message = typeof error === 'string' ? error : error.message;
  return (
    <div className="error" role="alert">
      <span className="pre-line">{message}</span>
      {onDismiss && (
        <button type="button" className="link" onClick={onDismiss} aria-label="Dismiss the error">
          ×
        </button>
      )}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <div className="notice" role="status">
      {children}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function PageHeader({ title, children, back }: { title: ReactNode; children?: ReactNode; back?: { to: string; label: string } }) {
  return (
    <header className="page-header">
      <div>
        {back && (
          <Link to={back.to} className="back">
            ← {back.label}
          </Link>
        )}
        <h1>{title}</h1>
      </div>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}

type FieldProps = { label: string; hint?: ReactNode };

/** A control's id and its hint, linked: the hint describes the control to screen readers. */
function useField(hint: ReactNode) {
  const id = useId();
  const hintId = `${id}-hint`;
  return {
    id,
    describedBy: hint ? hintId : undefined,
    hint: hint ? (
      <small id={hintId} className="muted">
        {hint}
      </small>
    ) : null,
  };
}

export function TextField({ label, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const field = useField(hint);
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <input id={field.id} aria-describedby={field.describedBy} {...input} />
      {field.hint}
    </div>
  );
}

export function TextArea({ label, hint, ...input }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const field = useField(hint);
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <textarea id={field.id} aria-describedby={field.describedBy} {...input} />
      {field.hint}
    </div>
  );
}

export interface Option {
  value: string;
  label: string;
}

export function SelectField({ label, hint, options, ...select }: FieldProps & { options: Option[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  const field = useField(hint);
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <select id={field.id} aria-describedby={field.describedBy} {...select}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {field.hint}
    </div>
  );
}

export function CheckboxField({ label, hint, ...input }: { label: ReactNode; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const field = useField(hint);
  return (
    <div className="field checkbox">
      <input id={field.id} type="checkbox" aria-describedby={field.describedBy} {...input} />
      <label htmlFor={field.id}>{label}</label>
      {field.hint}
    </div>
  );
}

/** A number slider with its value shown and typed in: similarity knobs. */
export function RangeField({ label, value, onChange, min, max, step, hint }: FieldProps & { value: number; onChange: (v: number) => void; min: number; max: number; step: number }) {
  const field = useField(hint);
  return (
    <div className="field range">
      <label htmlFor={field.id}>{label}</label>
      <div className="range-row">
        <input id={field.id} type="range" min={min} max={max} step={step} value={value} onChange={(e) => onChange(Number(e.target.value))} aria-describedby={field.describedBy} />
        <input type="number" aria-label={`${label} (value)`} min={min} max={max} step={step} value={value} onChange={(e) => onChange(Number(e.target.value))} />
      </div>
      {field.hint}
    </div>
  );
}

/** A form's primary button: says what is happening while `busy`, and cannot be pressed twice. */
export function SubmitButton({ label, busy, busyLabel = 'Saving…', disabled, onClick }: { label: string; busy: boolean; busyLabel?: string; disabled?: boolean; onClick?: () => void }) {
  return (
    <button type={onClick ? 'button' : 'submit'} className="primary" onClick={onClick} disabled={busy || disabled}>
      {busy ? busyLabel : label}
    </button>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const pct = Math.round(Math.max(0, Math.min(1, value)) * 100);
  return (
    <div className="progress">
      <progress max={100} value={pct} aria-label={label} />
      <span className="muted">{pct}%</span>
    </div>
  );
}

/** A modal dialog on the native <dialog> element: focus stays inside, Escape closes it. */
export function Dialog({ title, open, onClose, children, wide }: { title: string; open: boolean; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      // showModal focuses the first focusable element, the close button: start at the first field instead.
      d.querySelector<HTMLElement>('input:not([type=hidden]), textarea, select')?.focus();
    }
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className={wide ? 'wide' : undefined} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <div className="dialog-header">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="link" onClick={onClose} aria-label="Close">
              ×
            </button>
          </div>
          {children}
        </>
      )}
    </dialog>
  );
}

export function Tabs({ items, current }: { items: { to: string; label: string }[]; current: string }) {
  return (
    <nav className="tabs" aria-label="Sections">
      {items.map((t) => (
        <Link key={t.to} to={t.to} aria-current={t.to === current ? 'page' : undefined}>
          {t.label}
        </Link>
      ))}
    </nav>
  );
}

export function Pager({ page, pageSize, total, onPage }: { page: number; pageSize: number; total: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next
      </button>
    </nav>
  );
}

export function formatTime(seconds: number | null | undefined): string {
  if (!seconds) return '—';
  return new Date(seconds * 1000).toLocaleString();
}

/** "1 chunk", "2 chunks": a count with its noun in the right number. */
export function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
