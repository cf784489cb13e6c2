//! The page every HTML report is: its one stylesheet (layout and typography, tables, and the
//! classes the hand-written SVG charts use, so each mark carries a short class, not its full
//! style), the escaping of every text put in it, and the colours that tell results apart.

/// Case colours, in case order (Tableau 10: distinct, colour-blind tolerant, prints well).
pub(crate) const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Colour of the `i`-th case (cycles past ten).
pub(crate) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Appends `s` escaped for HTML text and for attribute values in double or single quotes;
/// a character that would reorder or hide text (a bidi override in a stored label, a line
/// separator: `echo::is_unprintable`) as its Rust escape, but the line feeds and tabs of
/// preformatted text.
pub(crate) fn esc(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if iogauge_model::echo::is_unprintable(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
}

/// Starts an HTML report: the head with `title` and [`CSS`], then `<body><main>`.
pub(crate) fn open_page(out: &mut String, title: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    out.push_str("<title>");
    esc(out, title);
    out.push_str("</title><style>");
    out.push_str(CSS);
    out.push_str("</style></head><body><main>\n");
}

/// Ends what [`open_page`] started.
pub(crate) fn close_page(out: &mut String) {
    out.push_str("</main></body></html>\n");
}

/// Inlined in `<style>`; system fonts only, nothing fetched.
pub(crate) const CSS: &str = r#"
:root{--fg:#1f2328;--mu:#59636e;--bd:#d1d9e0;--bg2:#f6f8fa;--ac:#0969da}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1240px;margin:0 auto;padding:28px 28px 72px}
h1{font-size:26px;margin:0 0 6px;letter-spacing:-.01em}
h2{font-size:19px;margin:40px 0 8px;padding-bottom:5px;border-bottom:1px solid var(--bd)}
h3{font-size:15px;margin:24px 0 8px}
h4{font-size:14px;margin:18px 0 2px}
.sum{color:var(--mu);margin:0 0 10px}.sum b{color:var(--fg);font-weight:600}
.note{color:var(--mu);margin:4px 0 12px;max-width:90ch}
nav{margin:14px 0 0;padding:8px 0;border-top:1px solid var(--bd);border-bottom:1px solid var(--bd)}
nav a{margin-right:18px;color:var(--ac);text-decoration:none}nav a:hover{text-decoration:underline}
ul.warn{background:#fff8c5;border:1px solid #e6d28a;border-radius:6px;padding:8px 14px 8px 32px;margin:12px 0}
ul.warn li{margin:2px 0}
ol.find{border:1px solid var(--bd);border-radius:6px;padding:8px 14px 8px 34px;margin:12px 0}
ol.find li{margin:3px 0}ol.find .ev{color:var(--mu)}
.tag{display:inline-block;font-size:11px;line-height:16px;background:#ddf4ff;color:var(--ac);border-radius:8px;padding:0 7px;margin-left:6px;font-weight:500;vertical-align:1px}
.warn-tag{background:#fff1c2;color:#7d4e00}
.u{color:var(--mu);font-weight:400}
.tw{overflow-x:auto}
table{border-collapse:collapse;font-size:12.5px;font-variant-numeric:tabular-nums}
th,td{padding:4px 7px;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap;vertical-align:top}
thead th{font-weight:600;background:var(--bg2);border-bottom:1px solid var(--bd)}
th.l,td.l{text-align:left}
td.v{white-space:normal;text-align:left;min-width:230px}
td.l{white-space:normal;min-width:200px}
.ci{display:block;font-size:11px;color:var(--mu)}
tr.mh th{background:#fff;text-align:left;font-size:14px;padding-top:16px;border-bottom:2px solid var(--bd)}
table.res tbody tr:hover td{background:#f6f8fa}
.flag{color:#cf222e}
.better{color:#1a7f37}.worse{color:#cf222e}.same{color:var(--mu)}.few{color:var(--mu);font-style:italic}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:7px}
.charts{display:flex;flex-wrap:wrap;gap:14px 20px;align-items:flex-start}
svg.chart{display:block;max-width:100%;height:auto;border:1px solid #eaeef2;border-radius:6px;background:#fff;margin:6px 0}
.chart text{font-size:11px;fill:#3d444d}
.chart .at{font-weight:600;fill:#59636e}
.chart .nd{fill:#8c959f;font-style:italic;font-size:13px}
.chart .vl{font-weight:600;fill:#1f2328;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.chart .in{fill:#fff;font-weight:600}
.chart .ax line,.chart path.ax{stroke:#8c959f;fill:none}
.chart .ax line.gr{stroke:#eef1f4}
.chart .s{fill:#fff;stroke:#24292f;stroke-width:1.2}
.chart .o{stroke:#cf222e;stroke-width:2;fill:none}
.chart .eb{stroke:#24292f;stroke-width:1.4;fill:none}
.chart .bl{stroke:#444;stroke-width:1.2;stroke-dasharray:5 4;fill:none}
.chart .ln{fill:none;stroke-width:1.8;stroke-linejoin:round;stroke-linecap:round}
.chart .iops{stroke:#4e79a7}.chart .p99{stroke:#e15759;stroke-width:1.2}
.chart .dev{stroke:#59a14f;stroke-width:1.4}.chart .util{stroke:#b07aa1;stroke-width:1.4;stroke-dasharray:5 3}
.chart .ramp{fill:#ebebeb}.chart .steady{fill:#e9f5e3}
.chart .tk{stroke:#24292f;stroke-width:1.5}
details{border:1px solid var(--bd);border-radius:6px;margin:8px 0;padding:0 14px}
details[open]{padding-bottom:10px}
summary{cursor:pointer;padding:9px 0;font-weight:600}
.cmd code,pre.file{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.cmd code{background:var(--bg2);padding:2px 6px;border-radius:4px;word-break:break-all}
.figs{margin:2px 0 6px;color:var(--mu);font-size:13px}.figs b{color:var(--fg);font-weight:600}
pre.file{background:var(--bg2);border:1px solid var(--bd);border-radius:6px;padding:12px 14px;overflow-x:auto}
table.env th{text-align:left;color:var(--mu);font-weight:500;background:none;padding-right:24px}
table.env td{text-align:left;white-space:normal}
@media print{details{break-inside:avoid}nav{display:none}}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        let mut s = String::new();
        esc(&mut s, r#"<a href="x">'&'</a>"#);
        assert_eq!(s, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }
}
