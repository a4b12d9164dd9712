#!/usr/bin/env node
// The quarterly move to another Shopify API version, in one command:
//   npm run shopify:upgrade -- 2026-10 [--dev-mcp 1.16.0] [--webhook-schemas DIR] [--no-test]
// 1. Shopify's Admin GraphQL introspection of that version from the npm package @shopify/dev-mcp
//    (dist/data/admin_<version>.json.gz) into shopify-schema/, the old file removed, and a summary of
//    what changed between the two (types, fields, enum values; deprecations).
// 2. The webhook topic metadata (test/fixtures/shopify-topic-metadata.<version>.json: available_on of
//    each topic the app subscribes to) from a checkout of gadget-inc/shopify-webhook-schemas given as
//    --webhook-schemas (only the npm registry is reachable from here). Without one, or where it has no
//    metadatas/<version>/, the older file stays and the script says so.
// 3. The version strings: shopify.app.toml, the extensions' tomls, ApiVersion in the app, the fake
//    Admin's schema version, the fake's and the demo's X-Shopify-API-Version.
// 4. The tests that hold every document, scope and topic to the kept schema and metadata.
// Written here because no package does a repository's own version bump; it uses only Node, npm, tar.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";

const root = path.resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const devMcp = option("--dev-mcp") ?? "latest";
const webhookSchemas = option("--webhook-schemas");
const noTest = args.includes("--no-test");
const version = args.find((a) => !a.startsWith("--"));
if (!version || !/^\d{4}-(01|04|07|10)$/.test(version)) {
  console.error("usage: npm run shopify:upgrade -- <YYYY-MM> [--dev-mcp <version>] [--webhook-schemas <dir>] [--no-test]");
  process.exit(2);
}

const file = (rel) => path.join(root, rel);
const read = (rel) => readFileSync(file(rel), "utf8");
const readIfExists = (rel) => (existsSync(file(rel)) ? read(rel) : "");
const tomlVersion = /^api_version = "(\d{4}-\d{2})"/m.exec(read("shopify.app.toml"))?.[1];
if (!tomlVersion) throw new Error("shopify.app.toml: no [webhooks] api_version");
const from = tomlVersion;
console.log(`Shopify API ${from} → ${version}`);

// ---- the version strings, checked before anything changes (written in step 3) ----
const enumName = (v) => {
  const [year, month] = v.split("-");
  return `${{ "01": "January", "04": "April", "07": "July", 10: "October" }[month]}${year.slice(2)}`;
};
const apiTypes = read("node_modules/@shopify/shopify-api/dist/ts/lib/types.d.ts");
if (!apiTypes.includes(`${enumName(version)} = "${version}"`)) {
  throw new Error(`@shopify/shopify-api knows no ApiVersion.${enumName(version)}: update the package first`);
}
const edits = [
  ["shopify.app.toml", /^api_version = "\d{4}-\d{2}"/m, `api_version = "${version}"`],
  ...readdirSync(file("extensions")).filter((e) => /^api_version = /m.test(readIfExists(`extensions/${e}/shopify.extension.toml`))).map((e) => [`extensions/${e}/shopify.extension.toml`, /^api_version = "\d{4}-\d{2}"/m, `api_version = "${version}"`]),
  ["app/shopify/admin-api.server.ts", /ApiVersion\.[A-Z][a-z]+\d\d\b/, `ApiVersion.${enumName(version)}`],
  ["dev/shopify/admin-schema.ts", /ADMIN_API_VERSION = "\d{4}-\d{2}"/, `ADMIN_API_VERSION = "${version}"`],
  ["dev/shopify/webhooks.ts", /"x-shopify-api-version": d\.apiVersion \?\? "\d{4}-\d{2}"/, `"x-shopify-api-version": d.apiVersion ?? "${version}"`],
  ["dev/demo/main.ts", /X-Shopify-API-Version: \d{4}-\d{2}/, `X-Shopify-API-Version: ${version}`],
];
for (const [rel, pattern] of edits) {
  if (!pattern.test(read(rel))) throw new Error(`${rel}: ${pattern} not found; teach scripts/shopify-upgrade.mjs where the version is now`);
}

// ---- 1. the schema ----
const schemaDir = "shopify-schema";
const newSchema = `${schemaDir}/admin_${version}.json.gz`;
const oldSchema = `${schemaDir}/admin_${from}.json.gz`;
if (!existsSync(file(newSchema))) {
  const work = mkdtempSync(path.join(tmpdir(), "shopify-upgrade-"));
  try {
    const tgz = execFileSync("npm", ["pack", "--silent", `@shopify/dev-mcp@${devMcp}`], { cwd: work, encoding: "utf8" }).trim().split("\n").pop();
    const inside = `package/dist/data/admin_${version}.json.gz`;
    try {
      execFileSync("tar", ["-C", work, "-xzf", path.join(work, tgz), inside], { stdio: ["ignore", "ignore", "pipe"] });
    } catch {
      throw new Error(`@shopify/dev-mcp@${devMcp} (${tgz}) has no ${inside}: Shopify has not published that version there`);
    }
    writeFileSync(file(newSchema), readFileSync(path.join(work, inside)));
    const packed = /^shopify-dev-mcp-(.+)\.tgz$/.exec(tgz)?.[1] ?? devMcp;
    console.log(`${newSchema}: from @shopify/dev-mcp ${packed}`);
    const readme = read(`${schemaDir}/README.md`).replaceAll(from, version).replace(/`@shopify\/dev-mcp` [\d.]+/, `\`@shopify/dev-mcp\` ${packed}`);
    writeFileSync(file(`${schemaDir}/README.md`), readme);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
if (from !== version && existsSync(file(oldSchema))) {
  console.log(`\n== What changed in the Admin schema, ${from} → ${version}`);
  for (const line of schemaDiff(loadSchema(oldSchema), loadSchema(newSchema))) console.log(line);
  rmSync(file(oldSchema));
}

// ---- 2. the topic metadata ----
const fixtures = "test/fixtures";
const keptMetadata = readdirSync(file(fixtures)).find((f) => /^shopify-topic-metadata\.\d{4}-\d{2}\.json$/.test(f));
const metadataDir = webhookSchemas && path.join(path.resolve(webhookSchemas), "metadatas", version);
if (metadataDir && existsSync(metadataDir)) {
  const kept = JSON.parse(read(`${fixtures}/${keptMetadata}`));
  const availableOn = {};
  for (const topic of Object.keys(kept.availableOn)) {
    const candidates = [`${topic}.json`, `${topic.replace("/", ".")}.json`];
    const found = candidates.map((c) => path.join(metadataDir, c)).find((p) => existsSync(p));
    if (!found) throw new Error(`${metadataDir}: no metadata for ${topic} (the app subscribes to it): read Shopify's release notes`);
    availableOn[topic] = JSON.parse(readFileSync(found, "utf8")).available_on;
  }
  let commit = "no commit known";
  try {
    commit = `commit ${execFileSync("git", ["-C", webhookSchemas, "rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()}`;
  } catch {
    // not a git checkout: the source names no commit
  }
  const source = kept.source.replace(/metadatas\/\d{4}-\d{2}\//, `metadatas/${version}/`).replace(/commit [0-9a-f]+, read [\d-]+/, `${commit}, read ${new Date().toISOString().slice(0, 10)}`);
  const next = { source, apiVersion: version, availableOn };
  // One topic a line, as the kept file has it.
  const json = JSON.stringify(next, null, 2).replace(/\[\n\s+([^\]]*?)\n\s+\]/g, (_, items) => `[${items.split(/,\n\s+/).join(", ")}]`);
  writeFileSync(file(`${fixtures}/shopify-topic-metadata.${version}.json`), `${json}\n`);
  if (keptMetadata !== `shopify-topic-metadata.${version}.json`) rmSync(file(`${fixtures}/${keptMetadata}`));
  console.log(`\n${fixtures}/shopify-topic-metadata.${version}.json: from ${metadataDir}`);
  for (const topic of Object.keys(availableOn)) {
    const before = [...kept.availableOn[topic]].sort().join(",");
    const after = [...availableOn[topic]].sort().join(",");
    if (before !== after) console.log(`  ${topic}: available_on ${before} → ${after}`);
  }
} else {
  console.warn(
    `\n${fixtures}/${keptMetadata} stays: ${webhookSchemas ? `${metadataDir} does not exist` : "no --webhook-schemas <checkout of gadget-inc/shopify-webhook-schemas>"}.` +
      ` The topics test holds the toml to that older metadata until ${version}'s is kept.`,
  );
}

// ---- 3. the version strings ----
console.log("\n== Version strings");
for (const [rel, pattern, replacement] of edits) {
  const text = read(rel);
  writeFileSync(file(rel), text.replace(pattern, replacement));
  console.log(`  ${rel}: ${replacement}`);
}

// ---- 4. the tests that hold the app to the kept schema and metadata ----
const tests = ["test/foundation/admin-graphql.test.ts", "test/foundation/scopes.test.ts", "test/foundation/topics.test.ts", "test/foundation/fake-admin.test.ts"];
console.log(`\nStill by hand: the webhook samples (test/fixtures/shopify-webhooks/README.md), Shopify's release notes for the topics and fields the app uses, then npm test on both databases (docs/operations.md).`);
if (!noTest) {
  console.log(`\n== npx vitest run ${tests.join(" ")}`);
  execFileSync("npx", ["vitest", "run", ...tests], { cwd: root, stdio: "inherit" });
}

function loadSchema(rel) {
  return JSON.parse(gunzipSync(readFileSync(file(rel))).toString("utf8")).data.__schema;
}

/** Types, fields, input fields, arguments and enum values added, removed or newly deprecated. */
function schemaDiff(before, after) {
  const members = (schema) => {
    const out = new Map();
    for (const t of schema.types) {
      if (t.name.startsWith("__")) continue;
      out.set(t.name, { kind: "type", deprecated: false });
      for (const f of t.fields ?? []) {
        out.set(`${t.name}.${f.name}`, { kind: "field", deprecated: f.isDeprecated });
        for (const a of f.args ?? []) out.set(`${t.name}.${f.name}(${a.name})`, { kind: "argument", deprecated: a.isDeprecated ?? false });
      }
      for (const f of t.inputFields ?? []) out.set(`${t.name}.${f.name}`, { kind: "input field", deprecated: f.isDeprecated ?? false });
      for (const v of t.enumValues ?? []) out.set(`${t.name}.${v.name}`, { kind: "enum value", deprecated: v.isDeprecated });
    }
    return out;
  };
  const a = members(before);
  const b = members(after);
  const added = [...b.keys()].filter((k) => !a.has(k));
  const removed = [...a.keys()].filter((k) => !b.has(k));
  const deprecated = [...b.keys()].filter((k) => a.has(k) && b.get(k).deprecated && !a.get(k).deprecated);
  const count = (keys, m) => Object.entries(Object.groupBy(keys, (k) => m.get(k).kind)).map(([kind, ks]) => `${ks.length} ${kind}s`).join(", ") || "none";
  const lines = [`  added: ${count(added, b)}`, `  removed: ${count(removed, a)}`, `  newly deprecated: ${count(deprecated, b)}`];
  const removedTypes = new Set(removed.filter((k) => a.get(k).kind === "type"));
  for (const k of removed) if (!removedTypes.has(k.split(".")[0]) || !k.includes(".")) lines.push(`  - removed ${a.get(k).kind} ${k}`);
  for (const k of deprecated) lines.push(`  - deprecated ${b.get(k).kind} ${k}`);
  const topics = (m) => [...m.keys()].filter((k) => k.startsWith("WebhookSubscriptionTopic."));
  const newTopics = topics(b).filter((k) => !a.has(k));
  if (newTopics.length) lines.push(`  new webhook topics: ${newTopics.map((k) => k.split(".")[1]).join(", ")}`);
  return lines;
}
