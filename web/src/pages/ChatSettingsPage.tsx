import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import type { Chat } from '../api/types.js';
import { DatasetPicker } from '../components/DatasetPicker.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { CheckboxField, ErrorMessage, Loading, Notice, PageHeader, RangeField, SubmitButton, TextArea, TextField } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { Link } from '../router.js';

export function ChatSettingsPage({ chatId }: { chatId: string }) {
  const chat = useLoad((signal) => api.get<Chat>(`/chats/${chatId}`, undefined, signal), [chatId]);
  return (
    <>
      <PageHeader title={chat.data ? `Configure ${chat.data.name}` : 'Configure chat assistant'} back={{ to: `/chats/${chatId}`, label: 'Back to the chat' }} />
      <ErrorMessage error={chat.error} />
      {chat.data ? <ChatForm chat={chat.data} onSaved={chat.reload} /> : !chat.error && <Loading />}
    </>
  );
}

function ChatForm({ chat, onSaved }: { chat: Chat; onSaved: () => void }) {
  const [form, setForm] = useState(() => structuredClone(chat));
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();
  useEffect(() => {
    setForm(structuredClone(chat));
  }, [chat]);

  const set = (patch: Partial<Chat>) => {
    setSaved(false);
    setForm((f) => ({ ...f, ...patch }));
  };
  const setPrompt = (patch: Partial<Chat['prompt_config']>) => set({ prompt_config: { ...form.prompt_config, ...patch } });
  const setLlm = (patch: Partial<Chat['llm_setting']>) => set({ llm_setting: { ...form.llm_setting, ...patch } });
  const params = form.prompt_config.parameters ?? [];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await run(() =>
      api.patch(`/chats/${chat.id}`, {
        name: form.name,
        description: form.description,
        dataset_ids: form.dataset_ids,
        llm_id: form.llm_id || null,
        llm_setting: form.llm_setting,
        prompt_config: {
          system: form.prompt_config.system,
          prologue: form.prompt_config.prologue,
          empty_response: form.prompt_config.empty_response || null,
          quote: form.prompt_config.quote,
          parameters: params.filter((p) => p.key.trim()).map((p) => ({ key: p.key.trim(), optional: p.optional })),
        },
        similarity_threshold: form.similarity_threshold,
        vector_similarity_weight: form.vector_similarity_weight,
        top_n: form.top_n,
        top_k: form.top_k,
        rerank_id: form.rerank_id || null,
      }),
    );
    if (ok !== undefined) {
      setSaved(true);
      onSaved();
    }
  };

  return (
    <form className="settings" onSubmit={submit}>
      <TextField label="Name" required value={form.name} onChange={(e) => set({ name: e.target.value })} />
      <TextArea label="Description" rows={2} value={form.description ?? ''} onChange={(e) => set({ description: e.target.value })} />
      <DatasetPicker value={form.dataset_ids} onChange={(ids) => set({ dataset_ids: ids })} legend="Datasets to answer from" />

      <fieldset>
        <legend>Model</legend>
        <ModelSelect type="chat" label="Chat model" none="Workspace default" value={form.llm_id ?? ''} onChange={(id) => set({ llm_id: id })} />
        <RangeField label="Temperature" min={0} max={2} step={0.05} value={form.llm_setting.temperature ?? 0.1} onChange={(v) => setLlm({ temperature: v })} />
        <RangeField label="Top p" min={0} max={1} step={0.05} value={form.llm_setting.top_p ?? 0.3} onChange={(v) => setLlm({ top_p: v })} />
        <RangeField label="Presence penalty" min={-2} max={2} step={0.1} value={form.llm_setting.presence_penalty ?? 0.4} onChange={(v) => setLlm({ presence_penalty: v })} />
        <RangeField label="Frequency penalty" min={-2} max={2} step={0.1} value={form.llm_setting.frequency_penalty ?? 0.7} onChange={(v) => setLlm({ frequency_penalty: v })} />
        <TextField label="Max tokens" type="number" min={1} value={form.llm_setting.max_token ?? 512} onChange={(e) => setLlm({ max_token: Number(e.target.value) })} />
      </fieldset>

      <fieldset>
        <legend>Prompt</legend>
        <TextArea
          label="System prompt"
          rows={8}
          value={form.prompt_config.system}
          onChange={(e) => setPrompt({ system: e.target.value })}
          hint="{knowledge} stands for the retrieved chunks; every other {name} is a variable whose value comes with each question."
        />
        <fieldset>
          <legend>Variables</legend>
          {params.map((p, i) => (
            <div className="meta-row" key={i}>
              <input aria-label={`Variable ${i + 1} name`} value={p.key} onChange={(e) => setPrompt({ parameters: params.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)) })} />
              <CheckboxField label="Optional" checked={p.optional} onChange={(e) => setPrompt({ parameters: params.map((x, j) => (j === i ? { ...x, optional: e.target.checked } : x)) })} />
              <button type="button" onClick={() => setPrompt({ parameters: params.filter((_, j) => j !== i) })} aria-label={`Remove variable ${p.key || i + 1}`}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setPrompt({ parameters: [...params, { key: '', optional: false }] })}>
            Add a variable
          </button>
          <small className="muted"> Each variable must appear in the system prompt as {'{name}'}, and the other way round.</small>
        </fieldset>
        <TextArea label="Opening message" rows={2} value={form.prompt_config.prologue} onChange={(e) => setPrompt({ prologue: e.target.value })} />
        <TextArea
          label="Answer when nothing is retrieved"
          rows={2}
          value={form.prompt_config.empty_response ?? ''}
          hint="Leave empty to let the model answer on its own."
          onChange={(e) => setPrompt({ empty_response: e.target.value })}
        />
        <CheckboxField label="Cite sources" checked={form.prompt_config.quote} onChange={(e) => setPrompt({ quote: e.target.checked })} />
      </fieldset>

      <fieldset>
        <legend>Retrieval</legend>
        <RangeField label="Similarity threshold" min={0} max={1} step={0.01} value={form.similarity_threshold} onChange={(v) => set({ similarity_threshold: v })} />
        <RangeField label="Vector similarity weight" min={0} max={1} step={0.01} value={form.vector_similarity_weight} onChange={(v) => set({ vector_similarity_weight: v })} />
        <TextField label="Top n (chunks given to the model)" type="number" min={1} max={100} value={form.top_n} onChange={(e) => set({ top_n: Number(e.target.value) })} />
        <TextField label="Top k (candidates)" type="number" min={1} max={10000} value={form.top_k} onChange={(e) => set({ top_k: Number(e.target.value) })} />
        <ModelSelect type="rerank" label="Rerank model" none="None (vector similarity)" value={form.rerank_id ?? ''} onChange={(id) => set({ rerank_id: id })} />
      </fieldset>
      <ErrorMessage error={error} />
      {saved && (
        <Notice>
          Saved. <Link to={`/chats/${chat.id}`}>Open the chat</Link>
        </Notice>
      )}
      <div className="form-actions">
        <SubmitButton label="Save" busy={busy} />
      </div>
    </form>
  );
}
