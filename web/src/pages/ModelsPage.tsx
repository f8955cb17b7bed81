import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import type { Model, ModelType, Provider } from '../api/types.js';
import { DataTable } from '../components/DataTable.js';
import { ListStatus } from '../components/ListStatus.js';
import { ErrorMessage, Notice, PageHeader, SelectField, SubmitButton, TextField } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';

interface Instance {
  id: string;
  provider_name: string;
  instance_name: string;
  base_url: string | null;
  api_key: string;
  models: { model_name: string; model_type: string[]; max_tokens: number | null }[];
}

type Defaults = { chat_model: string | null; embedding_model: string | null; rerank_model: string | null };

/** Base URL hints from the spec: what each local server kind expects. */
const BASE_URL_HINTS: Record<string, string> = {
  Ollama: 'The server root, e.g. http://host:11434 (Ollama must listen on all interfaces).',
  Xinference: 'e.g. http://host:9997/v1 (for a rerank model: http://host:9997/v1/rerank).',
  'OpenAI-API-Compatible': 'The API root that serves /chat/completions, e.g. http://host:8000/v1.',
};

export function ModelsPage() {
  const models = useLoad((signal) => api.get<Model[]>('/models', undefined, signal), []);
  const providers = useLoad((signal) => api.get<Provider[]>('/providers', undefined, signal), []);
  const instances = useLoad(
    async (signal) => (await Promise.all((providers.data ?? []).filter((p) => p.name !== 'Builtin').map((p) => api.get<Instance[]>(`/providers/${p.name}/instances`, undefined, signal)))).flat(),
    [providers.data],
  );
  const reloadAll = () => {
    models.reload();
    instances.reload();
  };

  return (
    <>
      <PageHeader title="Model providers" />
      <DefaultModels models={models.data} />
      <section aria-labelledby="models-title">
        <h2 id="models-title">Models you can select</h2>
        <ListStatus list={models} count={models.data?.length} empty="No models." />
        {models.data && models.data.length > 0 && (
          <DataTable
            caption="Models"
            rows={models.data}
            rowKey={(m) => m.model_id}
            columns={[
              { label: 'Model id', cell: (m) => <code>{m.model_id}</code> },
              { label: 'Provider', cell: (m) => `${m.provider_name}${m.provider_name === 'Builtin' ? ' (runs inside Cairn)' : ` / ${m.instance_name}`}` },
              { label: 'Types', cell: (m) => m.model_type.join(', ') },
            ]}
          />
        )}
      </section>
      <Instances instances={instances.data} error={instances.error} onChange={reloadAll} />
      {providers.data && <AddProvider providers={providers.data.filter((p) => p.name !== 'Builtin')} onAdded={reloadAll} />}
      <ErrorMessage error={providers.error} />
    </>
  );
}

function DefaultModels({ models }: { models: Model[] | undefined }) {
  const defaults = useLoad((signal) => api.get<Defaults>('/models/default', undefined, signal), []);
  const action = useAction();
  const [saved, setSaved] = useState<string>();
  const kinds: { type: ModelType; key: keyof Defaults; label: string }[] = [
    { type: 'chat', key: 'chat_model', label: 'Default chat model' },
    { type: 'embedding', key: 'embedding_model', label: 'Default embedding model' },
    { type: 'rerank', key: 'rerank_model', label: 'Default rerank model' },
  ];
  const change = async (type: ModelType, label: string, modelId: string) => {
    setSaved(undefined);
    const ok = await action.run(() => api.patch('/models/default', { model_type: type, model_id: modelId || null }));
    if (ok !== undefined) {
      setSaved(`${label} saved.`);
      defaults.reload();
    }
  };
  return (
    <section aria-labelledby="defaults-title">
      <h2 id="defaults-title">Default models</h2>
      <ErrorMessage error={action.error ?? defaults.error} />
      {defaults.data && models && (
        <div className="toolbar">
          {kinds.map((k) => {
            const current = defaults.data![k.key] ?? '';
            const options = models.filter((m) => m.model_type.includes(k.type)).map((m) => ({ value: m.model_id, label: m.model_id }));
            if (current && !options.some((o) => o.value === current)) options.unshift({ value: current, label: current });
            return (
              <SelectField
                key={k.type}
                label={k.label}
                options={[{ value: '', label: k.type === 'rerank' ? 'None' : 'Not set' }, ...options]}
                value={current}
                disabled={action.busy}
                onChange={(e) => change(k.type, k.label, e.target.value)}
              />
            );
          })}
        </div>
      )}
      {saved && <Notice>{saved}</Notice>}
    </section>
  );
}

function Instances({ instances, error, onChange }: { instances: Instance[] | undefined; error?: Error; onChange: () => void }) {
  const action = useConfirmedAction(onChange);
  return (
    <section aria-labelledby="instances-title">
      <h2 id="instances-title">Configured providers</h2>
      <ErrorMessage error={error ?? action.error} />
      {instances?.length === 0 && <p className="empty">None yet: add an Ollama, Xinference or OpenAI-compatible server below.</p>}
      <div className="cards">
        {instances?.map((i) => (
          <div className="card" key={i.id}>
            <h3>
              {i.provider_name} / {i.instance_name}
            </h3>
            <p className="small muted">{i.base_url ?? 'default address'}</p>
            <ul className="small">
              {i.models.map((m) => (
                <li key={m.model_name}>
                  {m.model_name} ({m.model_type.join(', ')})
                </li>
              ))}
            </ul>
            <button type="button" className="danger" onClick={() => action.confirmThenRun(`Remove ${i.provider_name} / ${i.instance_name} and its models?`, () => api.delete(`/providers/${i.provider_name}/instances/${encodeURIComponent(i.instance_name)}`))} aria-label={`Remove ${i.provider_name} ${i.instance_name}`}>
              Remove
            </button>
          </div>
        ))}
      </div>
    </section>
  );
}

interface ModelRow {
  model_name: string;
  model_type: ModelType;
  max_tokens: string;
  check?: { ok: boolean; message: string };
}

function AddProvider({ providers, onAdded }: { providers: Provider[]; onAdded: () => void }) {
  const [providerName, setProviderName] = useState('Ollama');
  const [instanceName, setInstanceName] = useState('default');
  const [baseUrl, setBaseUrl] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [rows, setRows] = useState<ModelRow[]>([{ model_name: '', model_type: 'chat', max_tokens: '' }]);
  const [done, setDone] = useState<string>();
  const provider = providers.find((p) => p.name === providerName) ?? providers[0]!;
  const save = useAction();
  const check = useAction();

  const setRow = (i: number, patch: Partial<ModelRow>) => setRows((r) => r.map((x, j) => (j === i ? { ...x, ...patch, check: undefined } : x)));

  const checkAll = () =>
    check.run(async () => {
      const results = await Promise.all(
        rows.map((r) =>
          api
            .post(`/providers/${provider.name}/connection`, { base_url: baseUrl || undefined, api_key: apiKey || undefined, model_name: r.model_name, model_type: r.model_type })
            .then(
              () => ({ ok: true, message: 'Connected: the server answers and has this model.' }),
              (err: Error) => ({ ok: false, message: err.message }),
            ),
        ),
      );
      setRows((current) => current.map((r, i) => ({ ...r, check: results[i] })));
    });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(undefined);
    const model_info = rows.filter((r) => r.model_name.trim()).map((r) => ({ model_name: r.model_name.trim(), model_type: r.model_type, ...(r.max_tokens ? { max_tokens: Number(r.max_tokens) } : {}) }));
    const ok = await save.run(() =>
      api.post(`/providers/${provider.name}/instances`, { instance_name: instanceName, base_url: baseUrl || undefined, api_key: apiKey || undefined, model_info }),
    );
    if (ok !== undefined) {
      setDone(`${provider.name} / ${instanceName} added with ${model_info.length} model${model_info.length === 1 ? '' : 's'}.`);
      setRows([{ model_name: '', model_type: 'chat', max_tokens: '' }]);
      onAdded();
    }
  };

  const canCheck = rows.every((r) => r.model_name.trim()) && (!provider.base_url_required || baseUrl);
  return (
    <section aria-labelledby="add-provider-title">
      <h2 id="add-provider-title">Add a model provider</h2>
      <form className="settings" onSubmit={submit}>
        <SelectField label="Provider" options={providers.map((p) => ({ value: p.name, label: p.name }))} value={provider.name} onChange={(e) => setProviderName(e.target.value)} />
        <TextField label="Instance name" required maxLength={128} value={instanceName} onChange={(e) => setInstanceName(e.target.value)} hint="Tells several servers of one provider apart." />
        <TextField
          label="Base URL"
          type="url"
          required={provider.base_url_required}
          placeholder={provider.default_base_url ?? ''}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
          hint={BASE_URL_HINTS[provider.name] ?? (provider.default_base_url ? `Default: ${provider.default_base_url}` : undefined)}
        />
        <TextField label="API key" type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} hint="Leave empty for servers without keys." />
        <fieldset>
          <legend>Models</legend>
          {rows.map((r, i) => (
            <div key={i} className="model-row">
              <div className="meta-row">
                <input aria-label={`Model ${i + 1} name`} placeholder="model name, e.g. llama3.2" required value={r.model_name} onChange={(e) => setRow(i, { model_name: e.target.value })} />
                <select aria-label={`Model ${i + 1} type`} value={r.model_type} onChange={(e) => setRow(i, { model_type: e.target.value as ModelType })}>
                  {provider.model_types.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
                <input aria-label={`Model ${i + 1} max tokens`} placeholder="max tokens" type="number" min={1} value={r.max_tokens} onChange={(e) => setRow(i, { max_tokens: e.target.value })} />
                {rows.length > 1 && (
                  <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))} aria-label={`Remove model ${i + 1}`}>
                    Remove
                  </button>
                )}
              </div>
              {r.check && (
                <p className={r.check.ok ? 'notice' : 'error'} role={r.check.ok ? 'status' : 'alert'}>
                  {r.model_name}: {r.check.message}
                </p>
              )}
            </div>
          ))}
          <button type="button" onClick={() => setRows([...rows, { model_name: '', model_type: 'chat', max_tokens: '' }])}>
            Add a model
          </button>
        </fieldset>
        <ErrorMessage error={save.error ?? check.error} />
        {done && <Notice>{done}</Notice>}
        <div className="form-actions">
          <button type="button" onClick={checkAll} disabled={!canCheck || check.busy}>
            {check.busy ? 'Checking…' : 'Check connection'}
          </button>
          <SubmitButton label="Add provider" busy={save.busy} busyLabel="Adding…" />
        </div>
      </form>
    </section>
  );
}
