// `npm run cli -- <command>`: support commands run beside (or instead of) the app. Parsing by
// commander; each command lives in app/cli.
import { writeFileSync } from "node:fs";
import { Command } from "commander";
import cliProgress from "cli-progress";
import Table from "cli-table3";
import {
  CliError,
  closeDatabase,
  exportCustomerData,
  listShops,
  reconcileShop,
  reencryptKeys,
  replayShop,
  resyncShop,
  runUntilIdle,
  runUntilImported,
  shopProblems,
  shopStatus,
} from "../cli/support.server";
import { ConfigError } from "../config.server";
import { logToStderr } from "../logger.server";
import { BACKFILL_STATUS } from "../pipeline/status";
import { ALL_ORDERS_SCOPE, ORDER_WINDOW_DAYS } from "../shopify/access";

// Tables and JSON go to stdout; the app's logs go to stderr, and only warnings unless asked.
process.env.LOG_LEVEL ??= "warn";
logToStderr();

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

const when = (d: Date | null | undefined) => (d ? new Date(d).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—");

program
  .command("shops")
  .description("every shop the app knows: delivery state, calls waiting, dead letters, last delivery")
  .action(async () => {
    const rows = await listShops();
    const table = new Table({ head: ["shop", "state", "waiting", "dead letters", "last delivery"] });
    for (const r of rows) table.push([r.domain, r.state, r.queued, r.dead, when(r.lastDeliveredAt)]);
    console.log(rows.length ? table.toString() : "no shops yet");
  });

program
  .command("status")
  .description("one shop's sync status: counters per kind, queue, lag, and its latest history import")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .action(async (options: { shop: string }) => {
    const status = await shopStatus(options.shop);
    console.log(`${options.shop}: ${status.shop?.state ?? "unknown"}; last delivery ${when(status.shop?.lastDeliveredAt)}`);
    const table = new Table({ head: ["kind", "received", "delivered", "skipped", "could not be used", "failed attempts", "dead", "waiting", "lag"] });
    for (const k of status.kinds) {
      table.push([k.kind, k.received, k.delivered, k.skipped, k.unusable, k.failed, k.dead, k.queued, k.lagMs ? `${Math.round(k.lagMs / 1000)} s` : "—"]);
    }
    console.log(status.kinds.length ? table.toString() : "nothing received yet");
    const b = status.backfill;
    console.log(b ? `history import ${b.id}: ${b.status}, ${b.objects} object(s), ${b.kindsDone}/${b.kinds} kinds${b.lastError ? `; last error: ${b.lastError}` : ""}` : "no history import yet");
    const r = status.reconcile;
    console.log(
      r
        ? `reconciliation: last sweep ${when(r.lastSweepAt)} (${r.lastEnqueued ?? 0} object(s) re-played), next ${when(r.dueAt)}${r.running ? ", under way" : ""}${r.lastError ? `; last error: ${r.lastError}` : ""}`
        : "no reconciliation yet (the first is due a day after the connection)",
    );
  });

program
  .command("reconcile")
  .description("ask Shopify now for the shop's customers, orders and products updated since the last sweep, and re-play those newer than what was synced (events go out silent)")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .option("--run", "also deliver what was re-played, in this process (when no app or worker is running)")
  .action(async (options: { shop: string; run?: boolean }) => {
    const r = await reconcileShop(options.shop);
    console.log(`${options.shop}: ${r.lastEnqueued ?? 0} object(s) changed in Shopify without reaching the app were queued; next sweep ${when(r.dueAt)}`);
    if (!options.run) return;
    await runUntilIdle();
    console.log("delivered");
  });

program
  .command("resync")
  .description("import the shop's history again (customers, products, orders) through the pipeline; events go out silent")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .option("--kinds <list>", "comma-separated: customers,products,orders", "customers,products,orders")
  .option(
    "--orders-since <days>",
    `orders of the last 60, 90 or 365 days, or all; Shopify shows an app only the last ${ORDER_WINDOW_DAYS} days of orders unless it was granted ${ALL_ORDERS_SCOPE}, so without it the import stops at ${ORDER_WINDOW_DAYS} days`,
    "365",
  )
  .option("--run", "work the import in this process until it has finished (when no app or worker is running)")
  .action(async (options: { shop: string; kinds: string; ordersSince: string; run?: boolean }) => {
    const kinds = options.kinds.split(",").map((k) => k.trim());
    if (!kinds.every((k) => ["customers", "products", "orders"].includes(k))) throw new CliError(`--kinds takes customers, products and orders, got ${options.kinds}`);
    if (!["60", "90", "365", "all"].includes(options.ordersSince)) throw new CliError(`--orders-since takes 60, 90, 365 or all, got ${options.ordersSince}`);
    const asked = options.ordersSince === "all" ? null : (Number(options.ordersSince) as 60 | 90 | 365);
    const { id, orderDays } = await resyncShop(options.shop, { kinds: kinds as ("customers" | "products" | "orders")[], orderDays: asked });
    console.log(`history import ${id} queued for ${options.shop}`);
    if (kinds.includes("orders")) {
      console.log(`orders: ${orderDays === null ? "all of them" : `those of the last ${orderDays} days`}`);
      // requestBackfill clamps to what the shop's scopes let the app see: say so rather than import less in silence.
      if (orderDays !== asked) {
        console.warn(
          `warning: asked for ${asked === null ? "all orders" : `${asked} days of orders`}, but ${options.shop} has not granted ${ALL_ORDERS_SCOPE}: Shopify shows the app only the last ${ORDER_WINDOW_DAYS} days of orders, so older ones are not imported`,
        );
      }
    }
    if (!options.run) {
      console.log("a running app or `npm run worker` carries it out; follow it with `npm run cli -- status --shop " + options.shop + "`");
      return;
    }
    // One bar per kind: done/total are lines of Shopify's export (its own count), rate and ETA measured here.
    const bar = new cliProgress.SingleBar(
      { format: "{kind} ({kindNo}/{kinds}) [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted} | {objects} objects | {status}", etaBuffer: 20 },
      cliProgress.Presets.shades_classic,
    );
    bar.start(1, 0, { kind: "…", kindNo: 1, kinds: 1, rate: "—", objects: 0, status: "queued" });
    let sample: { kind: string; done: number; at: number; rate: number | null } | undefined;
    const done = await runUntilImported(options.shop, (p) => {
      const kind = `${p.kind ?? "—"}`;
      const now = Date.now();
      if (!sample || sample.kind !== kind) sample = { kind, done: p.linesDone, at: now, rate: null };
      else if (now - sample.at >= 1_000) {
        const current = ((p.linesDone - sample.done) * 1000) / (now - sample.at);
        sample = { kind, done: p.linesDone, at: now, rate: sample.rate === null ? current : sample.rate * 0.6 + current * 0.4 };
      }
      const status = p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed ? p.status : p.phase === "import" ? "importing" : "Shopify is exporting";
      bar.setTotal(Math.max(p.expected ?? p.linesDone, 1));
      bar.update(p.linesDone, {
        kind,
        kindNo: Math.min(p.kindsDone + 1, p.kinds),
        kinds: p.kinds,
        rate: sample.rate === null ? "—" : Math.round(sample.rate),
        objects: p.objects,
        status,
      });
    });
    bar.stop();
    if (done?.status !== BACKFILL_STATUS.done) throw new CliError(`the history import ended ${done?.status ?? "unknown"}${done?.lastError ? `: ${done.lastError}` : ""}`);
    console.log(`imported ${done.objects} object(s)`);
  });

program
  .command("problems")
  .description("a shop's dead letters grouped by cause (as the Problems page shows them), with the ids replay --ids takes")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .option("--search <text>", "only those whose customer email, order name or object id contains this")
  .option("--json", "print JSON instead of tables")
  .action(async (options: { shop: string; search?: string; json?: boolean }) => {
    const { groups, causes, unprocessed } = await shopProblems(options.shop, options.search);
    if (options.json) {
      console.log(JSON.stringify({ groups, unprocessed }, null, 2));
      return;
    }
    if (unprocessed.count) {
      console.log(`\nCould not be used (${unprocessed.count}): nothing was sent, replay cannot help`);
      const table = new Table({ head: ["when", "what", "object", "reason"], colWidths: [null, null, null, 70], wordWrap: true });
      for (const u of unprocessed.items) table.push([when(new Date(u.at)), u.what, u.object ?? "—", u.reason]);
      console.log(table.toString());
    }
    if (!groups.length) {
      console.log(`${options.shop}: no dead letters${options.search ? ` matching "${options.search}"` : ""}`);
      return;
    }
    for (const g of groups) {
      console.log(`\n${g.reason} (${g.count})`);
      const table = new Table({ head: ["id", "object", "what", "customer", "attempts", "planned"] });
      for (const p of g.problems) table.push([p.id, p.orderName ? `order ${p.orderName}` : p.object, p.what, p.customer ?? "—", p.attempts, when(new Date(p.createdAt))]);
      console.log(table.toString());
      if (g.count > g.problems.length) console.log(`… and ${g.count - g.problems.length} more`);
    }
    if (causes > groups.length) console.log(`\n… and ${causes - groups.length} more causes (narrow with --search)`);
  });

program
  .command("replay")
  .description("put a shop's dead letters back in the queue (all, or --ids); ones newer data overtook are skipped")
  .requiredOption("--shop <domain>", "the shop's myshopify.com domain")
  .option("--ids <list>", "comma-separated call ids", (v: string) => v.split(",").filter(Boolean))
  .action(async (options: { shop: string; ids?: string[] }) => {
    const r = await replayShop(options.shop, options.ids);
    console.log(`${r.replayed} replayed, ${r.superseded} skipped (newer data already sent)`);
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
  // A PGlite directory held by a running app is named with its holder (app/db/data-dir-lock.server.ts).
  if (error instanceof CliError || error instanceof ConfigError || (error instanceof Error && error.name === "DataDirLockedError")) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
