// The closed-model load of the http workload (docs/protocol.md): USERS
// virtual users, each sending REQUESTS requests back to back over its own
// keep-alive connection (JMeter's thread group, as Vaughan used), every
// response checked. k6 runs this; harness/loadtest.py reads the summary.
import http from "k6/http";
import { check } from "k6";
import exec from "k6/execution";

const base = `http://127.0.0.1:${__ENV.PORT}/${__ENV.STYLE}/`;

export const options = {
  scenarios: {
    load: {
      executor: "per-vu-iterations",
      vus: Number(__ENV.USERS),
      iterations: Number(__ENV.REQUESTS),
      maxDuration: `${__ENV.MAX_S}s`, // bounded in time as well as in count
      gracefulStop: "0s",
    },
  },
  summaryTrendStats: ["min", "p(10)", "p(25)", "med", "p(75)", "p(90)", "p(99)", "max", "count"],
  discardResponseBodies: false,
};

export default function () {
  // A different NUM for every request, so a cached or constant answer fails.
  const num = (exec.vu.idInTest * 100003 + exec.vu.iterationInScenario * 7919) % 2147483648;
  const res = http.get(base + num);
  check(res, {
    status: (r) => r.status === 200,
    body: (r) => r.body === String(2 * num + Math.floor(num / 2)),
  });
}

export function handleSummary(data) {
  return { [__ENV.SUMMARY]: JSON.stringify(data) };
}
