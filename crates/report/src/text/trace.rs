//! A trace's text (`iogauge capture`, `iogauge traces show`): what was traced and kept, what
//! the kernel could not hand over, and the figures a replay is judged on — rate, mix, sizes,
//! locality, arrivals, depth, flags and who issued the requests.

use iogauge_iolog::{Header, Summary, Trailer};
use iogauge_model::units::fmt_size;
use std::fmt::Write as _;

/// The whole text of trace `name`.
pub fn trace_text(name: &str, header: &Header, trailer: Option<&Trailer>, s: &Summary) -> String {
    let mut o = String::new();
    let devices: Vec<String> = header
        .devices
        .iter()
        .zip(s.per_device.iter().chain(std::iter::repeat(&0)))
        .map(|(d, n)| format!("{} ({}:{}, {n} requests)", d.name, d.major, d.minor))
        .collect();
    let _ = writeln!(
        o,
        "{name}: {}{}, {:.1} s, on {}",
        match header.origin {
            iogauge_iolog::Origin::Iogauge => "captured by iogauge",
            iogauge_iolog::Origin::Blktrace => "a blktrace",
            iogauge_iolog::Origin::FioIolog => "a fio iolog",
        },
        header
            .started_at
            .as_deref()
            .map_or(String::new(), |t| format!(" from {t}")),
        s.duration_s,
        devices.join(", ")
    );
    if let Some(f) = &header.filter {
        let _ = writeln!(o, "  kept: {f}");
    }
    match trailer {
        None => {
            let _ = writeln!(
                o,
                "  CUT SHORT: no end record; the requests up to the last whole chunk are here"
            );
        }
        Some(t) => {
            let dropped = t.dropped.map_or("not known".to_string(), |d| d.to_string());
            let others = t.others.map_or(String::new(), |n| {
                format!("; {n} requests of others on these devices left out")
            });
            let _ = writeln!(
                o,
                "  lost: {dropped} (the kernel's ring was full when they came){others}"
            );
        }
    }
    let _ = writeln!(
        o,
        "  requests {}: reads {}, writes {}, flushes {}, discards {}; {} read, {} written",
        s.requests,
        s.reads,
        s.writes,
        s.flushes,
        s.discards,
        fmt_size(s.bytes_read.0),
        fmt_size(s.bytes_written.0)
    );
    o.push_str(&figures(s));
    o
}

/// The figures a replay is judged on: rate, mix, sizes, locality, arrivals, depth, flags,
/// issuers.
fn figures(s: &Summary) -> String {
    let mut o = String::new();
    if let (Some(iops), Some(r)) = (s.iops, s.read_share) {
        let _ = writeln!(
            o,
            "  {:.1} reads and writes/s, {:.1}% reads",
            iops.0,
            r * 100.0
        );
    }
    let data = (s.reads + s.writes).max(1) as f64;
    let sizes: Vec<String> = s
        .sizes
        .iter()
        .take(6)
        .map(|c| {
            format!(
                "{} {:.1}%",
                fmt_size(c.size.0),
                c.requests as f64 * 100.0 / data
            )
        })
        .collect();
    if !sizes.is_empty() {
        let q = |b: Option<iogauge_stats::Bytes>| b.map_or("-".into(), |b| fmt_size(b.0));
        let _ = writeln!(
            o,
            "  sizes: {} (p50 {}, p90 {}, p99 {})",
            sizes.join(", "),
            q(s.size_p50),
            q(s.size_p90),
            q(s.size_p99)
        );
    }
    if let (Some(l), Some(q)) = (s.locality, s.sequential) {
        let _ = writeln!(
            o,
            "  locality: {:.1}% within 1 MiB of the previous request's end on its device, {:.1}% sequential",
            l * 100.0,
            q * 100.0
        );
    }
    if let (Some(m), Some(p50), Some(p99)) =
        (s.interarrival_mean, s.interarrival_p50, s.interarrival_p99)
    {
        let us = |n: iogauge_stats::Nanos| n.0 as f64 / 1e3;
        let _ = write!(
            o,
            "  arrivals: every {:.1} µs on average (p50 {:.1}, p99 {:.1} µs)",
            us(m),
            us(p50),
            us(p99)
        );
        if let Some(cv) = s.interarrival_cv {
            let _ = write!(o, ", CV {cv:.2}");
        }
        if let Some(p) = s.peak_100ms_over_mean {
            let _ = write!(o, ", busiest 100 ms at {p:.1}× the mean rate");
        }
        o.push('\n');
    }
    match (s.in_flight_mean, s.in_flight_max) {
        (Some(m), Some(x)) => {
            let _ = writeln!(o, "  in flight at issue: mean {m:.1}, max {x}");
        }
        _ => {
            let _ = writeln!(o, "  in flight at issue: not measured");
        }
    }
    let _ = writeln!(
        o,
        "  flags: sync {}, FUA {}, preflush {}",
        s.sync, s.fua, s.preflush
    );
    let who: Vec<String> = s
        .top_issuers
        .iter()
        .map(|t| {
            let name = t.comm.as_deref().unwrap_or("?");
            let pid = t.pid.map_or(String::new(), |p| format!(" {p}"));
            format!(
                "{name}{pid} {:.1}%",
                t.requests as f64 * 100.0 / s.requests.max(1) as f64
            )
        })
        .collect();
    if !who.is_empty() {
        let _ = writeln!(o, "  issued by: {}", who.join(", "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_iolog::{summarise, Device, Flags, Op, Origin, Request};

    #[test]
    fn a_trace_says_what_it_holds_and_what_it_lost() {
        let header = Header {
            origin: Origin::Iogauge,
            started_at: Some("2026-11-29T13:00:00Z".into()),
            devices: vec![Device {
                name: "loop3".into(),
                major: 7,
                minor: 3,
                size: None,
                logical_block: None,
            }],
            filter: Some("the requests of PID 42 and its children".into()),
        };
        let reqs: Vec<Request> = (0..100u64)
            .map(|i| Request {
                at_ns: i * 1_000_000,
                device: 0,
                offset: i * 8192,
                len: 8192,
                op: if i % 4 == 0 { Op::Write } else { Op::Read },
                flags: Flags::NONE,
                issuer: Request::UNKNOWN_ISSUER,
                in_flight: 0,
            })
            .collect();
        let s = summarise(1, &reqs, 100_000_000);
        let trailer = Trailer {
            duration_ns: 100_000_000,
            requests: 100,
            dropped: Some(0),
            others: Some(7),
        };
        let t = trace_text("trace 1", &header, Some(&trailer), &s);
        assert!(t.contains("loop3 (7:3, 100 requests)"), "{t}");
        assert!(t.contains("kept: the requests of PID 42"), "{t}");
        assert!(
            t.contains("lost: 0 ") && t.contains("7 requests of others"),
            "{t}"
        );
        assert!(t.contains("75.0% reads"), "{t}");
        assert!(t.contains("sizes: 8k 100.0%"), "{t}");
        assert!(
            t.contains("100.0% sequential") || t.contains("99.0% sequential"),
            "{t}"
        );
        assert!(t.contains("in flight at issue: not measured"), "{t}");
        let cut = trace_text("trace 1", &header, None, &s);
        assert!(cut.contains("CUT SHORT"), "{cut}");
    }
}
