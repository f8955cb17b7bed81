import { useEffect, type ReactNode } from 'react';
import type { ModelType } from '../api/types.js';
import { useModels } from '../models.js';
import { ErrorMessage, SelectField, type Option } from './ui.js';

/**
 * The workspace's models of one type as a select. `none` labels the empty choice (the workspace
 * default, or no model); without it a model must be chosen, and the first is chosen once the list
 * arrives. A current value the list lacks (a removed model) stays shown as chosen.
 */
export function ModelSelect({
  type,
  label,
  value,
  onChange,
  none,
  hint,
  disabled,
}: {
  type: ModelType;
  label: string;
  value: string;
  onChange: (modelId: string) => void;
  none?: string;
  hint?: ReactNode;
  disabled?: boolean;
}) {
  const models = useModels(type);
  const options: Option[] = (models.data ?? []).map((m) => ({ value: m.model_id, label: m.model_id }));
  if (value && !options.some((o) => o.value === value)) options.unshift({ value, label: value });
  if (none !== undefined) options.unshift({ value: '', label: none });
  const first = options[0]?.value;
  useEffect(() => {
    if (none === undefined && !value && first) onChange(first);
    // onChange is the caller's setter: only a new list or a cleared value chooses again.
  }, [none, value, first]);
  return (
    <>
      <SelectField label={label} options={options} value={value} hint={hint} disabled={disabled} onChange={(e) => onChange(e.target.value)} />
      <ErrorMessage error={models.error} />
    </>
  );
}
