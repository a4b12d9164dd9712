/** Standalone emulator: `npm run emulator` (PORT or EMULATOR_PORT, default 4010). */
import { startEmulator } from "./server";

const port = Number(process.env.PORT ?? process.env.EMULATOR_PORT ?? 4010);
const host = process.env.EMULATOR_HOST ?? "127.0.0.1";

const emulator = await startEmulator({ port, host });
console.log(`marketing service emulator listening on ${emulator.url}`);
console.log(`API key (default account ${emulator.defaultAccountId}, double opt-in on): ${emulator.apiKey}`);
console.log(`control: GET ${emulator.url}/__emulator/requests | POST /__emulator/reset | POST /__emulator/faults | GET /__emulator/state`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal} received, stopping emulator`);
  emulator.close().then(() => process.exit(0));
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
