import { afterEach, describe, expect, it } from "vitest";
import { BODY_BUDGET, bodyBudgetInUse, readBodyLimited } from "~/server/body.server";

const MiB = 1024 * 1024;
const saved = { ...BODY_BUDGET };
afterEach(() => Object.assign(BODY_BUDGET, saved));

/** A body of `chunks` chunks of `size` bytes; `gate` holds the end until released. */
function body(chunks: number, size: number, gate?: Promise<void>) {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent === chunks && gate) await gate;
        if (sent++ >= chunks) controller.close();
        else controller.enqueue(new Uint8Array(size));
      },
    },
    { highWaterMark: 0 },
  );
  return { headers: new Headers(), body: stream } as unknown as Request;
}
const silent = () => body(0, 0, new Promise<void>(() => undefined));
const idle = { bytes: 0, readers: 0, clients: 0 };

/**
 * The budget counts what bodies hold while they are read; every read, however it ends, must give
 * back what it held, or the server answers "busy" for good once enough reads leaked.
 */
describe("the body budget", () => {
  it("gives back a client's bytes after each read: one client reads many bodies, each near its share", async () => {
    for (let i = 0; i < 5; i++) {
      const read = await readBodyLimited(body(3, MiB), 4 * MiB, "203.0.113.7");
      expect(read.ok && read.body.byteLength, `read ${i}`).toBe(3 * MiB);
    }
    expect(bodyBudgetInUse()).toEqual(idle);
  });

  it("gives back a client's bytes after each read while another of its reads is still going", async () => {
    let release!: () => void;
    const open = readBodyLimited(body(1, 10, new Promise<void>((resolve) => (release = resolve))), 4096, "203.0.113.8");
    for (let i = 0; i < 3; i++) {
      const read = await readBodyLimited(body(3, MiB), 4 * MiB, "203.0.113.8");
      expect(read.ok && read.body.byteLength, `read ${i}`).toBe(3 * MiB);
    }
    release();
    expect((await open).ok).toBe(true);
    expect(bodyBudgetInUse()).toEqual(idle);
  });

  it("gives back what a refused read held, whatever refused it", async () => {
    expect(await readBodyLimited(body(8, MiB), 4 * MiB, "203.0.113.7")).toEqual({ ok: false, refusal: "too-large" });
    expect(bodyBudgetInUse()).toEqual(idle);
    BODY_BUDGET.perClientBytes = 2 * MiB;
    expect(await readBodyLimited(body(3, MiB), 4 * MiB, "203.0.113.7")).toEqual({ ok: false, refusal: "busy" });
    expect(bodyBudgetInUse()).toEqual(idle);
    BODY_BUDGET.maxBufferedBytes = 2 * MiB;
    expect(await readBodyLimited(body(3, MiB), 4 * MiB)).toEqual({ ok: false, refusal: "busy" });
    expect(bodyBudgetInUse()).toEqual(idle);
    BODY_BUDGET.firstByteTimeoutMs = 20;
    expect(await readBodyLimited(silent(), 4 * MiB, "203.0.113.7")).toEqual({ ok: false, refusal: "too-slow" });
    expect(bodyBudgetInUse()).toEqual(idle);
    BODY_BUDGET.bodyTimeoutMs = 40;
    expect(await readBodyLimited(body(1, 10, new Promise<void>(() => undefined)), 4 * MiB, "203.0.113.7")).toEqual({ ok: false, refusal: "too-slow" });
    expect(bodyBudgetInUse()).toEqual(idle);
    // After all of them the same client is served again.
    const read = await readBodyLimited(body(1, MiB), 4 * MiB, "203.0.113.7");
    expect(read.ok).toBe(true);
  });

  it("holds one client to its share of readers, and serves other clients meanwhile", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = Array.from({ length: BODY_BUDGET.perClientReaders }, () => readBodyLimited(body(1, 10, gate), 4096, "198.51.100.1"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(bodyBudgetInUse()).toMatchObject({ readers: BODY_BUDGET.perClientReaders, clients: 1 });
    expect(await readBodyLimited(body(1, 10), 4096, "198.51.100.1")).toEqual({ ok: false, refusal: "busy" });
    expect((await readBodyLimited(body(1, 10), 4096, "198.51.100.2")).ok).toBe(true);
    release();
    for (const read of await Promise.all(held)) expect(read.ok).toBe(true);
    expect(bodyBudgetInUse()).toEqual(idle);
    expect((await readBodyLimited(body(1, 10), 4096, "198.51.100.1")).ok).toBe(true);
  });
});
