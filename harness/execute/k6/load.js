// The loads of the http workload (docs/protocol.md), every response checked;
// k6 runs this, harness/execute/loadtest.py reads the summary.
// Closed (RATE unset): USERS virtual users, each sending REQUESTS requests
// back to back over its own keep-alive connection (JMeter's thread group, as
// Vaughan used).
// Open (RATE set): one ladder step, RATE requests a second on a fixed
// schedule for STEP_S seconds, whatever the server's pace, from a pool of
// VUS virtual users (k6's constant-arrival-rate); a request due when every
// VU is busy is dropped and counted (dropped_iterations), never sent late.
import http from "k6/http";
import { check } from "k6";
import exec from "k6/execution";
import { Trend } from "k6/metrics";

const base = `http://127.0.0.1:${__ENV.PORT}/${__ENV.STYLE}/`;
const rate = Number(__ENV.RATE || 0);

// Open loop only: how late k6 started each request against its schedule
// (ms; a busy generator starts them late), and each response's time from
// that schedule, so that neither the server's queue nor k6's lateness is
// left out of the figure (coordinated omission).
const lag = new Trend("schedule_lag", true);
const latency = new Trend("latency", true);

const closed = {
  executor: "per-vu-iterations",
  vus: Number(__ENV.USERS),
  iterations: Number(__ENV.REQUESTS),
  maxDuration: `${__ENV.MAX_S}s`, // bounded in time as well as in count
  gracefulStop: "0s",
};
const open = {
  executor: "constant-arrival-rate",
  rate: rate,
  timeUnit: "1s",
  duration: `${__ENV.STEP_S}s`,
  preAllocatedVUs: Number(__ENV.VUS),
  maxVUs: Number(__ENV.VUS), // all made before the step: none is started mid-step
  gracefulStop: `${__ENV.GRACE_S}s`, // then a request still unanswered is interrupted, and counted
};

export const options = {
  scenarios: { load: rate > 0 ? open : closed },
  summaryTrendStats: ["min", "p(10)", "p(25)", "med", "p(75)", "p(90)", "p(99)", "p(99.9)",
    "max", "count"],
  discardResponseBodies: false,
};

export default function () {
  let due = 0;
  if (rate > 0) {
    // Iteration i is due i/RATE s after the scenario's start (k6 numbers
    // the iterations it starts, so after a dropped one this reads early:
    // such a step is marked saturated anyway).
    due = exec.scenario.startTime + (exec.scenario.iterationInTest * 1000) / rate;
    lag.add(Math.max(0, Date.now() - due));
  }
  // A different NUM for every request, so a cached or constant answer fails.
  const num = rate > 0
    ? exec.scenario.iterationInTest % 2147483648
    : (exec.vu.idInTest * 100003 + exec.vu.iterationInScenario * 7919) % 2147483648;
  const res = http.get(base + num);
  if (rate > 0) {
    // k6's own timings are finer than Date.now()'s millisecond
    const t = res.timings;
    latency.add(Math.max(Date.now() - due, t.blocked + t.connecting + t.duration));
  }
  check(res, {
    status: (r) => r.status === 200,
    // a wrong answer, counted apart from a refused or failed request
    body: (r) => r.status !== 200 || r.body === String(2 * num + Math.floor(num / 2)),
    // an overloaded server's answer: no response (refused, reset, timed
    // out) or 503; any other status is a wrong one
    answered: (r) => r.status !== 0 && r.status !== 503,
  });
}

export function handleSummary(data) {
  return { [__ENV.SUMMARY]: JSON.stringify(data) };
}
