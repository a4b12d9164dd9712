// `npm run cli -- <command>`: support commands run beside (or instead of) the app. Parsing by
// commander; each command lives in app/cli.
import { writeFileSync } from "node:fs";
import { Command } from "commander";
import { CliError, closeDatabase, exportCustomerData, reencryptKeys } from "../cli/support.server";
import { ConfigError } from "../config.server";

const program = new Command("cli").description("Marketing Sync support commands").showHelpAfterError();

program
  .command("reencrypt-keys")
  .description("re-seal every stored service key and Shopify token with the current ENCRYPTION_KEY (after a rotation: keep the old one as ENCRYPTION_KEY_PREVIOUS while this runs)")
  .action(async () => {
    const report = await reencryptKeys();
    console.log(`re-sealed ${report.shopKeys} service key(s) and ${report.sessionTokens} session(s)`);
    if (report.unreadable.length) {
      console.error(`could not open ${report.unreadable.length} secret(s) with ENCRYPTION_KEY or ENCRYPTION_KEY_PREVIOUS: ${report.unreadable.join(", ")}`);
      process.exitCode = 1;
    }
  });

program
  .command("export-customer")
  .description("everything the app stores about one customer (a customers/data_request), as JSON")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .requiredOption("--customer <id>", "the Shopify customer id")
  .option("--email <address>", "the customer's email, if the app does not know it")
  .option("--orders <ids>", "comma-separated order ids named by the request", (v: string) => v.split(",").filter(Boolean))
  .option("--out <file>", "write to this file instead of standard output")
  .action(async (options: { shop: string; customer: string; email?: string; orders?: string[]; out?: string }) => {
    const data = await exportCustomerData(options);
    const json = `${JSON.stringify(data, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v), 2)}\n`;
    if (options.out) {
      writeFileSync(options.out, json, { mode: 0o600 });
      console.error(`${data.rowCount} row(s) written to ${options.out}`);
    } else process.stdout.write(json);
  });

async function main() {
  try {
    await program.parseAsync(process.argv);
  } finally {
    await closeDatabase().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  // One clear line for a refusal or a configuration mistake; a stack for anything unexpected.
  if (error instanceof CliError || error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
