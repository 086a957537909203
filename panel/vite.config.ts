import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built into dist/panel/static (tsc compiles src/panel/ into dist/panel/ beside it); served at /panel/.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/panel/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/panel/static', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or data: modules: the CSP allows 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1000,
  },
});
