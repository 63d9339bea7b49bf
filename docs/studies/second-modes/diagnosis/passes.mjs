// Run a workload of node/workloads.mjs pass after pass, gc() before each (as
// protocol.mjs does), printing a marker line around each pass, so that the
// lines `node --trace-gc` writes (synchronously, to the same stdout) can be
// counted per pass (gcpass.py):
//   node --expose-gc --trace-gc passes.mjs bounded 10000 1 40 | sed 's/^/P1 /' | python3 gcpass.py
import { workloads } from "../../../../node/workloads.mjs";

const [workload, n, buffer, passes] = [process.argv[2], +process.argv[3], +process.argv[4], +process.argv[5]];
if (workload === "chain") await workloads.chain({ n: Math.min(n, 1000) });
for (let i = 0; i < passes; i++) {
  if (i > 0 || workload === "chain") globalThis.gc();
  console.log(`PASS ${i} BEGIN`);
  const t0 = performance.now();
  await workloads[workload]({ n, buffer });
  const ms = performance.now() - t0;
  console.log(`PASS ${i} END ${ms.toFixed(2)}`);
}
