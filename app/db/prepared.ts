import type { PreparedStatement, SqlValue } from "./migrate.server";

/**
 * PGlite plans every statement sent with parameters anew: for the webhook acknowledgement's
 * recording statement that was 0.8 of its 1.0 ms (1 KB body; 0.3 ms as EXECUTE of a statement
 * PREPAREd once). PGlite's API has no named protocol-level statements and EXECUTE takes no bind
 * parameters, so the values are written into the EXECUTE as literals: SQL-standard strings
 * (standard_conforming_strings on: only the quote is doubled, backslashes mean themselves).
 */
export function executeStatement(statement: PreparedStatement, params: readonly SqlValue[]): string {
  if (params.length !== statement.types.length) {
    throw new TypeError(`${statement.name} takes ${statement.types.length} parameters, got ${params.length}`);
  }
  return `EXECUTE ${statement.name}(${params.map(sqlLiteral).join(", ")})`;
}

export function prepareStatement(statement: PreparedStatement): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(statement.name)) throw new TypeError(`not a statement name: ${statement.name}`);
  return `PREPARE ${statement.name}(${statement.types.join(", ")}) AS ${statement.text}`;
}

/**
 * One value as an SQL literal; anything but a scalar or an array of texts or numbers is refused
 * rather than guessed at. An array is written as a quoted array literal ('{"a","b"}'), which
 * EXECUTE casts to the parameter's declared array type.
 */
export function sqlLiteral(value: SqlValue): string {
  if (value === null) return "NULL";
  if (Array.isArray(value)) return sqlLiteral(`{${value.map(arrayElement).join(",")}}`);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === "string") {
    // PostgreSQL text cannot hold U+0000; refuse it here rather than cut the literal short.
    if (value.includes("\u0000")) throw new TypeError("a text parameter holds U+0000");
    return `'${value.replaceAll("'", "''")}'`;
  }
  throw new TypeError(`not an SQL scalar: ${typeof value}`);
}

/** An element of an array literal: double-quoted, its quotes and backslashes escaped. */
function arrayElement(value: string | number): string {
  if (typeof value === "number") return sqlLiteral(value);
  if (typeof value !== "string") throw new TypeError(`not an array element: ${typeof value}`);
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}
