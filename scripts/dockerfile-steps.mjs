#!/usr/bin/env node
// Runs the Dockerfile's steps without Docker (CI machines here have none): each stage gets its own
// directory standing in for its filesystem root, COPY honours .dockerignore, RUN runs in the stage's
// WORKDIR with its ENV. Then it starts the final stage's CMD and checks /readyz and a SIGTERM.
// Written here because no kept package runs Dockerfile steps without a container runtime; it
// understands the instructions this Dockerfile uses (FROM … AS, WORKDIR, ENV, COPY [--from], RUN,
// USER, EXPOSE, CMD) and refuses any other.
import { execSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

const context = path.resolve(import.meta.dirname, "..");
const keep = process.argv.includes("--keep");
const lines = readFileSync(path.join(context, "Dockerfile"), "utf8")
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const ignored = readFileSync(path.join(context, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()).filter(Boolean);
const isIgnored = (rel) => ignored.some((p) => rel === p || rel.startsWith(`${p}/`) || (p.startsWith("*.") && rel.endsWith(p.slice(1))));

const root = mkdtempSync(path.join(tmpdir(), "dockerfile-steps-"));
// `rm -rf`: fs.rmSync took minutes over the stages' copies of node_modules.
const cleanUp = () => (keep ? console.log(`stages kept in ${root}`) : execSync(`rm -rf '${root}'`));

// The image's own user (USER) usually does not exist on this machine: RUN steps get a `chown` that
// gives its files to the user running these steps instead, so the step is still exercised.
const users = lines.filter((l) => /^USER\s/i.test(l)).map((l) => l.split(/\s+/)[1].split(":")[0]);
const missing = users.filter((u) => {
  try {
    execSync(`id -u ${u}`, { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
});
const shims = path.join(root, ".shims");
mkdirSync(shims);
if (missing.length) {
  const pattern = missing.flatMap((u) => [u, `${u}:${u}`]).join("|");
  writeFileSync(
    path.join(shims, "chown"),
    `#!/bin/sh\n# ${missing.join(", ")}: not a user here (dockerfile-steps.mjs)\nowner="$(id -u):$(id -g)"\nargs=""\nfor a in "$@"; do case "$a" in ${pattern}) a="$owner";; esac; args="$args '$a'"; done\neval exec /bin/chown $args\n`,
    { mode: 0o755 },
  );
}
const stages = new Map();
let stage;
const inStage = (s, p) => path.join(s.root, path.isAbsolute(p) ? p : path.join(s.workdir, p));
const step = (text) => console.log(`\n== ${stage?.name ?? ""} ${text}`);
let child;

async function main() {
  for (const line of lines) {
    const [instruction, ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    switch (instruction.toUpperCase()) {
      case "FROM": {
        const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.size}`;
        stage = { name, root: path.join(root, name), workdir: "/", env: {}, cmd: undefined };
        mkdirSync(stage.root, { recursive: true });
        stages.set(name, stage);
        step(`FROM ${args} (the base image's Node is this machine's: ${process.version})`);
        break;
      }
      case "WORKDIR":
        stage.workdir = path.posix.resolve(stage.workdir, args);
        mkdirSync(inStage(stage, "."), { recursive: true });
        break;
      case "ENV": {
        const [, key, value] = /^(\S+?)[= ](.*)$/.exec(args);
        stage.env[key] = value;
        break;
      }
      case "COPY": {
        const parts = rest.slice();
        const from = parts[0].startsWith("--from=") ? stages.get(parts.shift().slice(7)) : undefined;
        const dest = parts.pop();
        step(`COPY ${from ? `--from=${from.name} ` : ""}${parts.join(" ")} ${dest}`);
        for (const src of parts) {
          const source = from ? inStage(from, src) : path.join(context, src);
          const target = dest.endsWith("/") || parts.length > 1 || src === "." ? path.join(inStage(stage, dest), src === "." ? "" : path.basename(src)) : inStage(stage, dest);
          cpSync(source, target, {
            recursive: true,
            filter: (file) => from !== undefined || !isIgnored(path.relative(context, file).split(path.sep).join("/")),
          });
        }
        break;
      }
      case "RUN":
        step(`RUN ${args}`);
        execSync(args, {
          cwd: inStage(stage, "."),
          stdio: "inherit",
          env: { ...process.env, ...stage.env, PATH: `${shims}:${process.env.PATH}` },
          shell: "/bin/bash",
        });
        break;
      case "USER":
      case "EXPOSE":
        break; // a container's concerns: the user exists in the image, ports are published by the runtime
      case "CMD":
        stage.cmd = JSON.parse(args);
        break;
      default:
        throw new Error(`dockerfile-steps: ${instruction} is not understood; teach scripts/dockerfile-steps.mjs or use the instructions it knows`);
    }
  }

  // The image's default command, as a container would run it: a local trial on embedded PGlite.
  const final = stage;
  step(`CMD ${final.cmd.join(" ")}`);
  child = spawn(final.cmd[0], final.cmd.slice(1), {
    cwd: inStage(final, "."),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...final.env,
      PORT: "0",
      HOST: "127.0.0.1",
      ALLOW_DEV_SECRETS: "1",
      PGLITE_DATA_DIR: inStage(final, ".data/pglite"),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // "close": after the exit AND the last output line (the "stopped" line may come after "exit").
  const exited = new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  let stopped = false;
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the image's command did not start listening within 120 s")), 120_000);
    createInterface({ input: child.stdout }).on("line", (l) => {
      const msg = l.startsWith("{") ? JSON.parse(l) : undefined;
      if (msg?.msg === "stopped") stopped = true;
      if (msg?.msg === "Marketing Sync is listening") {
        clearTimeout(timer);
        resolve(msg.url);
      }
    });
    void exited.then(({ code }) => reject(new Error(`the image's command exited (code ${code}) before listening`)));
  });
  const ready = await fetch(`${url}/readyz`);
  console.log(`GET /readyz: ${ready.status} ${await ready.text()}`);
  child.kill("SIGTERM");
  const exit = await exited;
  // npm passes the signal on to the app and may itself end by it; what counts is that the app
  // (not only npm) received it and stopped gracefully, leaving no process behind.
  console.log(`SIGTERM: npm ${JSON.stringify(exit)}, the app ${stopped ? "stopped gracefully" : "did not log that it stopped"}`);
  return ready.status === 200 && stopped;
}

const passed = await main().catch((error) => {
  console.error(error);
  if (child && child.exitCode === null) child.kill("SIGKILL");
  return false;
});
cleanUp();
console.log(passed ? "dockerfile steps: ok" : "dockerfile steps: FAILED");
process.exit(passed ? 0 : 1);
