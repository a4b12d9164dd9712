/**
 * Import cycles in app/ and dev/, type-only imports included (ESLint's import-x/no-cycle sees
 * only imports that exist at run time). Run by `npm run lint`.
 */
module.exports = {
  forbidden: [
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
