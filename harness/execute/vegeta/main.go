// The http workload's load generator: vegeta (github.com/tsenart/vegeta/v12,
// MIT) as a library, driven as docs/protocol.md says, every response
// checked; harness/execute/loadtest.py reads the summary it writes.
//
// Closed (-rate 0): U workers, each sending its next request when its last
// is answered (vegeta's -rate=0 -max-workers=U), U x R requests in all.
// Open (-rate R): one ladder step, R requests a second for -step-s seconds
// on vegeta's constant pacer, from at most -workers workers. A request due
// while every worker waits on the server is sent late, and its latency runs
// from its scheduled send time (attack start + (seq+1)/R), so a delay of the
// generator's own counts against the server, never for it. A probe (a
// timer every 10 ms, no request) measures how late the generator itself
// ran; the harness judges it. With -warmup-s W the step is preceded by W
// seconds at the same rate on the same connections, its answers waited
// for (within the grace) and not counted: a server's JIT compiles its
// handler under load rather than inside the measured step.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const probeEvery = 10 * time.Millisecond

type trend struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

type summary struct {
	Due         uint64  `json:"due"`
	Sent        int     `json:"sent"`
	Answered    int     `json:"answered"`
	Unanswered  int     `json:"cut_at_end"`
	BadStatus   int     `json:"bad_status"`
	BadBody     int     `json:"bad_body"`
	Refused     int     `json:"refused"`
	MaxInFlight int64   `json:"max_in_flight"`
	WarmSent    int     `json:"warmup_sent"`
	WarmOK      int     `json:"warmup_ok"`
	Workers     uint64  `json:"workers"`
	LoadS       float64 `json:"elapsed_s"`
	FirstError  string  `json:"first_error"`
	Latency     trend   `json:"latency"`
	Lag         trend   `json:"lag"`
}

// percentile: the nearest-rank percentile of sorted values (ms).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func trendOf(ms []float64) trend {
	sort.Float64s(ms)
	t := trend{Count: len(ms)}
	if len(ms) > 0 {
		t.P50, t.P90, t.P99 = percentile(ms, 50), percentile(ms, 90), percentile(ms, 99)
		t.P999, t.Max = percentile(ms, 99.9), ms[len(ms)-1]
	}
	return t
}

// deadlined ends every request at the attack's last moment (the step and
// its grace, or the run's limit): one still unanswered then is counted.
type deadlined struct {
	ctx  context.Context
	next http.RoundTripper
}

func (d deadlined) RoundTrip(r *http.Request) (*http.Response, error) {
	return d.next.RoundTrip(r.WithContext(d.ctx))
}

// probe: how late a 10 ms timer ran against its schedule (ms), until stop.
func probe(stop <-chan struct{}, out chan<- []float64) {
	var lags []float64
	start := time.Now()
	for i := 1; ; i++ {
		due := start.Add(time.Duration(i) * probeEvery)
		select {
		case <-stop:
			out <- lags
			return
		case <-time.After(time.Until(due)):
			lags = append(lags, float64(time.Since(due))/float64(time.Millisecond))
		}
	}
}

// counting stops the attack at its due count; with no pacer it sends as
// soon as a worker is free (vegeta's -rate=0: the closed loop).
type counting struct {
	pacer vegeta.Pacer
	due   uint64
}

func (c counting) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= c.due {
		return 0, true
	}
	if c.pacer == nil {
		return 0, false
	}
	return c.pacer.Pace(elapsed, hits)
}

func (c counting) Rate(elapsed time.Duration) float64 {
	if c.pacer == nil {
		return 0
	}
	return c.pacer.Rate(elapsed)
}

func expected(num uint64) string {
	return strconv.FormatUint(2*num+num/2, 10)
}

func main() {
	base := flag.String("base", "", "http://127.0.0.1:PORT/STYLE/")
	rate := flag.Uint64("rate", 0, "requests a second (0: the closed loop)")
	stepS := flag.Float64("step-s", 0, "open loop: the step's length (s)")
	graceS := flag.Float64("grace-s", 0, "open loop: the wait for answers after the step (s)")
	warmS := flag.Float64("warmup-s", 0, "open loop: the uncounted load at the same rate before the step (s)")
	workers := flag.Uint64("workers", 10, "at most this many requests in flight (closed: the users)")
	total := flag.Uint64("requests", 0, "closed loop: the requests in all (users x requests)")
	maxS := flag.Float64("max-s", 60, "closed loop: the run's time limit (s)")
	out := flag.String("out", "", "the summary's path (JSON)")
	flag.Parse()
	if *base == "" || *out == "" || (*rate > 0 && *stepS <= 0) || (*rate == 0 && *total == 0) ||
		*warmS < 0 || (*rate == 0 && *warmS > 0) {
		fmt.Fprintln(os.Stderr, "loadgen: -base, -out and -step-s (open) or -requests (closed) are required; -warmup-s is the open loop's")
		os.Exit(2)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: int(*workers), ForceAttemptHTTP2: false,
		DisableCompression: true}
	var sent, ok int
	if *warmS > 0 {
		sent, ok = warmUp(transport, *base, *rate, *warmS, *graceS, *workers)
	}
	s := run(transport, *base, *rate, *stepS, *graceS, *workers, *total, *maxS)
	s.WarmSent, s.WarmOK = sent, ok
	data, _ := json.Marshal(s)
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// seq numbers every request of the process, the warm-up's and the step's
// alike: a different NUM for each, so a cached or constant answer fails.
var seq atomic.Int64

// targets: GET base+NUM, NUM from seq; made is called as each request is.
func targets(base string, made func()) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		t.Method, t.URL = "GET", base+strconv.FormatInt((seq.Add(1)*7919)%2147483648, 10)
		made()
		return nil
	}
}

// attacker: vegeta's, on the shared transport, every request ended when ctx
// ends; the open loop's workers grow from 10 as its schedule needs, the
// closed loop's U users all start at once.
func attacker(ctx context.Context, transport *http.Transport, workers uint64, open bool) *vegeta.Attacker {
	client := &http.Client{Transport: deadlined{ctx, transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := workers
	if open {
		start = min(workers, 10)
	}
	return vegeta.NewAttacker(vegeta.Client(client), vegeta.Workers(start), vegeta.MaxWorkers(workers))
}

// warmUp: warmS seconds at the step's rate, every answer waited for
// within the grace; how many were sent and how many answered 200.
func warmUp(transport *http.Transport, base string, rate uint64, warmS, graceS float64,
	workers uint64) (sent, ok int) {
	du := time.Duration(warmS * float64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), du+time.Duration(graceS*float64(time.Second)))
	defer cancel()
	atk := attacker(ctx, transport, workers, true)
	targeter := targets(base, func() {})
	pacer := counting{vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}, rate * uint64(warmS+0.5)}
	for res := range atk.Attack(targeter, pacer, du, "warm-up") {
		sent++
		if res.Code == http.StatusOK {
			ok++
		}
	}
	return sent, ok
}

func run(transport *http.Transport, base string, rate uint64, stepS, graceS float64, workers, total uint64,
	maxS float64) summary {
	open := rate > 0
	du := time.Duration(maxS * float64(time.Second))
	limit := du
	due := total
	if open {
		du = time.Duration(stepS * float64(time.Second))
		limit = du + time.Duration(graceS*float64(time.Second))
		due = rate * uint64(stepS+0.5)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	atk := attacker(ctx, transport, workers, open)
	var inFlight, most atomic.Int64
	targeter := targets(base, func() {
		if now := inFlight.Add(1); now > most.Load() {
			most.Store(now)
		}
	})
	counted := counting{due: due}
	if open {
		counted.pacer = vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}
	}
	stopProbe, lags := make(chan struct{}), make(chan []float64, 1)
	if open {
		go probe(stopProbe, lags)
	}
	timer := time.AfterFunc(limit, cancel)
	defer timer.Stop()
	if open {
		defer time.AfterFunc(du, func() { close(stopProbe) }).Stop()
	}
	began := time.Now()
	s := summary{Due: due, Workers: workers}
	var latencies []float64
	for res := range atk.Attack(targeter, counted, du, "") {
		inFlight.Add(-1)
		s.Sent++
		judge(&s, res, open, began, rate, &latencies)
	}
	s.LoadS = time.Since(began).Seconds()
	s.MaxInFlight = most.Load()
	s.Latency = trendOf(latencies)
	if open {
		s.Lag = trendOf(<-lags)
	}
	return s
}

// judge counts one result: unanswered (cut at the attack's last moment),
// refused (no answer, or an overloaded server's 503), a status not 200, a
// wrong body; and its latency, from its scheduled send in the open loop.
func judge(s *summary, res *vegeta.Result, open bool, began time.Time, rate uint64, lat *[]float64) {
	if res.Code == 0 && strings.Contains(res.Error, context.Canceled.Error()) {
		s.Unanswered++
		return
	}
	s.Answered++
	if res.Error != "" && s.FirstError == "" {
		s.FirstError = res.Error
	}
	took := res.Latency
	if open {
		// the constant pacer's request n (from 0) is due at (n+1)/rate
		due := time.Duration(float64(res.Seq+1) * float64(time.Second) / float64(rate))
		scheduled := began.Add(due)
		took = res.Timestamp.Add(res.Latency).Sub(scheduled)
	}
	*lat = append(*lat, float64(took)/float64(time.Millisecond))
	switch {
	case res.Code == 0 || res.Code == http.StatusServiceUnavailable:
		s.Refused++
		s.BadStatus++
	case res.Code != http.StatusOK:
		s.BadStatus++
	default:
		num, err := strconv.ParseUint(res.URL[strings.LastIndexByte(res.URL, '/')+1:], 10, 64)
		if err != nil || string(res.Body) != expected(num) {
			s.BadBody++
		}
	}
}
