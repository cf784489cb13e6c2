//! What limits the storage, in words: a document's findings as the summaries print them (the
//! top three, ranked by the share of the time they explain, with their key figure and the
//! first one's next step), one finding in a line for campaigns and `compare`, and the
//! sentence that says where two cases' limits differ.

use iogauge_model::finding::{during_text, rank, Evidence, Finding, Kind, Layer};
use std::fmt::Write as _;

/// Most findings a text summary lists.
pub(crate) const SHOWN: usize = 3;

/// What a healthy result says.
pub(crate) const HEALTHY: &str = "no limit found below the load offered";

/// The layer as a sentence names it ("limited by the OS queue").
pub(crate) fn layer_phrase(l: Layer) -> &'static str {
    match l {
        Layer::None => "nothing below the load offered",
        Layer::Cpu => "the CPU",
        Layer::PageCache => "the page cache",
        Layer::ReadAhead => "the kernel's read-ahead",
        Layer::Throttle => "a throttle before the queue",
        Layer::OsQueue => "the OS queue",
        Layer::Device => "the device",
        Layer::WriteCache => "a write cache below the device",
        Layer::Layout => "the layout's extra writes",
        Layer::Members => "one member doing the work",
        Layer::Span => "a short-stroked span",
        Layer::Ranks => "the job's slowest ranks",
        Layer::Neighbours => "other processes on the same devices",
        Layer::DbIo => "the database's I/O waits",
        Layer::DbLocks => "the database's lock waits",
        Layer::DbWal => "the database's WAL",
        Layer::DbWrites => "the database's checkpoints and backend writes",
    }
}

/// `findings` ranked as shown (highest impact first), the healthy "no limit" left out when
/// some layer limits.
pub(crate) fn ranked(findings: &[Finding]) -> Vec<Finding> {
    let mut v = findings.to_vec();
    rank(&mut v);
    if v.iter().any(|f| f.layer != Layer::None) {
        v.retain(|f| f.layer != Layer::None);
    }
    v
}

/// A figure with its unit: `98%`, `3.2 ms`, `0.41×`.
pub(crate) fn evidence_text(e: &Evidence) -> String {
    let v = e.value;
    let n = if !v.is_finite() {
        "-".to_string()
    } else if v.abs() >= 100.0 || e.unit == "%" {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    let unit = match e.unit.as_str() {
        "" => String::new(),
        u @ ("%" | "×" | "x") => u.to_string(),
        u => format!(" {u}"),
    };
    format!("{} {n}{unit}", e.what)
}

/// One finding in a line: when it held (where only part of the run), its title, the share it
/// explains of `time` ("I/O time", "DB time") and its first figure; the healthy finding is
/// its title alone.
pub(crate) fn finding_line(f: &Finding, time: &str) -> String {
    if f.layer == Layer::None {
        return if f.title.is_empty() {
            HEALTHY.to_string()
        } else {
            f.title.clone()
        };
    }
    let when = during_text(&f.during).map_or(String::new(), |t| format!("{t}: "));
    let mut s = format!("{when}{} ({:.0}% of the {time}", f.title, f.impact * 100.0);
    if let Some(e) = f.evidence.first() {
        let _ = write!(s, "; {}", evidence_text(e));
    }
    s.push(')');
    s
}

/// What a finding is, before its line, when not a problem (ADDM's types): `[follows from
/// device-saturated] `, `[information] `.
fn typed(f: &Finding) -> String {
    match (f.kind, &f.follows) {
        (Kind::Symptom, Some(p)) => format!("[follows from {p}] "),
        (Kind::Information, _) if f.layer != Layer::None => "[information] ".to_string(),
        _ => String::new(),
    }
}

/// The summary's lines: `limit:` and the top finding (with what removing it saves), `then:`
/// the next two (each typed: a symptom names its problem), and `next:` the first one's next
/// step; a healthy result's one line. Empty without findings (a document
/// stored before they existed).
pub(crate) fn findings_text(findings: &[Finding], time: &str) -> String {
    let v = ranked(findings);
    let mut s = String::new();
    let Some(first) = v.first() else {
        return s;
    };
    if first.layer == Layer::None {
        let _ = writeln!(s, "finding: {}", finding_line(first, time));
        return s;
    }
    for (i, f) in v.iter().take(SHOWN).enumerate() {
        let head = if i == 0 { "limit:" } else { "  then:" };
        let _ = writeln!(s, "{head} {}{}", typed(f), finding_line(f, time));
        if let (0, Some(b)) = (i, &f.benefit) {
            let _ = writeln!(s, "  {b}");
        }
    }
    if !first.next.is_empty() {
        let _ = writeln!(s, "  next: {}", first.next);
    }
    s
}

/// "case B is limited by the OS queue where A was limited by the device", when the top
/// findings of `a` and `b` name different layers; `None` when they agree or one has none.
pub(crate) fn contrast(a: (&str, Option<&Finding>), b: (&str, Option<&Finding>)) -> Option<String> {
    let (fa, fb) = (a.1?, b.1?);
    if fa.layer == fb.layer {
        return None;
    }
    let is = |f: &Finding| match f.layer {
        Layer::None => "finds no limit below the load offered".to_string(),
        l => format!("is limited by {}", layer_phrase(l)),
    };
    let was = |f: &Finding| match f.layer {
        Layer::None => "found none".to_string(),
        l => format!("was limited by {}", layer_phrase(l)),
    };
    Some(format!("{} {} where {} {}", b.0, is(fb), a.0, was(fa)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn finding(layer: Layer, impact: f64, title: &str) -> Finding {
        Finding {
            rule: format!("{layer:?}"),
            layer,
            title: title.into(),
            impact,
            evidence: vec![Evidence::new("vda %util", 97.6, "%")],
            next: format!("next for {title}"),
            source: "the USE method".into(),
            ..Default::default()
        }
    }

    #[test]
    fn top_three_ranked_with_the_first_ones_next_step() {
        let v = vec![
            finding(Layer::Cpu, 0.05, "cpu"),
            finding(Layer::Device, 0.62, "the device is saturated"),
            finding(Layer::OsQueue, 0.2, "queue"),
            finding(Layer::PageCache, 0.01, "cache"),
            finding(Layer::None, 0.0, HEALTHY),
        ];
        let t = findings_text(&v, "I/O time");
        assert_eq!(
            t,
            "limit: the device is saturated (62% of the I/O time; vda %util 98%)\n  \
             then: queue (20% of the I/O time; vda %util 98%)\n  \
             then: cpu (5% of the I/O time; vda %util 98%)\n  \
             next: next for the device is saturated\n"
        );
    }

    /// A finding of part of the run says when it held.
    #[test]
    fn a_located_finding_says_when() {
        let mut f = finding(Layer::Device, 0.3, "vda is the limit");
        f.during = vec![iogauge_model::finding::Stretch {
            from_s: 40.0,
            to_s: 70.0,
        }];
        assert_eq!(
            finding_line(&f, "I/O time"),
            "t = 40–70 s: vda is the limit (30% of the I/O time; vda %util 98%)"
        );
    }

    /// ADDM's types in the summary: the problem's benefit under it, a symptom naming its
    /// problem, information tagged.
    #[test]
    fn typed_findings_say_what_they_are() {
        let mut top = finding(Layer::Neighbours, 0.5, "others did 80% of vda's requests");
        top.benefit = Some("removing it saves ~50% of DB time".into());
        let mut reads = finding(Layer::DbIo, 0.4, "reads");
        reads.kind = Kind::Symptom;
        reads.follows = Some("neighbours".into());
        let mut cpu = finding(Layer::Cpu, 0.05, "cpu");
        cpu.kind = Kind::Information;
        let t = findings_text(&[cpu, reads, top], "DB time");
        assert_eq!(
            t,
            "limit: others did 80% of vda's requests (50% of the DB time; vda %util 98%)\n  \
             removing it saves ~50% of DB time\n  \
             then: [follows from neighbours] reads (40% of the DB time; vda %util 98%)\n  \
             then: [information] cpu (5% of the DB time; vda %util 98%)\n  \
             next: next for others did 80% of vda's requests\n"
        );
    }

    #[test]
    fn healthy_is_one_line_and_none_is_nothing() {
        let t = findings_text(&[finding(Layer::None, 0.0, "")], "I/O time");
        assert_eq!(t, format!("finding: {HEALTHY}\n"));
        assert_eq!(findings_text(&[], "I/O time"), "");
    }

    #[test]
    fn evidence_units() {
        assert_eq!(evidence_text(&Evidence::new("q", 0.413, "×")), "q 0.41×");
        assert_eq!(evidence_text(&Evidence::new("d", 3.25, "ms")), "d 3.25 ms");
        assert_eq!(evidence_text(&Evidence::new("n", 1234.0, "")), "n 1234");
    }

    #[test]
    fn contrast_only_when_layers_differ() {
        let (d, q) = (
            finding(Layer::Device, 0.6, "d"),
            finding(Layer::OsQueue, 0.5, "q"),
        );
        assert_eq!(
            contrast(("A", Some(&d)), ("B", Some(&q))).as_deref(),
            Some("B is limited by the OS queue where A was limited by the device")
        );
        assert_eq!(contrast(("A", Some(&d)), ("B", Some(&d))), None);
        assert_eq!(contrast(("A", None), ("B", Some(&d))), None);
    }
}
