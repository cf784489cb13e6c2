//! The db run summary's table of the relations read most over the measured window
//! (`pg_statio_*`), and, when the relations span several tablespaces, their reads per
//! tablespace. The JSON has every relation.

use iogauge_model::db::relations::{by_tablespace, RelKind, RelationIo};
use std::fmt::Write as _;

/// Rows the table shows; the rest are counted in one line.
pub(crate) const TOP: usize = 8;

/// The top relations by blocks read/s: name, kind, tablespace, read/s, hit/s, hit share.
/// Nothing for documents without relations.
pub(crate) fn relations_text(s: &mut String, rels: &[RelationIo]) {
    let busy: Vec<&RelationIo> = rels
        .iter()
        .filter(|r| r.blks_read_s() + r.blks_hit_s() > 0.0)
        .collect();
    if busy.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nrelations by blocks read/s (pg_statio; no writes per relation in PostgreSQL):"
    );
    let width = busy
        .iter()
        .take(TOP)
        .map(|r| r.name().len())
        .max()
        .unwrap_or(0)
        .max(8);
    let _ = writeln!(
        s,
        "  {:<width$}  {:<5}  {:<12} {:>10} {:>10} {:>6}",
        "relation", "kind", "tablespace", "read/s", "hit/s", "hit%"
    );
    for r in busy.iter().take(TOP) {
        let (read, hit) = (r.blks_read_s(), r.blks_hit_s());
        let pct = if read + hit > 0.0 {
            format!("{:.1}", 100.0 * hit / (read + hit))
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "  {:<width$}  {:<5}  {:<12} {:>10.1} {:>10.1} {:>6}",
            r.name(),
            kind(r.kind),
            r.tablespace,
            read,
            hit,
            pct
        );
    }
    if busy.len() > TOP {
        let rest: f64 = busy[TOP..].iter().map(|r| r.blks_read_s()).sum();
        let _ = writeln!(
            s,
            "  … {} more relations, {rest:.1} reads/s (all in the JSON)",
            busy.len() - TOP
        );
    }
    let spaces = by_tablespace(rels);
    if spaces.len() > 1 {
        let parts: Vec<String> = spaces.iter().map(|(t, x)| format!("{t} {x:.1}")).collect();
        let _ = writeln!(s, "  reads/s by tablespace: {}", parts.join(", "));
    }
}

fn kind(k: RelKind) -> &'static str {
    match k {
        RelKind::Table => "table",
        RelKind::Index => "index",
        RelKind::Toast => "toast",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(name: &str, kind: RelKind, space: &str, read: f64, hit: f64) -> RelationIo {
        let heap = kind != RelKind::Index;
        RelationIo {
            schema: "iogauge1".into(),
            relation: name.into(),
            kind,
            tablespace: space.into(),
            heap_blks_read_s: heap.then_some(read),
            heap_blks_hit_s: heap.then_some(hit),
            idx_blks_read_s: (!heap).then_some(read),
            idx_blks_hit_s: (!heap).then_some(hit),
        }
    }

    #[test]
    fn at_most_eight_rows_then_the_rest_and_tablespaces() {
        let mut rels: Vec<RelationIo> = (0..10)
            .map(|i| {
                rel(
                    &format!("t{i}"),
                    RelKind::Table,
                    "pg_default",
                    100.0 - i as f64,
                    1.0,
                )
            })
            .collect();
        rels.insert(0, rel("cf1_pk", RelKind::Index, "fast", 300.0, 100.0));
        rels.push(rel("idle", RelKind::Table, "pg_default", 0.0, 0.0));
        let mut s = String::new();
        relations_text(&mut s, &rels);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 1 + 1 + 1 + TOP + 2, "{s}");
        assert!(
            lines[3].contains("iogauge1.cf1_pk") && lines[3].contains("index"),
            "{s}"
        );
        assert!(lines[3].ends_with("  300.0      100.0   25.0"), "{s}");
        assert!(s.contains("… 3 more relations, 276.0 reads/s"), "{s}");
        assert!(
            s.contains("reads/s by tablespace: pg_default 955.0, fast 300.0"),
            "{s}"
        );
        assert!(!s.contains("idle"), "{s}");
        let mut none = String::new();
        relations_text(&mut none, &[]);
        assert!(none.is_empty());
    }
}
