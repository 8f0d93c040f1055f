import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "node_modules"] },
  {
    files: ["**/*.{ts,tsx}"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // IPC goes through src/lib/ipc/ only (its client.ts calls `invoke`).
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "@tauri-apps/api/core", message: "Use the typed client in src/lib/ipc/." }] },
      ],
    },
  },
  {
    files: ["src/lib/ipc/client.ts"],
    rules: { "no-restricted-imports": "off" },
  },
);
