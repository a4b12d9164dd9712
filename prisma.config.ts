import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "prisma/config";
import { lockDataDir } from "./app/db/data-dir-lock.server";

// Offline machines: no native schema-engine was downloaded -> use the wasm shim from ../shared/tools.
const engines = path.join(import.meta.dirname, "node_modules/@prisma/engines");
const shim = path.join(import.meta.dirname, "../shared/tools/prisma-offline/schema-engine-shim.mjs");
const hasNativeEngine = existsSync(engines) && readdirSync(engines).some((f) => f.startsWith("schema-engine-"));
if (!process.env.PRISMA_SCHEMA_ENGINE_BINARY && !hasNativeEngine && existsSync(shim)) {
  process.env.PRISMA_SCHEMA_ENGINE_BINARY = shim;
}
// No DATABASE_URL -> embedded Postgres (PGlite) in the same data dir the app uses (see app/config.server.ts).
if (!process.env.DATABASE_URL) {
  process.env.PGLITE_DATA_DIR ??= path.join(import.meta.dirname, ".data/pglite");
  if (!process.env.PGLITE_DATA_DIR.includes("://")) {
    mkdirSync(process.env.PGLITE_DATA_DIR, { recursive: true });
    // Commands that open the database take the app's lock for the CLI's lifetime: while the app
    // runs they fail at once naming it; a lock left by a killed CLI or app is taken over.
    const command = process.argv.slice(2).find((a) => !a.startsWith("-"));
    if (command && ["migrate", "db", "studio"].includes(command)) lockDataDir(process.env.PGLITE_DATA_DIR, "prisma-cli");
  }
}

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://pglite/local" },
});
