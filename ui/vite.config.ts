/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";

/** Dependencies (Mermaid's among them) may assign such properties… */
const ASSIGNING = /[\\/]node_modules[\\/]/;
/** …and Cytoscape (mind maps) sets them through Object.assign. */
const ASSIGNING_THROUGH_OBJECT_ASSIGN = /[\\/]node_modules[\\/]cytoscape[\\/]/;

/**
 * The window freezes Object.prototype (Tauri's `freezePrototype`), so assigning a property that
 * Object.prototype has to an object that inherits it (`proto.constructor = C`,
 * `proto.valueOf = f`) throws: the assignment would shadow a read-only property. Libraries
 * written before frozen prototypes do this (d3-color and Day.js, which Mermaid uses, at load).
 * This makes each such property its object's own first (as a class would define it), which the
 * assignment then sets. Only dependencies' files are changed, and only these assignments.
 */
function ownPrototypeMethods(): Plugin {
  const assigned = /\b([A-Za-z_$][\w$]*(?:\.prototype)?)\.(constructor|valueOf|toString|toLocaleString)\s*=(?![=>])/g;
  const own = 'Object.defineProperty($1, "$2", { value: undefined, writable: true, configurable: true }).$2 =';
  // `Object.assign(proto, { toString })` sets too (Cytoscape, for mind maps): the same, per key.
  // Every use of Object.assign (called, or bound as Cytoscape does), not an assignment to it.
  const assign = /\bObject\.assign\b(?!\s*=[^=])/g;
  const ownAssign =
    "((t, ...s) => { for (const o of s) for (const k of Object.keys(o ?? {})) if (k in Object.prototype && !Object.prototype.hasOwnProperty.call(t, k)) " +
    "Object.defineProperty(t, k, { value: undefined, writable: true, configurable: true }); return Object.assign(t, ...s); })";
  return {
    name: "patchbay-own-prototype-methods",
    transform(code, id) {
      let changed = code;
      if (ASSIGNING.test(id)) changed = changed.replace(assigned, own);
      if (ASSIGNING_THROUGH_OBJECT_ASSIGN.test(id)) changed = changed.replace(assign, ownAssign);
      return changed === code ? null : changed;
    },
  };
}

/**
 * KaTeX's stylesheet offers each font as woff2, woff and ttf; the window (WebKitGTK, WebView2,
 * WKWebView) reads woff2, so the other two (900 kB) are left out of the bundle and the package.
 */
function katexWoff2Only(): Plugin {
  const fallbacks = /,url\(fonts\/[\w-]+\.woff\) format\("woff"\),url\(fonts\/[\w-]+\.ttf\) format\("truetype"\)/g;
  return {
    name: "patchbay-katex-woff2-only",
    enforce: "pre",
    transform(code, id) {
      // (Vitest blanks CSS it does not need: nothing to change then.)
      if (!/[\\/]katex[\\/]dist[\\/]katex(\.min)?\.css$/.test(id) || !code.includes("@font-face")) return null;
      const changed = code.replace(fallbacks, "");
      if (/\.(woff|ttf)\)/.test(changed)) this.error("KaTeX's @font-face rules changed: katexWoff2Only left a woff or ttf font in them");
      return changed;
    },
  };
}

// The app is always served from the embedded bundle (no dev server in the shipped
// window), so the build is what every test and the packaged app load.
export default defineConfig({
  plugins: [react(), ownPrototypeMethods(), katexWoff2Only()],
  clearScreen: false,
  resolve: {
    // Day.js's ES module build (readable, so `ownPrototypeMethods` can change it).
    alias: [
      { find: /^dayjs$/, replacement: "dayjs/esm/index.js" },
      { find: /^dayjs\/plugin\/([A-Za-z]+)(\.js)?$/, replacement: "dayjs/esm/plugin/$1/index.js" },
    ],
  },
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
    // One jsdom per worker, each test file still in a context of its own: 43 s instead of 85 s
    // for the whole suite on 2 cores (jsdom was built once per file, a third of the time).
    pool: "vmThreads",
    // tokens.test.ts reads the tokens as text (`?raw`), which Vitest gives only to CSS it processes.
    css: { include: [/styles[\\/]tokens\.css/] },
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
