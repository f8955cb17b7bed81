import { Api, eventually } from './client.js';

export interface UploadFile {
  name: string;
  bytes: Uint8Array;
}

/** POSTs files as multipart, field `file` repeated, as RAGFlow clients do. */
export async function upload(api: Api, datasetId: string, files: UploadFile[]) {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([new Uint8Array(f.bytes)]), f.name);
  return api.request('POST', `/datasets/${datasetId}/documents`, { raw: form });
}

export async function getDoc(api: Api, datasetId: string, documentId: string) {
  const res = await api.get(`/datasets/${datasetId}/documents`, { id: documentId });
  return res.body.data.docs[0];
}

/** Waits until the document leaves RUNNING (and UNSTART), returning it. */
export async function waitForRun(api: Api, datasetId: string, documentId: string, states = ['DONE', 'FAIL', 'CANCEL'], timeoutMs = 120_000) {
  return eventually(async () => {
    const doc = await getDoc(api, datasetId, documentId);
    return states.includes(doc.run) ? doc : undefined;
  }, timeoutMs, 250);
}

/** A plain-text file long enough that parsing it takes several seconds (thousands of chunks to embed). */
export function longText(paragraphs = 3000): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < paragraphs; i++) {
    lines.push(`Paragraph ${i}: the granite cairn number ${i} marks a trail crossing near river bend ${i % 97}, where hikers record weather, wildlife and the state of the path in a shared logbook.`);
  }
  return Buffer.from(lines.join('\n'));
}
