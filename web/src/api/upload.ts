import { apiUrl, authHeaders, errorFrom, reportUnauthorized, type ApiError } from './http.js';

export interface UploadResult {
  /** Documents created from this file. */
  docs: { id: string; name: string }[];
  /** Per-file errors the server reported for a batch that succeeded in part. */
  errors: { name: string; message: string }[];
}

/**
 * Uploads files as one multipart request (field `file`, repeated) with XMLHttpRequest, whose
 * upload events give the progress that fetch cannot.
 */
export function uploadFiles(datasetId: string, files: File[], onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', apiUrl(`/datasets/${datasetId}/documents`));
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      const text = xhr.responseText;
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (xhr.status === 200 && body?.code === 0) {
        onProgress(1);
        resolve({ docs: body.data, errors: body.errors ?? [] });
        return;
      }
      const err: ApiError = errorFrom(xhr.status, text);
      reportUnauthorized(err);
      reject(err);
    };
    xhr.onerror = () => reject(new Error('The upload failed: the server could not be reached'));
    xhr.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    const form = new FormData();
    for (const f of files) form.append('file', f, f.name);
    xhr.send(form);
  });
}
