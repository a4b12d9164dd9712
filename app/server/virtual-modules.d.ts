// The Remix server build as a module of the same bundle (resolved by the Remix Vite plugin).
declare module "virtual:remix/server-build" {
  import type { ServerBuild } from "@remix-run/node";
  const build: ServerBuild;
  export = build;
}
