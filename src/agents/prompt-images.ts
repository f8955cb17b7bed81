/**
 * Images in an LLM or Agent prompt, as RAGFlow's LLM component gathers them (`agent/component/llm.py`
 * `_prepare_prompt_variables`): data URLs (`data:image/…`) found in the variable `visual_files_var` names,
 * in the values the prompt's references bring in (taken out of the text, so no base64 reaches it), and in
 * the turn's attached files (`sys.files`) when the prompt does not place them itself. They travel to the
 * model beside the last user message (`ChatMessage.images`); a file's text joins that message instead.
 */

const isDataImage = (v: unknown): v is string => typeof v === 'string' && v.trim().startsWith('data:image/');

/** Every image data URL inside a value: strings, lists, and objects (an object's `content` when it has one). */
export function dataImages(value: unknown): string[] {
  if (isDataImage(value)) return [value.trim()];
  if (Array.isArray(value)) return value.flatMap(dataImages);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return 'content' in o ? dataImages(o.content) : Object.values(o).flatMap(dataImages);
  }
  return [];
}

/** The value without its image data URLs (an image alone becomes null, so it renders as nothing). */
export function withoutDataImages(value: unknown): unknown {
  if (isDataImage(value)) return null;
  if (Array.isArray(value)) return value.map(withoutDataImages).filter((v) => v !== null);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, withoutDataImages(v)]));
  }
  return value;
}

/** A turn's attached files (`sys.files`: texts, images as data URLs) split into texts and images. */
export function splitFiles(files: unknown): { texts: string[]; images: string[] } {
  const list = Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string') : [];
  return { texts: list.filter((f) => !isDataImage(f)), images: list.filter(isDataImage).map((f) => f.trim()) };
}

/** True when the system prompt or a prompt places `{sys.files}` itself (then nothing is added). */
export function placesFiles(params: Record<string, unknown>): boolean {
  const texts = [params.sys_prompt, ...(Array.isArray(params.prompts) ? params.prompts.map((p) => (p as { content?: unknown })?.content) : [])];
  return texts.some((t) => typeof t === 'string' && /\{\s*sys\.files\s*\}/i.test(t));
}

/** Each image once, in first-seen order. */
export const uniqueImages = (images: string[]): string[] => [...new Set(images)];
