import { apiUrl, authHeaders, errorFrom, reportUnauthorized } from './http.js';

/** Downloads an authenticated file: a plain link cannot send the Bearer token. */
export async function downloadFile(path: string, fallbackName: string): Promise<void> {
  const res = await fetch(apiUrl(path), { headers: authHeaders() });
  if (!res.ok) {
    const err = errorFrom(res.status, await res.text());
    reportUnauthorized(err);
    throw err;
  }
  const blob = await res.blob();
  const disposition = res.headers.get('content-disposition') ?? '';
  const name = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1] ?? /filename="?([^";]+)"?/i.exec(disposition)?.[1];
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name ? decodeURIComponent(name) : fallbackName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
