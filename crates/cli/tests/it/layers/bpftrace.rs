//! The independent instrument: bpftrace (Debian's package) on the same tracepoints, with bcc
//! biolatency's method — start times in maps keyed by (device, sector), insert → issue and
//! issue → complete printed per request — run beside iogauge.

use iogauge_model::layers::{bucket_of, StageHist};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The stage times bpftrace saw for one device's reads, ns.
pub struct Seen {
    pub queue: Vec<u64>,
    pub device: Vec<u64>,
}

/// A bpftrace process tracing reads on the device `dev_t` (the kernel's MKDEV), its output
/// read by a thread as it comes.
pub struct Bpftrace {
    child: Child,
    out: std::thread::JoinHandle<String>,
}

/// The script: a request issued without an insert spent 0 in the queue, as iogauge counts
/// it. Times are counted in maps by 100 ns step and printed once at the end (a line per
/// request would cost each event a few µs, which the tracer running after it would see).
fn script(dev: u32) -> String {
    format!(
        r#"
BEGIN {{ printf("{READY}\n"); }}
tracepoint:block:block_rq_insert /args->dev == {dev} && strncmp(args->rwbs, "R", 1) == 0/ {{
    @ins[args->sector] = nsecs;
}}
tracepoint:block:block_rq_issue /args->dev == {dev} && strncmp(args->rwbs, "R", 1) == 0/ {{
    $t = @ins[args->sector];
    if ($t > 0) {{ @q[(nsecs - $t) / {STEP}] = count(); delete(@ins[args->sector]); }}
    else {{ @q[0] = count(); }}
    @iss[args->sector] = nsecs;
}}
tracepoint:block:block_rq_complete /args->dev == {dev} && strncmp(args->rwbs, "R", 1) == 0/ {{
    $t = @iss[args->sector];
    if ($t > 0) {{ @d[(nsecs - $t) / {STEP}] = count(); delete(@iss[args->sector]); }}
}}
END {{ clear(@ins); clear(@iss); }}
"#
    )
}

/// The script for the job's own reads only: a read bio queued on `dev` by one of iogauge's
/// psync workers (threads named `iogauge-wN`) marks its sector; that request's issue →
/// complete is timed, other processes' requests on the same device are not (bpftrace
/// filtered to the job, beside a neighbour loading the device).
fn script_for_job(dev: u32) -> String {
    format!(
        r#"
BEGIN {{ printf("{READY}\n"); }}
tracepoint:block:block_bio_queue /args->dev == {dev} && strncmp(args->rwbs, "R", 1) == 0 && strncmp(comm, "iogauge-w", 9) == 0/ {{
    @mine[args->sector] = 1;
}}
tracepoint:block:block_rq_issue /args->dev == {dev} && @mine[args->sector] == 1/ {{
    @iss[args->sector] = nsecs;
}}
tracepoint:block:block_rq_complete /args->dev == {dev} && @mine[args->sector] == 1/ {{
    $t = @iss[args->sector];
    if ($t > 0) {{ @d[(nsecs - $t) / {STEP}] = count(); }}
    delete(@iss[args->sector]);
    delete(@mine[args->sector]);
}}
END {{ clear(@mine); clear(@iss); }}
"#
    )
}

/// The maps' step, ns.
const STEP: u64 = 100;

/// What the script's BEGIN probe prints: bpftrace fires BEGIN once every probe is attached,
/// seconds after it prints "Attaching N probes" here (reads in those seconds went unseen:
/// it kept 2 reads in 3 of a run started on that line).
const READY: &str = "probes attached";

impl Bpftrace {
    /// Starts bpftrace on `dev` and waits until its probes are attached. bpftrace missing
    /// fails the test loudly: `scripts/test` installs it.
    pub fn start(dir: &Path, dev: u32) -> Bpftrace {
        Bpftrace::start_script(dir, &script(dev))
    }

    /// [`Bpftrace::start`] timing the job's own reads only ([`script_for_job`]).
    pub fn start_for_job(dir: &Path, dev: u32) -> Bpftrace {
        Bpftrace::start_script(dir, &script_for_job(dev))
    }

    fn start_script(dir: &Path, text: &str) -> Bpftrace {
        let bt = dir.join("stages.bt");
        std::fs::write(&bt, text).unwrap();
        let mut child = Command::new("bpftrace")
            .env("BPFTRACE_MAP_KEYS_MAX", "1000000")
            .arg(&bt)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bpftrace (Debian package bpftrace) is installed: scripts/test installs it");
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        // bpftrace writes its maps to stdout at the end, flushed line by line while it runs
        // (a file given with -o is written only at the end).
        let out = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line == READY {
                    let _ = tx.send(());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = child.kill();
            let mut err = String::new();
            let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
            panic!("bpftrace never attached: {err}");
        }
        Bpftrace { child, out }
    }

    /// Stops bpftrace (SIGINT, as a user would) and returns what it saw.
    pub fn stop(mut self) -> Seen {
        // SAFETY: kill with a pid of our own child and a valid signal number.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let st = self.child.wait().expect("bpftrace ends on SIGINT");
        assert!(st.success(), "bpftrace: {st}");
        let text = self.out.join().expect("the reader thread");
        let mut seen = Seen {
            queue: Vec::new(),
            device: Vec::new(),
        };
        // `@q[STEPS]: COUNT`: each request at the middle of its step.
        for line in text.lines() {
            let Some((key, n)) = line.split_once("]: ") else {
                continue;
            };
            let (Some((map, steps)), Ok(n)) = (key.split_once('['), n.trim().parse::<usize>())
            else {
                continue;
            };
            let Ok(steps) = steps.parse::<u64>() else {
                continue;
            };
            let ns = steps * STEP + STEP / 2;
            match map {
                "@q" => seen.queue.extend(std::iter::repeat_n(ns, n)),
                "@d" => seen.device.extend(std::iter::repeat_n(ns, n)),
                _ => {}
            }
        }
        seen
    }
}

/// The median of `v`, ns, read as iogauge reads its own: through the same buckets
/// (`bucket_of`, interpolated within the bucket, up to 6% wide), so the comparison is of the
/// two instruments' times, not of a histogram with the exact values.
pub fn median(v: &[u64]) -> f64 {
    assert!(!v.is_empty(), "bpftrace saw no request");
    let mut by_bucket = std::collections::BTreeMap::<u32, u64>::new();
    for &ns in v {
        *by_bucket.entry(bucket_of(ns)).or_default() += 1;
    }
    let h = StageHist {
        count: v.len() as u64,
        sum_ns: v.iter().sum(),
        buckets: by_bucket.into_iter().collect(),
    };
    h.quantile_ns(0.5).expect("not empty")
}
