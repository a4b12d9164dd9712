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
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^app/generated/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".d.ts"] },
  },
};
