import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The repository a newcomer can read in an hour (issue 35): a short README, links that lead
// somewhere, and facts dated by date or commit, never by ordinals of past work.
const ROOT = path.resolve(import.meta.dirname, "../..");
const README_MAX_LINES = 150;


const TEXT_FILE = /\.(md|ts|tsx|mts|cts|js|mjs|cjs|json|toml|liquid|prisma|sql|sh|ya?ml|css|html|txt)$/i;
const NOT_SOURCE = /(^|\/)(node_modules|build|\.data|\.cache|coverage|app\/generated)\//;

/** The repository's text files: tracked and new ones (git), or a walk of the tree without git. */
function textFiles(): string[] {
  let files: string[];
  try {
    const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 });
    files = out.split("\0").filter(Boolean);
  } catch {
    files = walk("");
  }
  return files.filter((f) => TEXT_FILE.test(f) && !NOT_SOURCE.test(f) && f !== "package-lock.json" && existsSync(path.join(ROOT, f)));
}

function walk(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = dir ? `${dir}/${name}` : name;
    if (name === ".git" || NOT_SOURCE.test(`${rel}/`)) return [];
    return statSync(path.join(ROOT, rel)).isDirectory() ? walk(rel) : [rel];
  });
}

const ORDINAL = [
  "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
  "eleventh", "twelfth", "[a-z]+teenth", "[a-z]+ieth", "(?:twenty|thirty|forty|fifty)-[a-z]+",
  "this", "last", "earlier", "previous", "next",
].join("|");
/** An ordinal (or this, last, next…) before "session(s)" or "round(s)", across a line break too. */
const PAST_WORK = new RegExp(`\\b(?:${ORDINAL})\\s+(?:sessions?|rounds?)\\b`, "gi");

function ordinalsIn(text: string): string[] {
  return [...text.matchAll(PAST_WORK)].map((m) => m[0].replace(/\s+/g, " "));
}

/** Relative link targets of a Markdown file, outside fenced code blocks. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target));
}

/** The relative links of one Markdown file (path from the root) that lead to no file. */
function brokenLinks(file: string, markdown: string): string[] {
  return relativeLinks(markdown)
    .filter((target) => {
      const resolved = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), decodeURI(target.split("#")[0])));
      return !existsSync(path.join(ROOT, resolved));
    })
    .map((target) => `${file} → ${target}`);
}

describe("the documentation", () => {
  it(`keeps README.md to at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(path.join(ROOT, "README.md"), "utf8").replace(/\n+$/, "").split("\n");
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("links only to files that exist (README.md, docs/, bench/README.md)", () => {
    const docs = readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
    const broken = ["README.md", "bench/README.md", ...docs].flatMap((file) => brokenLinks(file, readFileSync(path.join(ROOT, file), "utf8")));
    expect(broken).toEqual([]);
  });

  it("checks relative links only, outside code, and follows them from the file that links", () => {
    const markdown = [
      "[ops](operations.md#runbooks) [up](../SECURITY.md) [sibling](scaling.md) [web](https://shopify.dev) [top](#x)",
      "[gone](no-such-doc.md) [gone too](../docs/nowhere.md)",
      "```",
      "[in code](code-only.md)",
      "```",
    ].join("\n");
    expect(brokenLinks("docs/example.md", markdown)).toEqual(["docs/example.md → no-such-doc.md", "docs/example.md → ../docs/nowhere.md"]);
  });

  it("dates facts by date or commit: no ordinals of past sessions or rounds of work in any text file", () => {
    const files = textFiles();
    expect(files).toContain("README.md");
    const found = files.flatMap((file) => ordinalsIn(readFileSync(path.join(ROOT, file), "utf8")).map((hit) => `${file}: ${hit}`));
    expect(found).toEqual([]);
  });

  it("recognises an ordinal of past work, also across a line break, and leaves other sessions alone", () => {
    // Phrases are joined from words here, so that this file itself holds none that the scan flags.
    const say = (...words: string[]) => words.join(" ");
    const sample = [say("figures of the sixteenth", "session;"), say("as the thirteenth\nsession found;"), say("in this", "round;"), say("the previous", "sessions'")];
    expect(ordinalsIn(sample.join(" "))).toEqual([say("sixteenth", "session"), say("thirteenth", "session"), say("this", "round"), say("previous", "sessions")]);
    const innocent = [say("an online", "session,"), say("with", "session tokens,"), say("each", "round,"), say("both", "sessions,"), "round 3,", say("a month's", "round trip")];
    expect(ordinalsIn(innocent.join(" "))).toEqual([]);
  });
});
