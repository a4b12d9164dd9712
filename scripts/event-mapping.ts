/**
 * Writes the tables of docs/event-mapping.md from app/sync/event-mapping.ts (the prose above them
 * is kept). Run after changing what a mapper sends: `npm run docs:event-mapping`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { GENERATED_START, renderEventMapping } from "../app/sync/event-mapping";

const file = path.resolve(import.meta.dirname, "../docs/event-mapping.md");
const text = readFileSync(file, "utf8");
const at = text.indexOf(GENERATED_START);
const prose = at === -1 ? `${text.trimEnd()}\n\n` : text.slice(0, at);
writeFileSync(file, `${prose}${renderEventMapping()}\n`);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
