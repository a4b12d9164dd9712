import { format } from "node:util";
import { logger } from "../logger.server";

/**
 * The server processes write nothing but the masking logger's lines: whatever a library prints
 * through `console` (Remix's default error boundary, React's warnings) is logged through pino
 * instead, where emails and tokens are masked (app/logger.server.ts), at the matching level.
 */
export function routeConsoleThroughLogger(): void {
  const log = () => logger().child({ component: "console" });
  /* eslint-disable no-console -- replacing console's methods is the point here */
  console.error = (...args: unknown[]) => log().error(format(...args));
  console.warn = (...args: unknown[]) => log().warn(format(...args));
  console.log = (...args: unknown[]) => log().info(format(...args));
  console.info = (...args: unknown[]) => log().info(format(...args));
  console.debug = (...args: unknown[]) => log().debug(format(...args));
  console.trace = (...args: unknown[]) => log().debug(format(...args));
  /* eslint-enable no-console */
}
