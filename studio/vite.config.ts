/**
 * Builds the studio (the web dashboard served at `/` by the API server) into `studio/dist`.
 * Run from the repository root: `vite build studio` (production) or `vite studio` (dev server on :5173,
 * proxying the API to a local `pressroom serve` on :8080).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const studioDir = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: studioDir,
  base: '/',
  // Preact through esbuild's automatic JSX runtime: no framework plugin (and no Babel) needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The page runs under `script-src 'self'`: no inline scripts, no eval, every chunk a file.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      output: {
        manualChunks: (id) =>
          id.includes('/node_modules/@codemirror/') || id.includes('/node_modules/@lezer/') ? 'codemirror' : undefined,
      },
    },
  },
  server: {
    port: 5173,
    proxy: { '/v1': 'http://127.0.0.1:8080' },
  },
});
