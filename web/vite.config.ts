import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const webDir = fileURLToPath(new URL('.', import.meta.url));

/**
 * The console builds into dist/web, which the Cairn server serves at `/`. `vite dev` (port 5173)
 * proxies /api to a running Cairn: CAIRN_URL, default http://127.0.0.1:9380.
 */
export default defineConfig({
  root: webDir,
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
    // The CSS plugin's timing note is noise on a loaded machine.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  server: {
    proxy: { '/api': { target: process.env.CAIRN_URL ?? 'http://127.0.0.1:9380', changeOrigin: true } },
  },
});
