//! `rust-tokio serve` end to end, as the harness runs it (docs/protocol.md,
//! "The HTTP server"): the built binary at port 0, a handful of requests over
//! loopback with a minimal HTTP/1.1 client on std's TcpStream, timing checked
//! from below (a style's floor), never from above.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const BINARY: &str = env!("CARGO_BIN_EXE_rust-tokio");
const STYLES: [&str; 5] = ["sync", "sync-over-async", "parallel", "async", "when-all"];
const DELAY_MS: u64 = 50;
/// Generous bounds for a loaded machine; no test waits this long unless broken.
const PATIENCE: Duration = Duration::from_secs(30);

/// The lower bound of a style's answer time, in delays: 3·D in sequence, or
/// 2·D for the two that run double and halve at once.
fn floor_delays(style: &str) -> u32 {
    match style {
        "parallel" | "when-all" => 2,
        _ => 3,
    }
}

/// A `rust-tokio serve` child process and its ready line.
struct Server {
    child: Child,
    ready: Value,
    stdout: Option<BufReader<ChildStdout>>,
    /// Everything the server writes on stderr, read on a thread.
    stderr: Option<thread::JoinHandle<String>>,
}

/// How a stopped server ended.
#[derive(Debug, PartialEq, Eq)]
struct Stopped {
    code: Option<i32>,
    /// What stdout printed after the ready line.
    stdout: String,
    stderr: String,
}

impl Stopped {
    /// What the protocol asks for after SIGTERM or SIGINT: exit 0, nothing
    /// more on stdout; and here nothing on stderr either.
    fn clean() -> Stopped {
        Stopped {
            code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
        }
    }
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BINARY)
            .arg("serve")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut stderr = child.stderr.take().unwrap();
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // The ready line, read on a thread so that a silent server fails the
        // test instead of hanging it.
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let read = stdout.read_line(&mut line);
            let _ = tx.send((read.map(|_| line), stdout));
        });
        let Ok((line, stdout)) = rx.recv_timeout(PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no ready line within {PATIENCE:?}: {:?}", stderr.join());
        };
        let line = line.unwrap();
        assert!(line.ends_with('\n'), "ready line {line:?}");
        let ready = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        Server {
            child,
            ready,
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    fn port(&self) -> u16 {
        self.ready["listening"]
            .as_u64()
            .unwrap()
            .try_into()
            .unwrap()
    }

    fn client(&self) -> Client {
        Client::connect(self.port())
    }

    /// Sends `signal` and waits for the exit.
    fn stop(self, signal: libc::c_int) -> Stopped {
        self.stop_within(signal, PATIENCE)
    }

    /// Sends `signal` and waits for the exit, failing after `patience`.
    fn stop_within(mut self, signal: libc::c_int, patience: Duration) -> Stopped {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on our own child, not yet waited for.
        assert_eq!(
            unsafe { libc::kill(pid, signal) },
            0,
            "kill({pid}, {signal})"
        );
        let deadline = Instant::now() + patience;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "still running {patience:?} after signal {signal}"
            );
            thread::sleep(Duration::from_millis(10));
        };
        let mut stdout = String::new();
        self.stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        Stopped {
            code: status.code(),
            stdout,
            stderr,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 connection, requests sent one after another on it.
struct Client {
    stream: BufReader<TcpStream>,
}

struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: String,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connects");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream: BufReader::new(stream),
        }
    }

    fn get(&mut self, path: &str) -> Reply {
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.stream.get_mut().write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        self.stream.read_line(&mut line).unwrap();
        let mut parts = line.splitn(3, ' ');
        assert_eq!(
            parts.next(),
            Some("HTTP/1.1"),
            "{path}: status line {line:?}"
        );
        let status = parts.next().unwrap().parse().unwrap();
        let mut headers = HashMap::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).unwrap();
            let header = line.trim_end_matches("\r\n");
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("a header line");
            headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
        }
        let length: usize = headers["content-length"].parse().unwrap();
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).unwrap();
        Reply {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    }
}

/// /proc/net/tcp{,6} (Linux): the socket listening on `port` must be bound
/// to 127.0.0.1 and nothing else.
fn assert_loopback_only(port: u16) {
    let suffix = format!(":{port:04X}");
    let mut found = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<_> = line.split_whitespace().collect();
            // 0A: LISTEN
            if fields.len() > 3 && fields[3] == "0A" && fields[1].ends_with(&suffix) {
                assert_eq!(fields[1], format!("0100007F{suffix}"), "{table}");
                found += 1;
            }
        }
    }
    assert_eq!(found, 1, "one listening socket on port {port}");
}

#[test]
fn serves_every_style_above_its_floor_then_exits_0_on_sigterm() {
    let server = Server::start(&["--port", "0", "--delay-ms", &DELAY_MS.to_string()]);
    let ready = &server.ready;
    assert!(server.port() > 0, "{ready}");
    assert_eq!(ready["styles"], serde_json::json!(STYLES), "{ready}");
    assert_eq!(ready["threads"], Value::Null, "{ready}");
    let runtime = ready["runtime"].as_str().unwrap();
    assert!(
        runtime.starts_with("tokio 1.") && runtime.contains("hyper 1."),
        "{ready}"
    );
    assert_eq!(ready.as_object().unwrap().len(), 4, "{ready}");
    assert_loopback_only(server.port());

    // Every request below on one connection: keep-alive holds throughout.
    let mut client = server.client();
    let reply = client.get("/health");
    assert_eq!((reply.status, reply.body.as_str()), (200, "ok"));

    for style in STYLES {
        for num in [0_i64, 7, 1000, (1 << 31) - 1] {
            let path = format!("/{style}/{num}");
            let start = Instant::now();
            let reply = client.get(&path);
            let took = start.elapsed();
            assert_eq!(reply.status, 200, "{path}: {}", reply.body);
            assert_eq!(reply.body, (2 * num + num / 2).to_string(), "{path}");
            assert_eq!(reply.headers["content-type"], "text/plain", "{path}");
            assert_ne!(
                reply.headers.get("connection").map(String::as_str),
                Some("close")
            );
            let floor = Duration::from_millis(DELAY_MS) * floor_delays(style);
            assert!(
                took >= floor,
                "{path} answered in {took:?}, below its floor {floor:?}"
            );
        }
    }

    for (path, status) in [
        ("/nope/5", 404),
        ("/sync", 404),
        ("/", 404),
        ("/health/1", 404),
        ("/SYNC/5", 404),
        ("/sync/abc", 400),
        ("/async/-1", 400),
        ("/when-all/+5", 400),
        ("/parallel/2147483648", 400),
        ("/sync-over-async/", 400),
        ("/sync/1.5", 400),
        ("/sync/99999999999999999999", 400),
    ] {
        let reply = client.get(path);
        assert_eq!(reply.status, status, "{path}: {}", reply.body);
        assert_eq!(reply.headers["content-type"], "text/plain", "{path}");
    }
    // Still the same connection, still answering.
    assert_eq!(client.get("/when-all/10").body, "25");

    let port = server.port();
    assert_eq!(
        server.stop(libc::SIGTERM),
        Stopped::clean(),
        "after SIGTERM"
    );
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "the port still accepts connections after exit"
    );
}

#[test]
fn threads_is_reported_and_sigint_exits_0() {
    let server = Server::start(&["--port", "0", "--delay-ms", "10", "--threads", "3"]);
    assert_eq!(server.ready["threads"], 3, "{}", server.ready);
    assert_eq!(server.client().get("/when-all/10").body, "25");
    assert_eq!(server.stop(libc::SIGINT), Stopped::clean(), "after SIGINT");
}

/// Requests in flight in every style (`sync` ones queued behind the one
/// worker, which each keeps asleep for 3 s) do not hold the exit back: the
/// signal is heard at once, and the handlers die with the process, silently.
#[test]
fn sigterm_exits_at_once_with_requests_in_flight() {
    let server = Server::start(&["--port", "0", "--delay-ms", "1000", "--threads", "1"]);
    let port = server.port();
    let mut connections = Vec::new();
    for style in [
        "sync",
        "sync",
        "sync",
        "sync-over-async",
        "parallel",
        "async",
        "when-all",
    ] {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        let request = format!("GET /{style}/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        connections.push(stream);
    }
    thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let stopped = server.stop_within(libc::SIGTERM, Duration::from_secs(2));
    assert_eq!(stopped, Stopped::clean(), "after {:?}", start.elapsed());
}

/// Two `sync` requests at once on a server with one worker thread: the
/// handler blocks the worker, so the second waits for the first (what
/// `--threads` sizes). Checked from below only.
#[test]
fn sync_with_one_worker_answers_one_request_at_a_time() {
    let server = Server::start(&[
        "--port",
        "0",
        "--delay-ms",
        &DELAY_MS.to_string(),
        "--threads",
        "1",
    ]);
    let port = server.port();
    let mut clients: Vec<_> = (0..2).map(|_| Client::connect(port)).collect();
    let start = Instant::now();
    let handles: Vec<_> = clients
        .drain(..)
        .map(|mut client| thread::spawn(move || (client.get("/sync/4").body, start.elapsed())))
        .collect();
    let answers: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let slowest = answers.iter().map(|(_, took)| *took).max().unwrap();
    assert!(answers.iter().all(|(body, _)| body == "10"), "{answers:?}");
    let floor = Duration::from_millis(DELAY_MS) * 6;
    assert!(
        slowest >= floor,
        "two sync requests on one worker in {slowest:?}, below {floor:?}"
    );
    assert_eq!(server.stop(libc::SIGTERM), Stopped::clean());
}

#[test]
fn a_port_in_use_exits_1_with_one_line() {
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = Command::new(BINARY)
        .args(["serve", "--port", &port, "--delay-ms", "10"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("in use"), "{stderr:?}");
}

#[test]
fn bad_arguments_exit_2_with_one_line_and_no_stdout() {
    for args in [
        &[][..],
        &["--port", "0"],
        &["--delay-ms", "10"],
        &["--port", "0", "--delay-ms", "0"],
        &["--port", "0", "--delay-ms", "-5"],
        &["--port", "0", "--delay-ms", "abc"],
        &["--port", "-1", "--delay-ms", "10"],
        &["--port", "65536", "--delay-ms", "10"],
        &["--port", "0x10", "--delay-ms", "10"],
        &["--port", "0", "--delay-ms", "10", "--threads", "0"],
        &["--port", "0", "--delay-ms", "10", "--threads", "-2"],
        &["--port", "0", "--delay-ms", "10", "--threads"],
        &["--port", "0", "--delay-ms", "99999999999999999999999"],
        &["--port", "0", "--delay-ms", "10", "--n", "5"],
        &["--port", "0", "--delay-ms", "10", "extra"],
    ] {
        let output = Command::new(BINARY)
            .arg("serve")
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "serve {args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "serve {args:?}");
        assert_eq!(stderr.lines().count(), 1, "serve {args:?}: {stderr:?}");
        assert!(
            stderr.starts_with("error: ") && stderr.ends_with('\n'),
            "{stderr:?}"
        );
    }
}

#[test]
fn serve_help_prints_usage_on_stdout_and_exits_0() {
    let output = Command::new(BINARY)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("Usage: rust-tokio serve --port P --delay-ms D"),
        "{stdout}"
    );
    // And the workloads' --help names the subcommand.
    let output = Command::new(BINARY).arg("--help").output().unwrap();
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .contains("rust-tokio serve --port P")
    );
}

/// The other binaries have no server: `serve` is an unknown workload there.
#[test]
fn the_other_binaries_refuse_serve() {
    for binary in [
        env!("CARGO_BIN_EXE_rust-async-std"),
        env!("CARGO_BIN_EXE_rust-smol"),
        env!("CARGO_BIN_EXE_rust-futures"),
        env!("CARGO_BIN_EXE_rust-threads"),
    ] {
        let output = Command::new(binary)
            .args(["serve", "--port", "0", "--delay-ms", "10"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{binary}");
        assert!(output.stdout.is_empty(), "{binary}");
        assert_eq!(
            String::from_utf8(output.stderr).unwrap().lines().count(),
            1,
            "{binary}"
        );
    }
}

/// The task workloads' binary links no HTTP server: `rust-tokio serve` execs
/// rust-tokio-serve, which alone holds hyper's code (its functions, as `nm`
/// lists them; the symbol table keeps only the names of hyper's object files
/// in rust-tokio).
#[test]
fn the_workloads_binary_has_no_hyper_code_the_server_binary_does() {
    let hyper_functions = |binary: &str| -> usize {
        let out = Command::new("nm").args(["-C", binary]).output().expect("nm (binutils) runs");
        assert!(out.status.success(), "nm {binary}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains(" hyper::")).count()
    };
    assert_eq!(hyper_functions(BINARY), 0, "rust-tokio links hyper");
    assert!(hyper_functions(env!("CARGO_BIN_EXE_rust-tokio-serve")) > 0);
}
