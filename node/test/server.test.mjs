// `bench.mjs serve` (docs/protocol.md, "The HTTP server"): argument parsing,
// then the server as a process on each runtime present, loopback only. A
// handful of requests with a small delay; timing is checked from below (a
// style's floor, a blocked event loop), never from above, since the machine
// is shared.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { UsageError } from "../protocol.mjs";
import { parseServeArgs, STYLE_NAMES } from "../server.mjs";

const DELAY_MS = 50;
const FLOORS = { sync: 3, "sync-over-async": 3, parallel: 2, async: 3, "when-all": 2 };
const NUMS = [0, 7, 2 ** 31 - 1];
const TIMEOUT_MS = 30_000;

// Go's serve test's table (go/serve_test.go), plus ours.
const badArgs = [
  [],
  ["--port", "0"],
  ["--delay-ms", "10"],
  ["--port", "0", "--delay-ms", "0"],
  ["--port", "0", "--delay-ms", "-5"],
  ["--port", "0", "--delay-ms", "abc"],
  ["--port", "-1", "--delay-ms", "10"],
  ["--port", "65536", "--delay-ms", "10"],
  ["--port", "0x10", "--delay-ms", "10"],
  ["--port", "0", "--delay-ms", "10", "--threads", "0"],
  ["--port", "0", "--delay-ms", "10", "--threads", "-2"],
  ["--port", "0", "--delay-ms", "10", "--threads"],
  ["--port", "0", "--delay-ms", "99999999999999999999999"],
  ["--port", "0", "--delay-ms", "10", "--n", "5"],
  ["--port", "0", "--delay-ms", "10", "extra"],
  ["--port", "0", "--delay-ms", "1073741824"],
  ["--port", "0", "--delay-ms", "10", "--threads", "257"],
  ["--port", "0", "--delay-ms", "1.5"],
  ["--port", "", "--delay-ms", "10"],
  ["--port", "0", "--delay-ms", "10", "--bogus\nsecond line"],
];

describe("parseServeArgs", () => {
  it("requires --port and --delay-ms; --threads is optional", () => {
    assert.deepEqual(parseServeArgs(["--port", "0", "--delay-ms", "50"]), { port: 0, delayMs: 50 });
    assert.deepEqual(parseServeArgs(["--delay-ms=1", "--threads", "3", "--port=65535"]), {
      port: 65535,
      delayMs: 1,
      threads: 3,
    });
    assert.deepEqual(parseServeArgs(["--port", "0", "--delay-ms", "1073741823", "--threads", "256"]), {
      port: 0,
      delayMs: 2 ** 30 - 1,
      threads: 256,
    });
  });

  it("recognises --help and -h", () => {
    assert.deepEqual(parseServeArgs(["--help"]), { help: true });
    assert.deepEqual(parseServeArgs(["--port", "0", "-h"]), { help: true });
  });

  it("rejects bad arguments with a one-line message", () => {
    for (const argv of badArgs) {
      const oneLine = (err) => err instanceof UsageError && !/[\n\r]/.test(err.message);
      assert.throws(() => parseServeArgs(argv), oneLine, argv.join(" "));
    }
  });
});

const here = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const runtimes = {
  nodejs: [process.execPath],
  bun: [`${here}/node_modules/@oven/bun-linux-x64/bin/bun`],
  // As impls.toml runs it: listening needs net, the pool's workers read their modules.
  deno: [
    `${here}/node_modules/@deno/linux-x64-glibc/deno`,
    ...["run", "--no-prompt", "--allow-net=127.0.0.1", `--allow-read=${here}`],
  ],
};
const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1" };

// A `bench.mjs serve` child process; resolves once its ready line is read.
function startServer(command, ...args) {
  const [binary, ...pre] = command;
  const argv = [...pre, `${here}/bench.mjs`, "serve", ...args];
  const child = spawn(binary, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const server = { child, stdout: "", stderr: "", exited };
  child.stdout.setEncoding("utf8").on("data", (data) => (server.stdout += data));
  child.stderr.setEncoding("utf8").on("data", (data) => (server.stderr += data));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no ready line within ${TIMEOUT_MS} ms (stderr ${JSON.stringify(server.stderr)})`));
    }, TIMEOUT_MS);
    const check = () => {
      const newline = server.stdout.indexOf("\n");
      if (newline < 0) return;
      clearTimeout(timer);
      child.stdout.off("data", check);
      try {
        server.ready = JSON.parse(server.stdout.slice(0, newline));
        server.rest = () => server.stdout.slice(newline + 1);
        resolve(server);
      } catch (err) {
        child.kill("SIGKILL");
        reject(err);
      }
    };
    child.stdout.on("data", check);
    server.exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before its ready line (stderr ${JSON.stringify(server.stderr)})`));
    });
  });
}

// Sends sig; resolves to { code, signal } once the process has exited.
async function stopServer(server, sig) {
  server.child.kill(sig);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      server.child.kill("SIGKILL");
      reject(new Error(`still running ${TIMEOUT_MS} ms after ${sig}`));
    }, TIMEOUT_MS);
  });
  try {
    return await Promise.race([server.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// GET with timing: { status, body, contentType, ms, reused }.
function get(agent, port, path) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.get({ host: "127.0.0.1", port, path, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (data) => (body += data));
      res.on("end", () => {
        const ms = performance.now() - start;
        resolve({ status: res.statusCode, body, contentType: res.headers["content-type"], ms, reused: req.reusedSocket });
      });
      res.on("error", reject);
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`GET ${path}: no answer within ${TIMEOUT_MS} ms`)));
    req.on("error", reject);
  });
}

// /proc/net/tcp (Linux): the socket listening on port is bound to 127.0.0.1 and nothing else.
function listeningAddresses(port) {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const found = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 3 && fields[3] === "0A" && fields[1].endsWith(suffix)) found.push(fields[1]); // 0A: LISTEN
    }
  }
  return found;
}

const portAccepts = (port) =>
  new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(2000, () => socket.destroy());
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("close", () => resolve(false));
  });

for (const [id, command] of Object.entries(runtimes)) {
  describe(`serve on ${id}`, { skip: !existsSync(command[0]) && `${command[0]} missing: run npm ci` }, () => {
    it("answers every style, each no faster than its floor, over keep-alive; exits 0 on SIGTERM", async () => {
      const server = await startServer(command, "--port", "0", "--delay-ms", String(DELAY_MS));
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const { listening, styles, threads, runtime } = server.ready;
        assert.ok(Number.isInteger(listening) && listening > 0, JSON.stringify(server.ready));
        assert.deepEqual(styles, STYLE_NAMES);
        assert.equal(threads, null);
        assert.match(runtime, /^(Node\.js|Bun|Deno) \d+\.\d+\.\d+/);
        const loopback = `0100007F:${listening.toString(16).toUpperCase().padStart(4, "0")}`;
        assert.deepEqual(listeningAddresses(listening), [loopback]);

        const health = await get(agent, listening, "/health");
        assert.deepEqual([health.status, health.body], [200, "ok"]);

        let reused = false;
        for (const style of STYLE_NAMES) {
          for (const num of NUMS) {
            const got = await get(agent, listening, `/${style}/${num}`);
            reused ||= got.reused;
            const want = String(2 * num + Math.floor(num / 2));
            assert.deepEqual([got.status, got.body, got.contentType], [200, want, "text/plain"], `/${style}/${num}`);
            const floor = FLOORS[style] * DELAY_MS;
            const took = `/${style}/${num} answered in ${got.ms.toFixed(1)} ms`;
            assert.ok(got.ms >= floor, `${took}, below its floor ${floor} ms`);
          }
        }
        assert.ok(reused, "no request reused a keep-alive connection");

        const statuses = {
          "/nope/5": 404, "/sync": 404, "/": 404, "/health/1": 404, "/SYNC/5": 404, "//5": 404,
          "/sync/abc": 400, "/async/-1": 400, "/when-all/+5": 400, "/parallel/2147483648": 400,
          "/sync-over-async/": 400, "/sync/1.5": 400, "/sync/99999999999999999999": 400,
          "/sync/1e3": 400, "/async/5/6": 400,
        };
        for (const [path, status] of Object.entries(statuses)) {
          const got = await get(agent, listening, path);
          assert.equal(got.status, status, `${path}: ${got.status} ${JSON.stringify(got.body)}`);
          assert.equal(got.contentType, "text/plain", path);
        }
      } finally {
        agent.destroy();
      }
      const { code } = await stopServer(server, "SIGTERM");
      assert.equal(code, 0, `exit after SIGTERM (stderr ${JSON.stringify(server.stderr)})`);
      assert.equal(server.rest(), "", "stdout after the ready line");
      assert.equal(server.stderr, "");
      assert.equal(await portAccepts(server.ready.listening), false, "the port still accepts connections after exit");
    });

    it("sync, sync-over-async and parallel block the event loop: two at once take twice as long", async () => {
      const server = await startServer(command, "--port", "0", "--delay-ms", String(DELAY_MS), "--threads", "4");
      try {
        assert.equal(server.ready.threads, 4);
        for (const style of ["sync", "sync-over-async", "parallel"]) {
          // Two connections, two requests sent at once: the second waits for the first.
          const agent = new http.Agent({ keepAlive: false });
          const start = performance.now();
          const port = server.ready.listening;
          const answers = await Promise.all([get(agent, port, `/${style}/3`), get(agent, port, `/${style}/4`)]);
          const both = performance.now() - start;
          agent.destroy();
          assert.deepEqual(answers.map((a) => a.body), ["7", "10"]);
          const floor = 2 * FLOORS[style] * DELAY_MS;
          const took = `two ${style} requests at once took ${both.toFixed(1)} ms`;
          assert.ok(both >= floor, `${took}, below ${floor} ms: they overlapped`);
        }
      } finally {
        const { code } = await stopServer(server, "SIGINT");
        assert.equal(code, 0, `exit after SIGINT (stderr ${JSON.stringify(server.stderr)})`);
      }
    });

    it("with --threads 1, parallel's two calls share the one worker", async () => {
      const server = await startServer(command, "--port", "0", "--delay-ms", String(DELAY_MS), "--threads", "1");
      const agent = new http.Agent({ keepAlive: true });
      try {
        assert.equal(server.ready.threads, 1);
        const got = await get(agent, server.ready.listening, "/parallel/10");
        assert.deepEqual([got.status, got.body], [200, "25"]);
        assert.ok(got.ms >= 3 * DELAY_MS, `parallel on one worker answered in ${got.ms.toFixed(1)} ms`);
        const soa = await get(agent, server.ready.listening, "/sync-over-async/10");
        assert.deepEqual([soa.status, soa.body], [200, "25"]);
      } finally {
        agent.destroy();
        const { code } = await stopServer(server, "SIGTERM");
        assert.equal(code, 0);
      }
    });

    it("a port in use: exit 1, one stderr line, nothing on stdout", async () => {
      const holder = net.createServer();
      await new Promise((resolve) => holder.listen(0, "127.0.0.1", resolve));
      try {
        const [binary, ...pre] = command;
        const { status, stdout, stderr } = spawnSync(
          binary,
          [...pre, `${here}/bench.mjs`, "serve", "--port", String(holder.address().port), "--delay-ms", "10"],
          { encoding: "utf8", env, timeout: TIMEOUT_MS },
        );
        assert.equal(status, 1, stderr);
        assert.equal(stdout, "");
        assert.match(stderr, /^bench\.mjs: serve: cannot listen on 127\.0\.0\.1:\d+: [^\n]*in use[^\n]*\n$/);
      } finally {
        holder.close();
      }
    });

    it("bad arguments: exit 2, one stderr line, nothing on stdout; --help: usage, exit 0", () => {
      const [binary, ...pre] = command;
      const bench = (...argv) =>
        spawnSync(binary, [...pre, `${here}/bench.mjs`, ...argv], { encoding: "utf8", env, timeout: TIMEOUT_MS });
      for (const argv of [...badArgs.map((args) => ["serve", ...args]), ["--port", "0", "--delay-ms", "10", "serve"]]) {
        const { status, stdout, stderr } = bench(...argv);
        assert.equal(status, 2, argv.join(" "));
        assert.equal(stdout, "", argv.join(" "));
        assert.match(stderr, /^bench\.mjs: error: [^\n]+\n$/, argv.join(" "));
      }
      for (const flag of ["--help", "-h"]) {
        const { status, stdout, stderr } = bench("serve", flag);
        assert.equal(status, 0);
        assert.match(stdout, /^usage: bench\.mjs serve --port P --delay-ms D \[--threads T\]\n/);
        assert.equal(stderr, "");
      }
    });
  });
}
