import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import { importX } from "eslint-plugin-import-x";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["build/", "node_modules/", "app/generated/", ".data/", "coverage/", ".stryker-tmp/", "reports/", "extensions/*/assets/*.min.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": ["error", { allow: ["warn", "error"] }],
    },
  },
  {
    // No import cycles in the app or the development tools: a cycle means two modules that cannot
    // be understood (or loaded) one without the other. Dynamic import() counts too; type-only
    // imports, which this rule skips, are held by dependency-cruiser (.dependency-cruiser.cjs, npm run lint).
    files: ["app/**/*.{ts,tsx}", "dev/**/*.ts"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": importX.flatConfigs.typescript.settings["import-x/extensions"],
      "import-x/parsers": importX.flatConfigs.typescript.settings["import-x/parsers"],
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
    },
    rules: { "import-x/no-cycle": ["error", { ignoreExternal: true }] },
  },
  {
    files: ["app/**/*.tsx"],
    plugins: { "react-hooks": reactHooks },
    // The two rules of hooks; react-hooks 7's recommended set adds the React Compiler's rules,
    // which this app (no compiler) does not take on.
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "warn" },
  },
  {
    // Layers by folder, one direction: production code (app/) never reaches into the development
    // tools (dev/: emulator, fake Admin, demo) or the tests; dev/ never reaches into test/.
    files: ["app/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "(^|/)(dev|test|bench)/", message: "app/ must not import from dev/, test/ or bench/" }] },
      ],
    },
  },
  {
    // One Admin API client (app/shopify/admin-api.server.ts): every call gets the shop's cost
    // budget, THROTTLED retries, the timeout and the same errors, in a request or in the background.
    files: ["app/**/*.{ts,tsx}"],
    ignores: ["app/shopify/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='graphql']",
          message: "Admin API calls go through app/shopify/admin-api.server.ts (adminQuery or adminData with the session's shop), not a client's .graphql().",
        },
        {
          selector: "MemberExpression[property.name='Graphql']",
          message: "Admin API calls go through app/shopify/admin-api.server.ts (adminQuery or adminData), not a GraphQL client of their own.",
        },
      ],
    },
  },
  {
    files: ["dev/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "(^|/)(test|bench)/", message: "dev/ must not import from test/ or bench/" }] },
      ],
    },
  },
  {
    // Command-line programs talk to a terminal.
    files: ["app/bin/**", "dev/**/main.ts", "bench/**", "scripts/**"],
    rules: { "no-console": "off" },
  },
);
