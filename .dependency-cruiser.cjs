/**
 * Import cycles in app/ and dev/, type-only imports included (ESLint's import-x/no-cycle sees
 * only imports that exist at run time), and the floors of app/. Run by `npm run lint`.
 */

/**
 * The floors of app/, bottom to top: a module imports its own floor or a lower one, never a higher
 * one, so data flows up from the database to the transports and the job table, and the engine
 * runs features it never names. A folder's file may sit on another floor than its folder (the most
 * specific entry wins). docs/architecture.md ("Layers") lists the same entries; the test
 * test/foundation/layers.test.ts holds the two together and checks every module has a floor.
 */
const FLOORS = [
  {
    name: "base",
    paths: ["config.server.ts", "db.server.ts", "db/", "logger.server.ts", "errors.ts", "observability/", "project-root.server.ts", "secrets.server.ts", "scrub.ts"],
  },
  { name: "platform", paths: ["shopify/", "services/", "sync/"] },
  { name: "shops", paths: ["shops/"] },
  { name: "engine", paths: ["pipeline/"] },
  {
    name: "features",
    paths: ["backfill/", "segments/", "storefront/", "compliance/", "consent-return/", "signups/", "campaigns/", "people/", "admin/", "home/"],
  },
  {
    name: "top",
    paths: ["jobs/", "webhooks/", "routes/", "server/", "bin/", "cli/", "shopify.server.ts", "root.tsx", "entry.server.tsx"],
  },
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A path pattern for floor entries (relative to app/): a folder and everything in it, or one file. */
const pattern = (entries) => `^app/(${entries.map((e) => escape(e) + (e.endsWith("/") ? "" : "$")).join("|")})`;
/** Entries of `others` inside one of the folders of `entries`: they belong elsewhere. */
const nestedIn = (entries, others) => others.filter((o) => entries.some((e) => e.endsWith("/") && o !== e && o.startsWith(e)));
const match = (entries, others) => {
  const nested = nestedIn(entries, others);
  return nested.length ? { path: pattern(entries), pathNot: pattern(nested) } : { path: pattern(entries) };
};

const floorRules = FLOORS.slice(0, -1).map((floor, i) => {
  const below = FLOORS.slice(0, i + 1).flatMap((f) => f.paths);
  const above = FLOORS.slice(i + 1).flatMap((f) => f.paths);
  return {
    name: `floor-${floor.name}`,
    severity: "error",
    comment: `A module of the ${floor.name} floor imports its own floor or lower (${FLOORS.slice(0, i + 1).map((f) => f.name).join(", ")}), never ${FLOORS.slice(i + 1).map((f) => f.name).join(", ")} (.dependency-cruiser.cjs FLOORS).`,
    from: match(floor.paths, FLOORS.filter((f) => f !== floor).flatMap((f) => f.paths)),
    to: match(above, below),
  };
});

module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: "no-circular",
      severity: "error",
      comment: "Two modules that import each other (directly or around a circle) cannot be read, tested or loaded one without the other.",
      from: { path: "^(app|dev)/" },
      to: { circular: true },
    },
    {
      name: "webhooks-on-top",
      severity: "error",
      comment: "The webhook path reads top to bottom: only the transports (routes/, server/) call into app/webhooks/; the pipeline defines what it records.",
      from: { path: "^app/", pathNot: "^app/(routes|server|webhooks)/" },
      to: { path: "^app/webhooks/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^app/generated/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".d.ts"] },
  },
};

// For the test that compares them with the docs; not enumerable, since depcruise refuses a
// configuration with keys it does not know.
Object.defineProperty(module.exports, "FLOORS", { value: FLOORS, enumerable: false });
