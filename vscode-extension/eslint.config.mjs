// ESLint for the extension host (src/) and the shared webview (webview/src/): typescript-eslint's
// recommended rules. Run by scripts/test-vscode.sh (`npm run lint`).

import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/protocol.generated.ts", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["src/**/*.ts", "webview/src/**/*.ts"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
  },
);
