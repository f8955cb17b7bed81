import { SelectField } from './ui.js';

export const METADATA_OPERATORS = ['contains', 'not contains', 'start with', 'end with', 'empty', 'not empty', '=', '≠', '>', '<', '≥', '≤', 'in', 'not in'];

export interface Condition {
  name: string;
  comparison_operator: string;
  value: string;
}

export interface MetadataFilterValue {
  logic: 'and' | 'or';
  conditions: Condition[];
}

/** A metadata_condition as rows of (field, operator, value); `in` takes comma-separated values. */
export function MetadataFilter({ value, onChange }: { value: MetadataFilterValue; onChange: (v: MetadataFilterValue) => void }) {
  const setRow = (i: number, patch: Partial<Condition>) => onChange({ ...value, conditions: value.conditions.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  return (
    <fieldset>
      <legend>Metadata filter</legend>
      {value.conditions.length > 1 && (
        <SelectField
          label="Match"
          options={[
            { value: 'and', label: 'All conditions' },
            { value: 'or', label: 'Any condition' },
          ]}
          value={value.logic}
          onChange={(e) => onChange({ ...value, logic: e.target.value as 'and' | 'or' })}
        />
      )}
      {value.conditions.map((c, i) => (
        <div className="meta-row" key={i}>
          <input aria-label={`Condition ${i + 1} field`} placeholder="field" value={c.name} onChange={(e) => setRow(i, { name: e.target.value })} />
          <select aria-label={`Condition ${i + 1} operator`} value={c.comparison_operator} onChange={(e) => setRow(i, { comparison_operator: e.target.value })}>
            {METADATA_OPERATORS.map((op) => (
              <option key={op} value={op}>
                {op}
              </option>
            ))}
          </select>
          {c.comparison_operator !== 'empty' && c.comparison_operator !== 'not empty' && (
            <input aria-label={`Condition ${i + 1} value`} placeholder="value" value={c.value} onChange={(e) => setRow(i, { value: e.target.value })} />
          )}
          <button type="button" onClick={() => onChange({ ...value, conditions: value.conditions.filter((_, j) => j !== i) })} aria-label={`Remove condition ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange({ ...value, conditions: [...value.conditions, { name: '', comparison_operator: '=', value: '' }] })}>
        Add a condition
      </button>
    </fieldset>
  );
}

/** The request's metadata_condition, or undefined without conditions. */
export function toMetadataCondition(v: MetadataFilterValue) {
  const conditions = v.conditions
    .filter((c) => c.name.trim())
    .map((c) => {
      const base = { name: c.name.trim(), comparison_operator: c.comparison_operator };
      if (c.comparison_operator === 'empty' || c.comparison_operator === 'not empty') return base;
      if (c.comparison_operator === 'in' || c.comparison_operator === 'not in') return { ...base, value: c.value.split(',').map((s) => s.trim()).filter(Boolean) };
      const n = Number(c.value);
      return { ...base, value: c.value.trim() !== '' && Number.isFinite(n) && ['>', '<', '≥', '≤'].includes(c.comparison_operator) ? n : c.value };
    });
  return conditions.length ? { logic: v.logic, conditions } : undefined;
}
