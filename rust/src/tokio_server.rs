//! `rust-tokio serve`: the HTTP server of docs/protocol.md ("serve", after
//! Vaughan). GET /STYLE/NUM answers 2*NUM + NUM/2 from two simulated remote
//! calls, "double" (2·D) and "halve" (D), written in the five styles of the
//! article's controller. hyper 1's HTTP/1 server on the tokio multi-thread
//! runtime, one spawned task per connection; `--threads T` is the number of
//! tokio worker threads, the pool that runs the handlers (README.md, "The
//! HTTP server").

use std::convert::Infallible;
use std::ffi::OsString;
use std::future::Future;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::num::NonZeroUsize;
use std::panic;
use std::process;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Parser, value_parser};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::{Handle, Runtime};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;
use tokio::task;

use crate::protocol::one_line;

/// The runtime label of the ready line, before the allocator's.
pub const LABEL: &str = concat!(
    "tokio ",
    env!("TOKIO_VERSION"),
    ", hyper ",
    env!("HYPER_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

/// The usage line, also shown under `rust-tokio --help`.
pub const USAGE: &str = "rust-tokio serve --port P --delay-ms D [--threads T]";

/// 2·D milliseconds still fit 31 bits, as in the other languages.
const MAX_DELAY_MS: u64 = (1 << 30) - 1;
/// More worker threads than this machine could start anyway (about 16400
/// threads: rust/README.md); a T the OS refuses is a clean exit 1.
const MAX_THREADS: u64 = 65535;

#[derive(Parser, Debug)]
#[command(
    name = "rust-tokio serve",
    override_usage = USAGE,
    disable_version_flag = true,
    about = "The protocol's HTTP server (docs/protocol.md): GET /health, GET /STYLE/NUM"
)]
struct Cli {
    /// TCP port on 127.0.0.1 (0 = a free port).
    #[arg(long, value_name = "P")]
    port: u16,
    /// The simulated calls take 2*D ms (double) and D ms (halve) (> 0).
    #[arg(long, value_name = "D", value_parser = value_parser!(u64).range(1..=MAX_DELAY_MS))]
    delay_ms: u64,
    /// tokio worker threads, the pool that runs the handlers (> 0; default:
    /// tokio's, one per core). spawn_blocking's pool keeps tokio's default
    /// (at most 512 threads).
    #[arg(long, value_name = "T", value_parser = value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
}

/// Validated arguments.
#[derive(Debug, PartialEq, Eq)]
struct Config {
    port: u16,
    delay: Duration,
    threads: Option<NonZeroUsize>,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Config, clap::Error> {
    let cli = Cli::try_parse_from(args)?;
    Ok(Config {
        port: cli.port,
        delay: Duration::from_millis(cli.delay_ms),
        threads: cli
            .threads
            .map(|t| NonZeroUsize::new(t as usize).expect("clap keeps --threads above 0")),
    })
}

/// `args`: `serve` and what follows it. Returns the exit status: 0 after
/// SIGTERM or SIGINT, 1 if the server cannot start, 2 for bad arguments
/// (one line on stderr). `--help` prints the usage on stdout and exits 0.
pub fn main(args: impl IntoIterator<Item = OsString>, allocator: &str) -> i32 {
    let config = match parse(args) {
        Ok(config) => config,
        Err(err) if err.kind() == ErrorKind::DisplayHelp => err.exit(),
        Err(err) => {
            eprintln!("{}", one_line(&err));
            return 2;
        }
    };
    let rt = runtime(config.threads);
    let stop = match watch_signals() {
        Ok(stop) => stop,
        Err(err) => {
            eprintln!("error: serve: cannot handle SIGTERM and SIGINT: {err}");
            return 1;
        }
    };
    let status = rt.block_on(serve(&config, stop, format!("{LABEL}, {allocator}")));
    // The process exits with the runtime still running: requests in flight
    // die with it. Dropping the runtime would wait for every handler (a
    // `sync` one sleeps up to 3·D); shutting it down in the background
    // would wake a `sync-over-async` handler into a runtime being shut
    // down, which panics (a message on stderr before the exit).
    std::mem::forget(rt);
    status
}

/// The multi-thread runtime with its I/O and timer drivers; `threads` sets
/// its worker threads, tokio's default (one per core) if `None`. A runtime
/// that cannot start (the OS refuses a thread) ends the process with one
/// line on stderr and status 1.
fn runtime(threads: Option<NonZeroUsize>) -> Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_io().enable_time();
    if let Some(threads) = threads {
        builder.worker_threads(threads.get());
    }
    // build() starts the workers and panics if the OS refuses one. Catching
    // that panic does not work (unwinding out of build() waits forever for
    // the workers already started), so the hook exits at once instead.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("a worker thread could not start");
        eprintln!("error: serve: cannot start the tokio runtime: {message}");
        process::exit(1);
    }));
    let built = builder.build();
    panic::set_hook(hook);
    built.unwrap_or_else(|err| {
        eprintln!("error: serve: cannot start the tokio runtime: {err}");
        process::exit(1);
    })
}

/// The protocol's ready line.
#[derive(Serialize)]
struct Ready {
    listening: u16,
    styles: [&'static str; 5],
    threads: Option<NonZeroUsize>,
    runtime: String,
}

/// Waits for SIGTERM or SIGINT on a thread of its own, with its own
/// current-thread runtime, and then completes the returned receiver. The
/// server's runtime would hear a signal only when one of its workers polls
/// the I/O driver, and `sync` handlers can keep every worker asleep for
/// seconds. Returns once the handlers are registered, so a signal sent as
/// soon as the ready line is read is not missed.
fn watch_signals() -> io::Result<oneshot::Receiver<()>> {
    let (stop, stopped) = oneshot::channel();
    let (registered, ready) = mpsc::channel();
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let failed = registered.clone();
            let watch = async move {
                let mut term = signal(SignalKind::terminate())?;
                let mut int = signal(SignalKind::interrupt())?;
                let _ = registered.send(Ok(()));
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                let _ = stop.send(());
                Ok::<(), io::Error>(())
            };
            let watched = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
                .and_then(|rt| rt.block_on(watch));
            if let Err(err) = watched {
                // Only before registration: afterwards nothing fails.
                let _ = failed.send(Err(err));
            }
        })?;
    ready
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("the signal thread ended")))?;
    Ok(stopped)
}

/// Listens on 127.0.0.1, prints the ready line and accepts connections until
/// `stop` completes (SIGTERM or SIGINT); returns the exit status.
async fn serve(config: &Config, mut stop: oneshot::Receiver<()>, label: String) -> i32 {
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!(
                "error: serve: cannot listen on 127.0.0.1:{}: {err}",
                config.port
            );
            return 1;
        }
    };
    let ready = Ready {
        listening: listener.local_addr().map_or(config.port, |a| a.port()),
        styles: Style::NAMES,
        threads: config.threads,
        runtime: label,
    };
    let line = serde_json::to_string(&ready).expect("the ready line serializes");
    let mut stdout = io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        eprintln!("error: serve: writing the ready line: {err}");
        return 1;
    }
    drop(stdout);

    let calc = Calculator {
        delay: config.delay,
    };
    // This loop is the block_on future: it runs on the main thread, outside
    // the worker pool, and each connection is a task spawned onto the
    // workers, which run its requests' handlers. The signal thread wakes
    // this thread directly, whatever the workers are doing.
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, calc));
                }
                // Out of file descriptors and the like: back off a little
                // instead of spinning, as Go's net/http does.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    // Stop accepting; open connections and requests in flight end with the
    // process (main).
    drop(listener);
    0
}

/// One connection: HTTP/1.1, keep-alive (hyper's default), its requests
/// answered one after another.
async fn connection(stream: TcpStream, calc: Calculator) {
    // Small answers go out at once (Go's net/http sets it too).
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request| respond(request, calc));
    // A client that goes away mid-request is its own business.
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// What a request path asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Health,
    Calculate(Style, i64),
    UnknownStyle,
    BadNumber,
}

/// `/health`, or `/STYLE/NUM` with NUM a decimal integer in [0, 2^31):
/// digits only (Rust's integer parsing would also take a leading `+`).
fn route(path: &str) -> Route {
    if path == "/health" {
        return Route::Health;
    }
    let Some((style, num)) = path.strip_prefix('/').and_then(|rest| rest.split_once('/')) else {
        return Route::UnknownStyle;
    };
    let Some(style) = Style::from_name(style) else {
        return Route::UnknownStyle;
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return Route::BadNumber;
    }
    match num.parse::<u32>() {
        Ok(n) if n < 1 << 31 => Route::Calculate(style, i64::from(n)),
        _ => Route::BadNumber,
    }
}

async fn respond(
    request: Request<Incoming>,
    calc: Calculator,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::GET {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "only GET".into());
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return Ok(response);
    }
    Ok(match route(request.uri().path()) {
        Route::Health => text(StatusCode::OK, "ok".into()),
        Route::Calculate(style, num) => {
            let answer = calc.controller(style, num).await;
            text(StatusCode::OK, answer.to_string())
        }
        Route::UnknownStyle => text(StatusCode::NOT_FOUND, "unknown style".into()),
        Route::BadNumber => text(
            StatusCode::BAD_REQUEST,
            "NUM must be a decimal integer in [0, 2^31)".into(),
        ),
    })
}

/// A text/plain answer, no trailing newline; `Full` gives hyper the length,
/// so it sends Content-Length and keeps the connection open.
fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// The protocol's five styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Sync,
    SyncOverAsync,
    Parallel,
    Async,
    WhenAll,
}

impl Style {
    /// The protocol's order, as the ready line lists them.
    const ALL: [Style; 5] = [
        Style::Sync,
        Style::SyncOverAsync,
        Style::Parallel,
        Style::Async,
        Style::WhenAll,
    ];
    const NAMES: [&'static str; 5] = ["sync", "sync-over-async", "parallel", "async", "when-all"];

    fn from_name(name: &str) -> Option<Style> {
        let i = Style::NAMES.iter().position(|n| *n == name)?;
        Some(Style::ALL[i])
    }
}

/// The article's CalculationService: two remote calls simulated by sleeping,
/// each in a blocking and a non-blocking form. i64, not the article's int:
/// NUM may be 2^31 - 1, and 2*NUM must not overflow.
#[derive(Clone, Copy, Debug)]
struct Calculator {
    delay: Duration,
}

impl Calculator {
    /// Blocks the calling thread for 2·D.
    fn double(self, num: i64) -> i64 {
        std::thread::sleep(2 * self.delay);
        num * 2
    }

    /// Blocks the calling thread for D.
    fn halve(self, num: i64) -> i64 {
        std::thread::sleep(self.delay);
        num / 2
    }

    /// Waits 2·D on tokio's timer, holding no thread.
    async fn double_async(self, num: i64) -> i64 {
        tokio::time::sleep(2 * self.delay).await;
        num * 2
    }

    /// Waits D on tokio's timer, holding no thread.
    async fn halve_async(self, num: i64) -> i64 {
        tokio::time::sleep(self.delay).await;
        num / 2
    }

    /// The article's CalculationController, one action per style. The
    /// handler runs on a tokio worker thread (the connection's task).
    async fn controller(self, style: Style, num: i64) -> i64 {
        match style {
            Style::Sync => self.sync(num),
            Style::SyncOverAsync => self.sync_over_async(num),
            Style::Parallel => self.parallel(num).await,
            Style::Async => self.async_(num).await,
            Style::WhenAll => self.when_all(num).await,
        }
    }

    /// sync: double, then halve, each blocking the worker thread that runs
    /// the handler (and so every task queued behind it on that worker).
    fn sync(self, num: i64) -> i64 {
        let dbl = self.double(num);
        let half = self.halve(num);
        dbl + half
    }

    /// sync-over-async: block the handler's thread on the non-blocking
    /// double's result, then on halve's (C#'s `.Result`).
    fn sync_over_async(self, num: i64) -> i64 {
        let dbl = result(self.double_async(num));
        let half = result(self.halve_async(num));
        dbl + half
    }

    /// parallel: the two blocking calls on two threads of tokio's blocking
    /// pool at once (`spawn_blocking` starts each at once), then wait for
    /// both (`Parallel.Invoke`). The handler awaits the two JoinHandles: its
    /// worker is free meanwhile, the two pool threads are not.
    async fn parallel(self, num: i64) -> i64 {
        let dbl = task::spawn_blocking(move || self.double(num));
        let half = task::spawn_blocking(move || self.halve(num));
        dbl.await.expect("double does not panic") + half.await.expect("halve does not panic")
    }

    /// async: await double, then await halve.
    async fn async_(self, num: i64) -> i64 {
        let dbl = self.double_async(num).await;
        let half = self.halve_async(num).await;
        dbl + half
    }

    /// when-all: both non-blocking calls at once, then both results
    /// (`Task.WhenAll`): `join!` polls the two futures together in this task.
    async fn when_all(self, num: i64) -> i64 {
        let (dbl, half) = tokio::join!(self.double_async(num), self.halve_async(num));
        dbl + half
    }
}

/// Blocks the calling worker thread until `future` is done: Rust's `.Result`.
/// tokio refuses a plain `Handle::block_on` on one of its workers (it would
/// stall every task queued there), so `block_in_place` first hands the
/// worker's queue to another thread (a new one from the blocking pool if
/// none is idle) and this thread blocks alone. A Rust future does nothing
/// until polled, so the call starts when it is blocked on.
fn result<F: Future>(future: F) -> F::Output {
    task::block_in_place(|| Handle::current().block_on(future))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(argv: &[&str]) -> Vec<OsString> {
        std::iter::once("serve")
            .chain(argv.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn parses_the_protocol_arguments() {
        let config = parse(args(&["--port", "0", "--delay-ms", "50"])).unwrap();
        let delay = Duration::from_millis(50);
        let (port, threads) = (0, None);
        assert_eq!(
            config,
            Config {
                port,
                delay,
                threads
            }
        );
        let config = parse(args(&[
            "--threads",
            "3",
            "--port",
            "8080",
            "--delay-ms",
            "1",
        ]))
        .unwrap();
        assert_eq!((config.port, config.threads), (8080, NonZeroUsize::new(3)));
    }

    #[test]
    fn rejects_bad_arguments_in_one_line() {
        for argv in [
            &[][..],
            &["--port", "0"],
            &["--delay-ms", "10"],
            &["--port", "0", "--delay-ms", "0"],
            &["--port", "0", "--delay-ms", "-5"],
            &["--port", "0", "--delay-ms", "1073741824"],
            &["--port", "65536", "--delay-ms", "10"],
            &["--port", "0x10", "--delay-ms", "10"],
            &["--port", "0", "--delay-ms", "10", "--threads", "0"],
            &["--port", "0", "--delay-ms", "10", "--threads"],
            &["--port", "0", "--delay-ms", "10", "extra"],
        ] {
            let err = parse(args(argv)).expect_err(&format!("accepted {argv:?}"));
            let line = one_line(&err);
            assert!(
                line.starts_with("error: ") && !line.contains('\n'),
                "{line}"
            );
        }
    }

    #[test]
    fn routes_health_styles_and_numbers() {
        assert_eq!(route("/health"), Route::Health);
        assert_eq!(route("/sync/7"), Route::Calculate(Style::Sync, 7));
        assert_eq!(route("/when-all/007"), Route::Calculate(Style::WhenAll, 7));
        assert_eq!(
            route("/sync-over-async/2147483647"),
            Route::Calculate(Style::SyncOverAsync, (1 << 31) - 1)
        );
        for path in ["/", "/sync", "/nope/5", "/health/1", "//5", "/Sync/5"] {
            assert_eq!(route(path), Route::UnknownStyle, "{path}");
        }
        for path in [
            "/async/",
            "/async/-1",
            "/async/+5",
            "/async/1.5",
            "/async/abc",
            "/async/2147483648",
            "/async/99999999999999999999",
            "/async/5/6",
            "/async/ 5",
        ] {
            assert_eq!(route(path), Route::BadNumber, "{path}");
        }
    }

    #[test]
    fn every_style_has_its_name_in_order() {
        for (style, name) in Style::ALL.into_iter().zip(Style::NAMES) {
            assert_eq!(Style::from_name(name), Some(style));
        }
    }

    #[test]
    fn every_style_computes_the_same_answer() {
        // Not runtime(): its panic hook is process-wide while it builds.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let calc = Calculator {
            delay: Duration::from_millis(1),
        };
        for style in Style::ALL {
            for num in [0, 1, 7, (1 << 31) - 1] {
                let answer = rt.block_on(rt.spawn(calc.controller(style, num))).unwrap();
                assert_eq!(answer, 2 * num + num / 2, "{style:?} {num}");
            }
        }
    }
}
