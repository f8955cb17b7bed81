import type { ReactNode } from 'react';
import { CheckboxField } from './ui.js';

/** A fieldset of checkboxes choosing several values (datasets, memory types). */
export function CheckboxList({ legend, options, value, onChange, children }: { legend: string; options: { value: string; label: ReactNode }[]; value: string[]; onChange: (values: string[]) => void; children?: ReactNode }) {
  const toggle = (v: string, on: boolean) => onChange(on ? [...value, v] : value.filter((x) => x !== v));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {children}
      {options.map((o) => (
        <CheckboxField key={o.value} label={o.label} checked={value.includes(o.value)} onChange={(e) => toggle(o.value, e.target.checked)} />
      ))}
    </fieldset>
  );
}
