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
import { Counter, Trend } from "k6/metrics";

const base = `http://127.0.0.1:${__ENV.PORT}/${__ENV.STYLE}/`;
const rate = Number(__ENV.RATE || 0);
// The probe's schedule: every 10 ms, no request, so none of its iterations
// waits on the server and its lateness is k6's own.
const PROBE_RATE = 100;

// Open loop only: requests sent; each one's time from k6's send, its wait
// for and opening of a connection included (k6's http_req_duration leaves
// them out: a server that stops accepting would be hidden); how late k6's
// probe ran against its schedule (ms).
const sent = new Counter("sent");
const latency = new Trend("latency", true);
const lag = new Trend("schedule_lag", true);

const closed = {
  executor: "per-vu-iterations",
  vus: Number(__ENV.USERS),
  iterations: Number(__ENV.REQUESTS),
  maxDuration: `${__ENV.MAX_S}s`, // bounded in time as well as in count
  gracefulStop: "0s",
};
const open = {
  load: {
    executor: "constant-arrival-rate",
    rate: rate,
    timeUnit: "1s",
    duration: `${__ENV.STEP_S}s`,
    preAllocatedVUs: Number(__ENV.VUS),
    maxVUs: Number(__ENV.VUS), // all made before the step: none is started mid-step
    gracefulStop: `${__ENV.GRACE_S}s`, // then a request still unanswered is interrupted, and counted
  },
  probe: {
    executor: "constant-arrival-rate",
    exec: "probe",
    rate: PROBE_RATE,
    timeUnit: "1s",
    duration: `${__ENV.STEP_S}s`,
    preAllocatedVUs: 5,
    maxVUs: 5,
    gracefulStop: "0s",
  },
};

export const options = {
  scenarios: rate > 0 ? open : { load: closed },
  summaryTrendStats: ["min", "p(10)", "p(25)", "med", "p(75)", "p(90)", "p(99)", "p(99.9)",
    "max", "count"],
  // a threshold that always holds, so that the summary has the load's own drops
  thresholds: rate > 0 ? { "dropped_iterations{scenario:load}": ["count>=0"] } : {},
  discardResponseBodies: false,
};

export default function () {
  // A different NUM for every request, so a cached or constant answer fails.
  const num = rate > 0
    ? exec.scenario.iterationInTest % 2147483648
    : (exec.vu.idInTest * 100003 + exec.vu.iterationInScenario * 7919) % 2147483648;
  if (rate > 0) {
    sent.add(1);
  }
  const res = http.get(base + num);
  if (rate > 0) {
    const t = res.timings;
    latency.add(t.blocked + t.connecting + t.duration);
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

export function probe() {
  const due = exec.scenario.startTime + (exec.scenario.iterationInTest * 1000) / PROBE_RATE;
  lag.add(Math.max(0, Date.now() - due));
}

export function handleSummary(data) {
  return { [__ENV.SUMMARY]: JSON.stringify(data) };
}
