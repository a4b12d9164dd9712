import { vitePlugin as remix } from "@remix-run/dev";
import { defineConfig, type Plugin } from "vite";
import tsconfigPaths from "vite-tsconfig-paths";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

/**
 * The production entry points are built in the SAME Rollup build as the Remix server bundle, so
 * they share its chunks: `node build/server/serve.js` runs one copy of each module (no tsx, no
 * second copy beside the Remix bundle). build/server/runtime.js exports the process API (the
 * Remix build, database, worker, HTTP server) for the tools that host the built app: tests, the
 * demo, benchmarks.
 */
const SERVER_ENTRIES = {
  serve: "app/bin/serve.server.ts",
  worker: "app/bin/worker.server.ts",
  runtime: "app/server/runtime.server.ts",
};

function serverEntries(): Plugin {
  return {
    name: "marketing-sync:server-entries",
    // Runs after the Remix plugin's config hook, which sets the server build's single input.
    config(config, env) {
      if (!env.isSsrBuild) return;
      const rollup = config.build?.rollupOptions;
      const output = rollup?.output;
      if (!rollup || typeof rollup.input !== "string" || !output || Array.isArray(output)) {
        throw new Error("vite.config.ts: the Remix plugin's server build options changed; update serverEntries()");
      }
      rollup.input = { index: rollup.input, ...SERVER_ENTRIES };
      output.entryFileNames = "[name].js"; // index.js stays the Remix server build
    },
  };
}

export default defineConfig({
  server: {
    port: Number(process.env.PORT || 3000),
    fs: { allow: ["app", "node_modules"] },
  },
  plugins: [
    remix({
      ignoredRouteFiles: ["**/.*", "**/*.test.*"],
      future: {
        v3_fetcherPersist: true,
        v3_relativeSplatPath: true,
        v3_throwAbortReason: true,
        v3_lazyRouteDiscovery: true,
        v3_singleFetch: true,
        v3_routeConfig: false,
      },
    }),
    serverEntries(),
    tsconfigPaths(),
  ],
  build: { assetsInlineLimit: 0 },
  optimizeDeps: { include: ["@shopify/app-bridge-react", "@shopify/polaris"] },
});
