import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { orderVisible, type FakeAdmin } from "./fake-admin";
import { documentProblems } from "./fake-graphql";

/**
 * A generated store behind the fake Admin's Bulk Operations API: `bulkOperationRunQuery` answers
 * with an operation that is RUNNING on the first poll and COMPLETED on the next (or, with
 * `exportMs`, as Shopify does: COMPLETED once that long has passed since it started), whose JSONL file
 * is served over HTTP. As Shopify does since API 2026-01, the file is grouped (each parent followed
 * by its children, with `__parentId`) only when the query asks `groupObjects: true`; otherwise every
 * parent comes first and the children after. Shopify runs a limited number of bulk queries per
 * shop at a time (`concurrentExports`; refused with a userError beyond it), can cancel one
 * (`bulkOperationCancel`), lists them (`bulkOperations`), and sometimes fails one (`failNextExport`). The data is as messy as real stores: missing emails, other currencies, ids beyond
 * 2^53, unicode names, drafts, orders without a customer.
 *
 * It also answers single-object lookups (`LookupOrder`, `LookupCustomer`), the reconciliation
 * sweep's paginated `updated_at:>` queries and the pages of an object's children past the first
 * (`OrderLineItems`, `ProductVariants`). The fake Admin meters them (cost, bucket, THROTTLED) and
 * shapes the answers from Shopify's schema: the resolvers here give data only.
 */

export interface StoreSize {
  customers: number;
  products: number;
  orders: number;
}

export interface StoreOptions {
  seed?: number;
  /** How long an export takes, by the clock (default: RUNNING for exactly one poll). */
  exportMs?: number;
  /** Bulk queries a shop may have running at once: 5 since API 2026-01 (1 before). */
  concurrentExports?: number;
}

type Line = Record<string, unknown>;

export interface FakeStore {
  url: string;
  /** Top-level objects per kind, as exported. */
  objects: Record<"customers" | "products" | "orders", Line[]>;
  /** Range requests answered: the byte offsets asked for. */
  ranges: string[];
  /** Bulk operations started, by kind; `seq` orders them among `downloads`. */
  operations: {
    id: string;
    shop: string;
    kind: string;
    query: string;
    grouped: boolean;
    polls: number;
    url: string;
    startedAt: number;
    seq: number;
    canceled?: boolean;
    failed?: string;
  }[];
  /** Result files served, in order: which operation's file, and `seq` shared with `operations`. */
  downloads: { operationId: string; seq: number }[];
  /** Changes an exported object (e.g. to make it older or newer than a live webhook). */
  customer(index: number): Line;
  /**
   * Answers `n` more reads of export files, then holds the next one unanswered (a stalled download)
   * until `releaseDownloads()`; resolves once that read has arrived.
   */
  holdDownloadsAfter(n: number): Promise<void>;
  releaseDownloads(): void;
  /** The next export of `kind` is served as `edit` makes its lines (real files can be messier than the objects). */
  editNextExport(kind: "customers" | "products" | "orders", edit: (lines: string[]) => string[]): void;
  /** The next `times` exports of `kind` end FAILED with this error code (e.g. INTERNAL_SERVER_ERROR, Shopify's transient failure). */
  failNextExport(kind: "customers" | "products" | "orders", errorCode?: string, times?: number): void;
  /** The next `times` bulk queries are refused with this BulkOperationUserErrorCode and message (Shopify's words vary; its codes do not). */
  refuseNextExports(code: "INVALID" | "LIMIT_REACHED" | "OPERATION_IN_PROGRESS", message: string, times?: number): void;
  /**
   * Adds a subscription contract (Admin GraphQL `SubscriptionContract`: every non-null field the
   * app's queries select, `lines` as a plain list of `SubscriptionLine`s, paged by the fake).
   */
  addSubscriptionContract(contract: Line & { id: string; lines: Line[] }): void;
  /** An order's line items (a product's variants), in Shopify's order, as the bulk export has them. */
  childrenOf(kind: "products" | "orders", index: number): Line[];
  /** Gives an order `count` line items (or a product `count` variants), replacing its children. */
  setChildren(kind: "products" | "orders", index: number, count: number): void;
  /** Changes an object in Shopify without a webhook: new fields and a newer updatedAt. */
  touch(kind: "customers" | "products" | "orders", index: number, changes: Line, updatedAt?: string): Line;
  /** Sets the fake Admin's buckets from now on (e.g. empty and slow to refill: throttling). */
  throttle(bucket: Parameters<FakeAdmin["throttle"]>[0]): void;
  /** THROTTLED answers given, and queries answered, by operation (the fake Admin's counts). */
  throttled: Record<string, number>;
  answered: Record<string, number>;
  close(): Promise<void>;
}

const BIG = 7_000_000_000_000_000_000n;

/** A customer's email as Shopify 2026-04 has it (`defaultEmailAddress.emailAddress`). */
export function customerEmail(customer: Line): string | null {
  return ((customer.defaultEmailAddress as { emailAddress?: string } | null)?.emailAddress ?? null);
} // ids beyond 2^53, exact in the JSONL text

export async function startFakeStore(admin: FakeAdmin, size: StoreSize, { seed = 7, exportMs, concurrentExports = 5 }: StoreOptions = {}): Promise<FakeStore> {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T,>(items: T[]) => items[Math.floor(random() * items.length)];
  const at = (daysAgo: number) => new Date(Date.UTC(2026, 10, 1) - daysAgo * 86_400_000).toISOString();

  const customers: Line[] = Array.from({ length: size.customers }, (_, i) => {
    const id = `gid://shopify/Customer/${BIG + BigInt(i)}`;
    // Shopify 2026-04: the email and its marketing consent on `defaultEmailAddress` (null without
    // an email; its marketingState is never null), the phone on `defaultPhoneNumber`.
    const consent = pick(["SUBSCRIBED", "NOT_SUBSCRIBED", "UNSUBSCRIBED", "PENDING", "NOT_SUBSCRIBED"]);
    const email = i % 17 === 5 ? null : `backfill.${i}@example.com`;
    return {
      id,
      defaultEmailAddress: email
        ? { emailAddress: email, marketingState: consent, marketingOptInLevel: pick(["SINGLE_OPT_IN", "CONFIRMED_OPT_IN", null]), marketingUpdatedAt: at(60) }
        : null,
      firstName: pick(["Zoë", "José", "Ada", "Łukasz", "美咲", null]),
      lastName: pick(["Nguyễn", "O'Brien", "Smith", null]),
      defaultPhoneNumber: i % 3 === 0 ? { phoneNumber: "+15550100" } : null,
      state: "ENABLED",
      tags: i % 4 === 0 ? ["vip", "wholesale"] : [],
      createdAt: at(400 - (i % 300)),
      updatedAt: at(30 - (i % 30)),
      numberOfOrders: String(i % 5),
      amountSpent: { amount: `${(i * 7.5).toFixed(2)}`, currencyCode: pick(["USD", "EUR", "JPY"]) },
      defaultAddress: i % 2 ? { firstName: "A", lastName: "B", city: "Kraków", country: "Poland", countryCodeV2: "PL", zip: "30-001" } : null,
    };
  });

  const variant = (i: number, v: number): Line => ({
    id: `gid://shopify/ProductVariant/${BIG + BigInt(i * 1000 + v)}`,
    sku: v === 0 ? `SKU-${i}` : null,
    barcode: null,
    price: `${10 + v}.99`,
    title: `Size ${v}`,
    selectedOptions: [{ value: `Size ${v}` }],
    __parentId: `gid://shopify/Product/${BIG + BigInt(i)}`,
  });
  const products: Line[] = [];
  const variantsOf = new Map<string, Line[]>();
  for (let i = 0; i < size.products; i++) {
    const id = `gid://shopify/Product/${BIG + BigInt(i)}`;
    products.push({
      id,
      title: `Product ${i} — ${pick(["Tee", "Mug", "Café beans"])}`,
      handle: `product-${i}`,
      descriptionHtml: "<p>Good &amp; useful</p>",
      vendor: "Acme",
      productType: pick(["Apparel", "", null]),
      status: i % 10 === 3 ? "DRAFT" : "ACTIVE",
      tags: ["new"],
      publishedAt: i % 10 === 3 ? null : at(100),
      createdAt: at(200),
      updatedAt: at(10),
      featuredMedia: i % 2 ? { id: `gid://shopify/MediaImage/${i + 1}`, preview: { image: { url: `https://cdn.example/p${i}.jpg` } } } : null,
    });
    variantsOf.set(id, Array.from({ length: 1 + (i % 3) }, (_, v) => variant(i, v)));
  }

  const lineItem = (i: number, n: number, currency: string): Line => ({
    id: `gid://shopify/LineItem/${BIG + BigInt(i * 1000 + n)}`,
    name: "Tee - M",
    title: "Tee",
    sku: n === 0 ? "TEE-M" : `TEE-M-${n}`,
    vendor: "Acme",
    quantity: 1 + (i % 2),
    originalUnitPriceSet: { shopMoney: { amount: currency === "JPY" ? "1500" : "21.25", currencyCode: currency } },
    product: { id: `gid://shopify/Product/${BIG + BigInt(n)}` },
    variant: { id: `gid://shopify/ProductVariant/${BIG + BigInt(n)}` },
    __parentId: `gid://shopify/Order/${BIG + BigInt(i)}`,
  });
  const orders: Line[] = [];
  const linesOf = new Map<string, Line[]>();
  for (let i = 0; i < size.orders; i++) {
    const id = `gid://shopify/Order/${BIG + BigInt(i)}`;
    const buyer = size.customers ? customers[i % size.customers] : null;
    const currency = pick(["USD", "EUR", "JPY"]);
    const total = currency === "JPY" ? "1500" : "42.50";
    orders.push({
      id,
      name: `#${1000 + i}`,
      email: i % 11 === 4 ? null : (buyer ? customerEmail(buyer) : null),
      createdAt: at(300 - (i % 300)),
      updatedAt: at(5),
      processedAt: at(300 - (i % 300)),
      cancelledAt: i % 13 === 0 ? at(2) : null,
      closedAt: null,
      currencyCode: currency,
      displayFinancialStatus: pick(["PAID", "PARTIALLY_REFUNDED", "PENDING", "REFUNDED"]),
      displayFulfillmentStatus: pick(["FULFILLED", "UNFULFILLED", "PARTIALLY_FULFILLED"]),
      totalPriceSet: { shopMoney: { amount: total, currencyCode: currency } },
      subtotalPriceSet: { shopMoney: { amount: total, currencyCode: currency } },
      totalTaxSet: { shopMoney: { amount: "0.00", currencyCode: currency } },
      totalDiscountsSet: { shopMoney: { amount: "0.00", currencyCode: currency } },
      totalShippingPriceSet: { shopMoney: { amount: "0.00", currencyCode: currency } },
      statusPageUrl: `https://checkout.example/orders/${1000 + i}/status`,
      test: false,
      tags: [],
      customer: i % 11 === 4 || !buyer ? null : { id: buyer.id, defaultEmailAddress: buyer.defaultEmailAddress },
      billingAddress: null,
      shippingAddress: null,
    });
    linesOf.set(id, [lineItem(i, 0, currency)]);
  }

  const objects = { customers, products, orders };
  const children: Record<string, Map<string, Line[]>> = { products: variantsOf, orders: linesOf };
  const files = new Map<string, Buffer>();
  const lineCounts = new Map<string, number>();
  /** Range requests answered (the import resumes a chunk from its byte offset). */
  const ranges: string[] = [];
  const operations: FakeStore["operations"] = [];
  const downloads: FakeStore["downloads"] = [];
  let seq = 0;

  let hold: { left: number; reached: () => void } | undefined;
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const file = files.get(req.url ?? "");
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    if (hold && hold.left-- <= 0) {
      hold.reached();
      hold = undefined;
      held.push(res);
      return;
    }
    const served = operations.find((o) => o.url === base + req.url);
    if (served) downloads.push({ operationId: served.id, seq: ++seq });
    // Byte ranges as Google Cloud Storage serves Shopify's result files: `bytes=<from>-`.
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range && Number(range[1]) < file.length) {
      ranges.push(range[1]);
      const from = Number(range[1]);
      res.writeHead(206, { "content-type": "application/jsonl", "content-range": `bytes ${from}-${file.length - 1}/${file.length}` });
      res.end(file.subarray(from));
      return;
    }
    res.writeHead(200, { "content-type": "application/jsonl" });
    res.end(file);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const kindOfQuery = (query: string) => (query.includes("customers") ? "customers" : query.includes("products") ? "products" : "orders");
  // Ids are written into the JSONL text as Shopify writes them; JSON.stringify is exact for strings.
  const edits: Partial<Record<keyof typeof objects, (lines: string[]) => string[]>> = {};
  const failures: Partial<Record<keyof typeof objects, { code: string; times: number }>> = {};
  // Without read_all_orders a shop sees the orders of the last 60 days only, in every query.
  const visible = (kind: keyof typeof objects, shop: string) =>
    kind === "orders" ? objects.orders.filter((o) => orderVisible(admin.shops.get(shop), o.createdAt as string)) : objects[kind];
  const jsonl = (kind: keyof typeof objects, grouped: boolean, shop: string) => {
    const shown = visible(kind, shop);
    const parents = shown.map((o) => JSON.stringify(o));
    const kids = (o: Line) => (children[kind]?.get(o.id as string) ?? []).map((c) => JSON.stringify(c));
    // Ungrouped (the default since API 2026-01): children no longer follow their parent.
    const lines = grouped ? shown.flatMap((o) => [JSON.stringify(o), ...kids(o)]) : [...parents, ...shown.flatMap(kids)];
    const edit = edits[kind];
    delete edits[kind];
    return (edit ? edit(lines) : lines).join("\n") + "\n";
  };

  // Cost, throttling and the answer's shape are the fake Admin's (as Shopify's): resolvers give data.
  const byVariables = (resolve: (variables: Record<string, unknown>, query: string, shop: string) => unknown) => (query: string, variables: Record<string, unknown>, shop: string) =>
    resolve(variables, query, shop);

  let refusals: { code: string; message: string; times: number } | undefined;
  type Operation = FakeStore["operations"][number];
  const isRunning = (op: Operation) => !op.canceled && (exportMs === undefined ? op.polls < 2 : Date.now() - op.startedAt < exportMs);
  const statusOf = (op: Operation) => (op.canceled ? "CANCELED" : isRunning(op) ? "RUNNING" : op.failed ? "FAILED" : "COMPLETED");

  admin.onGraphql("bulkOperationRunQuery", byVariables((variables, query, shop) => {
    if (refusals && refusals.times-- > 0) return { bulkOperationRunQuery: { bulkOperation: null, userErrors: [{ field: null, message: refusals.message, code: refusals.code }] } };
    // Shopify validates the bulk query against the schema before accepting it.
    const problems = documentProblems(String(variables.query ?? ""));
    if (problems.length) return { bulkOperationRunQuery: { bulkOperation: null, userErrors: [{ field: ["query"], message: `Invalid bulk query: ${problems.join("; ")}`, code: "INVALID" }] } };
    const running = operations.filter((o) => o.shop === shop && isRunning(o));
    if (running.length >= concurrentExports) {
      // BulkOperationUserErrorCode (2026-04): OPERATION_IN_PROGRESS where one at a time is allowed, LIMIT_REACHED beyond several.
      const refusal =
        concurrentExports === 1
          ? { message: `A bulk query operation for this app and shop is already in progress: ${running[0]!.id}.`, code: "OPERATION_IN_PROGRESS" }
          : { message: `A maximum of ${concurrentExports} bulk query operations can run at a time for this app and shop.`, code: "LIMIT_REACHED" };
      return { bulkOperationRunQuery: { bulkOperation: null, userErrors: [{ field: null, ...refusal }] } };
    }
    const text = String(variables.query ?? "");
    const kind = kindOfQuery(text);
    const grouped = /groupObjects\s*:\s*true/.test(query) || variables.groupObjects === true;
    const id = `gid://shopify/BulkOperation/${operations.length + 1}`;
    const path = `/bulk/${operations.length + 1}.jsonl`;
    const file = jsonl(kind, grouped, shop);
    files.set(path, Buffer.from(file, "utf8"));
    // Shopify counts every object of the export, nested ones included (one per JSONL line).
    lineCounts.set(id, file.split("\n").filter(Boolean).length);
    const failure = failures[kind];
    const failed = failure?.code;
    if (failure && --failure.times <= 0) delete failures[kind];
    operations.push({ id, shop, kind, query: text, grouped, polls: 0, url: base + path, startedAt: Date.now(), seq: ++seq, failed });
    return { bulkOperationRunQuery: { bulkOperation: { id, status: "CREATED" }, userErrors: [] } };
  }));
  admin.onGraphql("ReadBulk", byVariables((variables, _query, shop) => {
    const op = operations.find((o) => o.id === variables.id && o.shop === shop);
    if (!op) return { node: null };
    op.polls++;
    const count = lineCounts.get(op.id) ?? 0;
    const status = statusOf(op);
    if (status !== "COMPLETED") return { node: { id: op.id, status, errorCode: status === "FAILED" ? op.failed : null, objectCount: "0", url: null } };
    return { node: { id: op.id, status, errorCode: null, objectCount: String(count), url: count ? op.url : null } };
  }));
  admin.onGraphql("bulkOperationCancel", byVariables((variables, _query, shop) => {
    const op = operations.find((o) => o.id === variables.id && o.shop === shop);
    if (!op) return { bulkOperationCancel: { bulkOperation: null, userErrors: [{ field: ["id"], message: "Bulk operation does not exist" }] } };
    if (!isRunning(op)) {
      return { bulkOperationCancel: { bulkOperation: { id: op.id, status: statusOf(op) }, userErrors: [{ field: null, message: `A bulk operation cannot be canceled when it is ${statusOf(op).toLowerCase()}` }] } };
    }
    op.canceled = true;
    return { bulkOperationCancel: { bulkOperation: { id: op.id, status: "CANCELING" }, userErrors: [] } };
  }));
  // The shop's bulk queries, newest first (`status:running` is the only filter honoured).
  admin.onGraphql("bulkOperations(", byVariables((variables, _query, shop) => {
    const onlyRunning = /status:running/.test(String(variables.query ?? ""));
    const nodes = operations
      .filter((o) => o.shop === shop && (!onlyRunning || isRunning(o)))
      .reverse()
      .slice(0, Number(variables.first ?? 10))
      .map((o) => ({ id: o.id, status: statusOf(o), query: o.query }));
    return { bulkOperations: { nodes } };
  }));

  // Objects as the GraphQL API nests them (connections with nodes), children without __parentId:
  // as Shopify does, at most `first` children (the field's argument) and pageInfo to page on.
  type Page = { first?: number | null; after?: string | null };
  const childConnection = (kind: keyof typeof objects, id: string, { first, after }: Page) => {
    if (first == null) throw new Error("you must provide one of first or last");
    const kids = (children[kind]?.get(id) ?? []).map(({ __parentId: _, ...rest }) => rest);
    const offset = after ? Number(after) : 0;
    const nodes = kids.slice(offset, offset + first);
    const end = offset + nodes.length;
    return { nodes, pageInfo: { hasNextPage: end < kids.length, endCursor: nodes.length ? String(end) : null } };
  };
  const nested = (kind: keyof typeof objects, o: Line): Line => {
    if (kind === "orders") return { ...o, lineItems: (args: Page) => childConnection(kind, o.id as string, args) };
    if (kind === "products") return { ...o, variants: (args: Page) => childConnection(kind, o.id as string, args) };
    return o;
  };
  admin.onGraphql("LookupOrder", byVariables((v, _query, shop) => {
    const o = visible("orders", shop).find((x) => x.id === v.id);
    return { order: o ? nested("orders", o) : null };
  }));
  // Customer segments' member count by email-marketing state (the consent choice's numbers).
  // Customers without an email have no email subscription status and are in no such segment.
  admin.onGraphql("ConsentCounts", () => ({
    customerSegmentMembers: ({ query }: { query?: string }) => {
      const state = /email_subscription_status\s*=\s*'(\w+)'/.exec(query ?? "")?.[1];
      const total = customers.filter((c) => (c.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === state).length;
      return { totalCount: total, edges: [], pageInfo: { hasNextPage: total > 0, hasPreviousPage: false } };
    },
  }));
  admin.onGraphql("LookupCustomer", byVariables((v) => ({ customer: customers.find((x) => x.id === v.id) ?? null })));
  // The rest of an order's line items (a product's variants) past the first page.
  admin.onGraphql("OrderLineItems", byVariables((v, _query, shop) => {
    const o = visible("orders", shop).find((x) => x.id === v.id);
    return { order: o ? nested("orders", o) : null };
  }));
  admin.onGraphql("ProductVariants", byVariables((v) => {
    const p = products.find((x) => x.id === v.id);
    return { product: p ? nested("products", p) : null };
  }));
  // QueryRoot.subscriptionContract(id:): its lines a connection (one of first/last required).
  const contracts = new Map<string, Line & { lines: Line[] }>();
  admin.onGraphql("subscriptionContract(", () => ({
    subscriptionContract: ({ id }: { id: string }) => {
      const c = contracts.get(id);
      if (!c) return null;
      return {
        ...c,
        lines: ({ first, after }: Page) => {
          if (first == null) throw new Error("you must provide one of first or last");
          const offset = after ? Number(after) : 0;
          const nodes = c.lines.slice(offset, offset + first);
          const end = offset + nodes.length;
          return { nodes, pageInfo: { hasNextPage: end < c.lines.length, hasPreviousPage: offset > 0, endCursor: nodes.length ? String(end) : null } };
        },
      };
    },
  }));
  // Reconciliation: `updated_at:>'<iso>'`, oldest change first, the cursor is an offset.
  for (const [name, kind, field] of [
    ["ReconcileCustomers", "customers", "customers"],
    ["ReconcileOrders", "orders", "orders"],
    ["ReconcileProducts", "products", "products"],
  ] as const) {
    admin.onGraphql(name, (_query, _variables, shop) => ({
      [field]: ({ first, after, query }: Page & { query?: string | null }) => {
        if (first == null) throw new Error("you must provide one of first or last");
        const since = /updated_at:>'([^']+)'/.exec(String(query ?? ""))?.[1];
        const matching = visible(kind, shop)
          .filter((o) => !since || (o.updatedAt as string) > since)
          .sort((a, b) => (a.updatedAt as string).localeCompare(b.updatedAt as string));
        const offset = after ? Number(after) : 0;
        const page = matching.slice(offset, offset + first);
        const end = offset + page.length;
        return { nodes: page.map((o) => nested(kind, o)), pageInfo: { hasNextPage: end < matching.length, endCursor: page.length ? String(end) : null } };
      },
    }));
  }

  return {
    url: base,
    objects,
    operations,
    ranges,
    downloads,
    holdDownloadsAfter: (n) => new Promise<void>((reached) => (hold = { left: n, reached })),
    releaseDownloads: () => {
      hold = undefined;
      for (const res of held.splice(0)) res.destroy();
    },
    customer: (index) => customers[index],
    editNextExport: (kind, edit) => {
      edits[kind] = edit;
    },
    refuseNextExports: (code, message, times = 1) => {
      refusals = { code, message, times };
    },
    failNextExport: (kind, errorCode = "INTERNAL_SERVER_ERROR", times = 1) => {
      failures[kind] = { code: errorCode, times };
    },
    addSubscriptionContract: (contract) => {
      contracts.set(contract.id, contract);
    },
    childrenOf: (kind, index) => children[kind].get(objects[kind][index]!.id as string) ?? [],
    setChildren: (kind, index, count) => {
      const parent = objects[kind][index]!;
      const currency = (parent.currencyCode as string | undefined) ?? "USD";
      children[kind].set(parent.id as string, Array.from({ length: count }, (_, n) => (kind === "orders" ? lineItem(index, n, currency) : variant(index, n))));
    },
    touch: (kind, index, changes, updatedAt = new Date().toISOString()) => Object.assign(objects[kind][index], changes, { updatedAt }),
    throttle: (b) => admin.throttle(b),
    throttled: admin.throttled,
    answered: admin.answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
