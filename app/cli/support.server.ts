import { existsSync } from "node:fs";
import path from "node:path";
import { config } from "../config.server";
import { database, type Database } from "../db.server";
import { exportCustomer, knownEmail, type CustomerExport } from "../compliance/compliance.server";
import { resealStoredSecrets, type ResealReport } from "../shops/key-rotation.server";

/** A refusal the CLI prints as one line (exit code 2). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * PGlite is single-process: opening the directory a running app holds would corrupt it. PGlite
 * writes postmaster.pid while a directory is open and removes it on close, so its presence means
 * "in use" (or an app that crashed: starting and stopping it once clears that).
 */
export function refuseIfDataDirInUse(): void {
  const target = config().database;
  if (target.kind !== "pglite" || target.dataDir.includes("://")) return;
  if (existsSync(path.join(target.dataDir, "postmaster.pid"))) {
    throw new CliError(
      `The PGlite data directory ${target.dataDir} is in use by a running app: stop it first (npm start holds it), or run this against PostgreSQL (DATABASE_URL).`,
    );
  }
}

let opened: Database | undefined;

/** The process database, opened only after the checks above. */
async function openDatabase(): Promise<Database> {
  refuseIfDataDirInUse();
  opened = database();
  await opened.migrate();
  return opened;
}

export async function closeDatabase(): Promise<void> {
  await opened?.close();
  opened = undefined;
}

/** `reencrypt-keys`: every stored secret re-sealed with the current ENCRYPTION_KEY. */
export async function reencryptKeys(): Promise<ResealReport> {
  await openDatabase();
  return resealStoredSecrets();
}

/** `export-customer`: everything stored about one customer of a shop (a data request), as JSON. */
export async function exportCustomerData(options: { shop: string; customer: string; email?: string; orders?: string[] }): Promise<CustomerExport> {
  if (!/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/.test(options.shop)) throw new CliError(`--shop must be a shop's myshopify.com domain, got ${options.shop}`);
  if (!/^\d{1,30}$/.test(options.customer)) throw new CliError(`--customer must be a Shopify customer id (digits), got ${options.customer}`);
  const db = await openDatabase();
  const email = options.email ?? (await knownEmail(db.sql, options.shop, options.customer));
  return exportCustomer(db.sql, options.shop, { id: options.customer, email, orderIds: options.orders ?? [] });
}
