// What benchmark-action/github-action-benchmark does with a customBiggerIsBetter
// or customSmallerIsBetter file, re-implemented line for line from its release
// v1.22.0 (tag commit a60cea5bc7b49e15c1f58f411161f99e0df48372, dist/src/*.js,
// compiled from src/*.ts at c38cce98215cf75e178ecd5a0c1a1ab215e93006), with the
// rules of zod 4.1.5 (the version it ships) for its schema:
//   extract.ts     BenchmarkResult (zod), extractCustomBenchmarkResult, the empty-list error
//   extractRangeInfo.ts, canonicalizeUnit.ts, normalizeValueByUnit.ts,
//   normalizeBenchmarkResult.ts, normalizeBenchmark.ts   (a result against the previous one)
//   write.ts       biggerIsBetter, getRatio, findAlerts, floatStr, strVal, buildComment,
//                  buildAlertComment   (the alert and the comment-always table)
// Only what touches the file's content; git, the GitHub API and data.js are left out.
//
// node gab_action.js TOOL CURRENT.json [PREVIOUS.json [THRESHOLD]]
// prints {"benches", "alerts", "comment_chars", "alert_comment_chars"} as JSON,
// or the action's error on stderr with exit status 1.
'use strict';
const fs = require('fs');

// zod 4.1.5: z.coerce.string() is String(x); z.coerce.number() is Number(x), then
// a number that is neither NaN nor infinite; .optional() lets undefined through;
// z.object wants a non-null, non-array object and keeps only its keys; z.array an array.
function coerceString(v) { return String(v); }
function coerceNumber(v, where) {
    const n = Number(v);
    if (typeof n === 'number' && !Number.isNaN(n) && Number.isFinite(n)) return n;
    throw new Error(`Invalid input: expected number at ${where}`);
}
function optional(v, parse) { return v === undefined ? undefined : parse(v); }
function parseBenchmarkResult(x, i) {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) {
        throw new Error(`Invalid input: expected object at [${i}]`);
    }
    const out = {
        name: coerceString(x.name),
        value: coerceNumber(x.value, `[${i}].value`),
        range: optional(x.range, coerceString),
        unit: coerceString(x.unit),
        extra: optional(x.extra, coerceString),
    };
    for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
    return out;
}
function parseBenchmarkResults(x) {
    if (!Array.isArray(x)) throw new Error('Invalid input: expected array');
    return x.map(parseBenchmarkResult);
}

// extract.ts
function extractCustomBenchmarkResult(output) {
    try {
        return parseBenchmarkResults(JSON.parse(output));
    } catch (err) {
        const errMessage = err instanceof Error ? err.message : String(err);
        throw new Error(
            `Output file for 'custom-(bigger|smaller)-is-better' must be JSON file containing an array of entries in BenchmarkResult format: ${errMessage}`,
        );
    }
}
function extractResult(tool, path, commitId) {
    const output = fs.readFileSync(path, 'utf8');
    const benches = extractCustomBenchmarkResult(output);
    if (benches.length === 0) {
        throw new Error(`No benchmark result was found in ${path}. Benchmark output was '${output}'`);
    }
    return { commit: { id: commitId }, date: 0, tool, benches };
}

// extractRangeInfo.ts
function extractRangeInfo(range) {
    if (!range) return undefined;
    const matches = range.match(/(?<prefix>(\+-|±)\s*)(?<value>\d.*)/);
    if (!matches || !matches.groups) return undefined;
    const value = Number(matches.groups.value);
    if (isNaN(value)) return undefined;
    return { value, prefix: matches.groups.prefix ?? '' };
}

// canonicalizeUnit.ts, normalizeValueByUnit.ts
function canonicalizeUnit(u) { return u.trim().toLowerCase().replace(/µs|μs/g, 'us'); }
const UNIT_CONVERSION_MULTIPLIER = 1000;
const TIME_UNITS = ['s', 'ms', 'us', 'ns'];
const ITER_UNITS = TIME_UNITS.map((unit) => `${unit}/iter`);
const OPS_PER_TIME_UNIT = [...TIME_UNITS].reverse().map((unit) => `ops/${unit}`);
const SUPPORTED_UNITS = [TIME_UNITS, ITER_UNITS, OPS_PER_TIME_UNIT];
function normalizeValueByUnit(prevUnit, currentUnit, value) {
    const prev = canonicalizeUnit(prevUnit);
    const current = canonicalizeUnit(currentUnit);
    for (const units of SUPPORTED_UNITS) {
        const prevUnitIndex = units.indexOf(prev);
        const currentUnitIndex = units.indexOf(current);
        if (prevUnitIndex >= 0 && currentUnitIndex >= 0) {
            const unitDiff = prevUnitIndex - currentUnitIndex;
            return value * UNIT_CONVERSION_MULTIPLIER ** unitDiff;
        }
    }
    return value;
}

// normalizeBenchmarkResult.ts, normalizeBenchmark.ts
function normalizeBenchmarkResult(prevBenchResult, currentBenchResult) {
    if (!prevBenchResult) return currentBenchResult;
    const prevUnit = prevBenchResult.unit;
    const currentUnit = currentBenchResult.unit;
    const currentRange = currentBenchResult.range;
    const currentRangeInfo = extractRangeInfo(currentRange);
    const normalizedValue = normalizeValueByUnit(prevUnit, currentUnit, currentBenchResult.value);
    const normalizedUnit = currentBenchResult.value !== normalizedValue ? prevUnit : currentUnit;
    const normalizedRangeInfo = currentRangeInfo
        ? { prefix: currentRangeInfo.prefix,
            value: normalizeValueByUnit(prevUnit, currentUnit, currentRangeInfo.value) }
        : undefined;
    return {
        ...currentBenchResult,
        value: normalizedValue,
        unit: normalizedUnit,
        range: normalizedRangeInfo ? `${normalizedRangeInfo.prefix}${normalizedRangeInfo.value}` : currentRange,
    };
}
function normalizeBenchmark(prevBench, currentBench) {
    if (!prevBench) return currentBench;
    return {
        ...currentBench,
        benches: currentBench.benches
            .map((currentBenchResult) => ({
                currentBenchResult,
                prevBenchResult: prevBench.benches.find((result) => result.name === currentBenchResult.name),
            }))
            .map(({ currentBenchResult, prevBenchResult }) =>
                normalizeBenchmarkResult(prevBenchResult, currentBenchResult)),
    };
}

// write.ts
function biggerIsBetter(tool) {
    switch (tool) {
        case 'customBiggerIsBetter': return true;
        case 'customSmallerIsBetter': return false;
    }
    throw new Error(`FATAL: Unexpected tool: '${tool}'`);
}
function getRatio(tool, prev, current) {
    if (prev.value === 0 && current.value === 0) return 1;
    return biggerIsBetter(tool)
        ? prev.value / current.value
        : current.value / prev.value;
}
function findAlerts(curSuite, prevSuite, threshold) {
    const alerts = [];
    for (const current of curSuite.benches) {
        const prev = prevSuite.benches.find((b) => b.name === current.name);
        if (prev === undefined) continue;
        const ratio = getRatio(curSuite.tool, prev, current);
        if (ratio > threshold) alerts.push({ current, prev, ratio });
    }
    return alerts;
}
function floatStr(n) {
    if (!Number.isFinite(n)) return `${n > 0 ? '+' : '-'}∞`;
    if (Number.isInteger(n)) return n.toFixed(0);
    if (n > 0.1) return n.toFixed(2);
    return n.toString();
}
function strVal(b) {
    let s = `\`${b.value}\` ${b.unit}`;
    if (b.range) s += ` (\`${b.range}\`)`;
    return s;
}
// The footer names the repository and workflow: a plausible long pair stands in.
function commentFooter() {
    const repoUrl = 'https://github.com/an-organisation/concurrency-runtime-benchmarks';
    const actionUrl = repoUrl + '/actions?query=workflow%3A' + encodeURIComponent('Benchmark concurrency runtimes');
    return `This comment was automatically generated by [workflow](${actionUrl}) using [github-action-benchmark](https://github.com/marketplace/actions/continuous-benchmark).`;
}
function buildComment(benchName, curSuite, prevSuite, expandableDetails = true) {
    const lines = [
        `# ${benchName}`,
        '',
        expandableDetails ? '<details>' : '',
        '',
        `| Benchmark suite | Current: ${curSuite.commit.id} | Previous: ${prevSuite.commit.id} | Ratio |`,
        '|-|-|-|-|',
    ];
    for (const current of curSuite.benches) {
        let line;
        const prev = prevSuite.benches.find((i) => i.name === current.name);
        if (prev) {
            const ratio = getRatio(curSuite.tool, prev, current);
            line = `| \`${current.name}\` | ${strVal(current)} | ${strVal(prev)} | \`${floatStr(ratio)}\` |`;
        } else {
            line = `| \`${current.name}\` | ${strVal(current)} | | |`;
        }
        lines.push(line);
    }
    lines.push('', expandableDetails ? '</details>' : '', '', commentFooter());
    return lines.join('\n');
}
function buildAlertComment(alerts, benchName, curSuite, prevSuite, threshold, cc) {
    const benchmarkText = benchName === 'Benchmark' ? '' : ` **'${benchName}'**`;
    const title = threshold === 0 ? '# Performance Report' : '# :warning: **Performance Alert** :warning:';
    const thresholdString = floatStr(threshold);
    const lines = [
        title,
        '',
        `Possible performance regression was detected for benchmark${benchmarkText}.`,
        `Benchmark result of this commit is worse than the previous benchmark result exceeding threshold \`${thresholdString}\`.`,
        '',
        `| Benchmark suite | Current: ${curSuite.commit.id} | Previous: ${prevSuite.commit.id} | Ratio |`,
        '|-|-|-|-|',
    ];
    for (const alert of alerts) {
        const { current, prev, ratio } = alert;
        lines.push(`| \`${current.name}\` | ${strVal(current)} | ${strVal(prev)} | \`${floatStr(ratio)}\` |`);
    }
    lines.push('', commentFooter());
    if (cc.length > 0) lines.push('', `CC: ${cc.join(' ')}`);
    return lines.join('\n');
}

function main() {
    const [tool, current, previous, threshold] = process.argv.slice(2);
    biggerIsBetter(tool);
    const name = 'Benchmark concurrency runtimes';
    const cur = extractResult(tool, current, 'b'.repeat(40));
    const out = { benches: cur.benches, alerts: [], comment_chars: null, alert_comment_chars: null };
    if (previous !== undefined) {
        const prev = extractResult(tool, previous, 'a'.repeat(40));
        const normalized = normalizeBenchmark(prev, cur);
        // the action's default alert-threshold, "200%"
        const limit = threshold === undefined ? 2.0 : Number(threshold);
        const alerts = findAlerts(normalized, prev, limit);
        out.benches = normalized.benches;
        out.alerts = alerts.map((a) => ({ name: a.current.name, ratio: floatStr(a.ratio) }));
        out.comment_chars = buildComment(name, normalized, prev).length;
        out.alert_comment_chars = buildAlertComment(alerts, name, normalized, prev, limit, ['@someone']).length;
    }
    process.stdout.write(JSON.stringify(out) + '\n');
}

try {
    main();
} catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
}
