/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The app is always served from the embedded bundle (no dev server in the shipped
// window), so the build is what every test and the packaged app load.
export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  build: {
    target: "safari15",
    outDir: "dist",
    emptyOutDir: true,
    // One bundle read from local disk by the webview (no network): markdown,
    // GFM and highlight.js make it ~670 kB, which loads in milliseconds.
    chunkSizeWarningLimit: 900,
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
