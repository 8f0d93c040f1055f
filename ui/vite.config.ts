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
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
