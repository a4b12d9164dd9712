import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { getNamedType, isEnumType, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from "graphql";
import ts from "typescript";

/**
 * Every GraphQL document written in app/: each string or template literal whose text begins with
 * `#graphql`, `query `, `mutation ` or `subscription `, its `${…}` parts resolved from the
 * constants they name (in the same file or imported from another), so that a new document cannot
 * escape the schema and cost checks. A part that cannot be resolved is reported, not skipped.
 */
export interface FoundDocument {
  file: string;
  line: number;
  text?: string;
  /** Why the text could not be resolved. */
  unresolved?: string;
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const START = /^\s*(#graphql|(query|mutation|subscription)\b\s*(\w+\s*)?[({])/;

interface Module {
  file: string;
  source: ts.SourceFile;
  /** Every `const NAME = …` of the file, by name (several: ambiguous). */
  consts: Map<string, ts.Expression[]>;
  imports: Map<string, { from: string; name: string }>;
}

const modules = new Map<string, Module>();

function load(file: string): Module {
  const known = modules.get(file);
  if (known) return known;
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const consts = new Map<string, ts.Expression[]>();
  const imports = new Map<string, { from: string; name: string }>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      consts.set(node.name.text, [...(consts.get(node.name.text) ?? []), node.initializer]);
    }
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.importClause?.namedBindings && ts.isNamedImports(node.importClause.namedBindings)) {
      const from = resolveImport(file, node.moduleSpecifier.text);
      if (from) for (const el of node.importClause.namedBindings.elements) imports.set(el.name.text, { from, name: (el.propertyName ?? el.name).text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const mod = { file, source, consts, imports };
  modules.set(file, mod);
  return mod;
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = spec.startsWith("~/") ? path.join(ROOT, "app", spec.slice(2)) : spec.startsWith(".") ? path.resolve(path.dirname(from), spec) : undefined;
  if (!base) return undefined;
  return [".ts", ".tsx", "/index.ts"].map((ext) => base + ext).find((f) => existsSync(f));
}

function evaluate(mod: Module, node: ts.Expression, depth = 0): string {
  if (depth > 20) throw new Error("constants nested too deep");
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return node.text;
  if (ts.isAsExpression(node) || ts.isParenthesizedExpression(node) || ts.isSatisfiesExpression(node)) return evaluate(mod, node.expression, depth + 1);
  if (ts.isTemplateExpression(node)) {
    return node.head.text + node.templateSpans.map((s) => evaluate(mod, s.expression, depth + 1) + s.literal.text).join("");
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return evaluate(mod, node.left, depth + 1) + evaluate(mod, node.right, depth + 1);
  }
  if (ts.isIdentifier(node)) return identifier(mod, node.text, depth);
  throw new Error(`\`${node.getText(mod.source)}\` is not a constant (write documents from string constants)`);
}

function identifier(mod: Module, name: string, depth: number): string {
  const local = mod.consts.get(name);
  if (local?.length === 1) return evaluate(mod, local[0], depth + 1);
  if (local && local.length > 1) throw new Error(`\`${name}\` is declared more than once in ${path.relative(ROOT, mod.file)}`);
  const imported = mod.imports.get(name);
  if (imported) return identifier(load(imported.from), imported.name, depth + 1);
  throw new Error(`\`${name}\` is not a constant of ${path.relative(ROOT, mod.file)}`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [full] : [];
  });
}

export function appGraphqlDocuments(dir = path.join(ROOT, "app")): FoundDocument[] {
  const found: FoundDocument[] = [];
  for (const file of sourceFiles(dir)) {
    const mod = load(file);
    const visit = (node: ts.Node) => {
      const head = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : ts.isTemplateExpression(node) ? node.head.text : undefined;
      if (head !== undefined && START.test(head)) {
        const line = mod.source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        const where = { file: path.relative(ROOT, file), line };
        try {
          found.push({ ...where, text: evaluate(mod, node as ts.Expression) });
        } catch (error) {
          found.push({ ...where, unresolved: (error as Error).message });
        }
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(mod.source);
  }
  return found;
}

/** The deprecated fields and enum values a document uses (Shopify's `isDeprecated`), as `Type.field`. */
export function deprecatedUses(schema: GraphQLSchema, document: DocumentNode): string[] {
  const uses: string[] = [];
  const info = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(info, {
      Field() {
        const def = info.getFieldDef();
        const parent = info.getParentType();
        if (def?.deprecationReason) uses.push(`${parent?.name}.${def.name} (${def.deprecationReason})`);
      },
      Argument() {
        const arg = info.getArgument();
        if (arg?.deprecationReason) uses.push(`argument ${arg.name} (${arg.deprecationReason})`);
      },
      EnumValue(node) {
        const type = getNamedType(info.getInputType());
        if (type && isEnumType(type)) {
          const value = type.getValue(node.value);
          if (value?.deprecationReason) uses.push(`${type.name}.${value.name} (${value.deprecationReason})`);
        }
      },
    }),
  );
  return uses;
}
