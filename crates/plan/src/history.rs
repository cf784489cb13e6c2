//! A history of periods from CSV: one row per period with a timestamp and read/write IOPS,
//! optionally read/write MB/s (an AWR, pg_stat or iostat export). Header names are mapped to
//! roles by [`Columns`]; every malformed row is an error naming its line and column, never
//! skipped.

use crate::limits::{WORKLOAD_IOPS, WORKLOAD_MBPS};
use crate::units::{Iops, MiBps};
use iogauge_stats::echo::{bounded, quoted};
use std::io::Read;
use std::str::FromStr;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Timestamp,
    ReadIops,
    WriteIops,
    ReadMbps,
    WriteMbps,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Timestamp,
        Role::ReadIops,
        Role::WriteIops,
        Role::ReadMbps,
        Role::WriteMbps,
    ];

    /// The role's name, which is also its default header.
    pub fn name(self) -> &'static str {
        match self {
            Role::Timestamp => "timestamp",
            Role::ReadIops => "read_iops",
            Role::WriteIops => "write_iops",
            Role::ReadMbps => "read_mbps",
            Role::WriteMbps => "write_mbps",
        }
    }
}

/// The header name of each role. Unmapped roles use their own name; the MB/s columns are
/// read when present (both or neither) and required when mapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    names: [String; 5],
    mapped: [bool; 5],
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            names: Role::ALL.map(|r| r.name().to_string()),
            mapped: [false; 5],
        }
    }
}

/// A value from the file or the command line is named by its start when it is long
/// (`echo::quoted`, `echo::bounded`): a 100,000-digit field was echoed whole.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ColumnsError {
    #[error("{} is not ROLE=HEADER (as in read_iops=PHYRDS_PS)", quoted(.0))]
    Syntax(String),
    #[error(
        "unknown role {}; roles are timestamp, read_iops, write_iops, read_mbps, write_mbps",
        quoted(.0)
    )]
    UnknownRole(String),
}

impl Columns {
    /// Maps one role: `read_iops=r/s`.
    pub fn set(&mut self, pair: &str) -> Result<(), ColumnsError> {
        let (role, header) = pair
            .split_once('=')
            .filter(|(r, h)| !r.trim().is_empty() && !h.trim().is_empty())
            .ok_or_else(|| ColumnsError::Syntax(pair.into()))?;
        let i = Role::ALL
            .iter()
            .position(|r| r.name().eq_ignore_ascii_case(role.trim()))
            .ok_or_else(|| ColumnsError::UnknownRole(role.trim().into()))?;
        self.names[i] = header.trim().into();
        self.mapped[i] = true;
        Ok(())
    }

    pub fn header(&self, role: Role) -> &str {
        &self.names[role as usize]
    }

    fn mapped(&self, role: Role) -> bool {
        self.mapped[role as usize]
    }
}

impl FromStr for Columns {
    type Err = ColumnsError;

    /// Comma-separated pairs: `timestamp=BEGIN_TIME,read_iops=PHYRDS_PS`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut c = Columns::default();
        for pair in s.split(',').filter(|p| !p.trim().is_empty()) {
            c.set(pair)?;
        }
        Ok(c)
    }
}

/// One period of a history.
#[derive(Clone, Debug, PartialEq)]
pub struct Period {
    /// Line of the CSV the row starts on (1 is the header).
    pub line: u64,
    /// As written in the file: any format, shown for drill-down.
    pub timestamp: String,
    pub read_iops: Iops,
    pub write_iops: Iops,
    pub read_mbps: Option<MiBps>,
    pub write_mbps: Option<MiBps>,
}

/// Why a history does not parse. Columns are counted from 1, as in a spreadsheet.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HistoryError {
    #[error("line 1: the file is empty; expected a header line with {expected}")]
    Empty { expected: String },
    #[error("line 1: no column {} for {role} (the header has {found}); name the column with --columns {role}=HEADER", quoted(header))]
    MissingColumn {
        role: &'static str,
        header: String,
        found: String,
    },
    #[error("line {line}: {found} fields where the header has {expected}")]
    FieldCount {
        line: u64,
        found: usize,
        expected: usize,
    },
    #[error(
        "line {line}, column {column} ({}): {} is not a number",
        bounded(header),
        quoted(value)
    )]
    NotANumber {
        line: u64,
        column: usize,
        header: String,
        value: String,
    },
    #[error(
        "line {line}, column {column} ({}): {} is negative",
        bounded(header),
        bounded(value)
    )]
    Negative {
        line: u64,
        column: usize,
        header: String,
        value: String,
    },
    #[error(
        "line {line}, column {column} ({}): {} is above {max}, the most iogauge plans for",
        bounded(header),
        bounded(value)
    )]
    TooLarge {
        line: u64,
        column: usize,
        header: String,
        value: String,
        max: f64,
    },
    #[error("line {line}: the header is the only line; expected one row per period after it")]
    NoRows { line: u64 },
    #[error("line {line}: {message}")]
    Malformed { line: u64, message: String },
}

fn csv_error(e: csv::Error) -> HistoryError {
    let line = e.position().map_or(0, |p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => {
            format!("field {} is not UTF-8 text", err.field() + 1)
        }
        csv::ErrorKind::Io(io) => format!("reading: {io}"),
        _ => e.to_string(),
    };
    HistoryError::Malformed { line, message }
}

/// Finds each role's column (0-based) in the header, case-insensitively.
fn locate(
    headers: &csv::StringRecord,
    columns: &Columns,
) -> Result<[Option<usize>; 5], HistoryError> {
    let find = |role: Role| {
        headers
            .iter()
            .position(|h| h.eq_ignore_ascii_case(columns.header(role)))
    };
    let missing = |role: Role| HistoryError::MissingColumn {
        role: role.name(),
        header: columns.header(role).into(),
        found: shown_headers(headers),
    };
    let mut at = [None; 5];
    for role in Role::ALL {
        at[role as usize] = find(role);
        let optional = matches!(role, Role::ReadMbps | Role::WriteMbps) && !columns.mapped(role);
        if at[role as usize].is_none() && !optional {
            return Err(missing(role));
        }
    }
    // MB/s comes in pairs: one without the other is a mistake, not a missing option.
    match (at[Role::ReadMbps as usize], at[Role::WriteMbps as usize]) {
        (Some(_), None) => Err(missing(Role::WriteMbps)),
        (None, Some(_)) => Err(missing(Role::ReadMbps)),
        _ => Ok(at),
    }
}

/// The header's names as a message lists them: quoted, each bounded, the first
/// [`LISTED_HEADERS`] and how many more.
fn shown_headers(headers: &csv::StringRecord) -> String {
    let mut shown: Vec<String> = headers.iter().take(LISTED_HEADERS).map(quoted).collect();
    if headers.len() > LISTED_HEADERS {
        shown.push(format!("… ({} columns)", headers.len()));
    }
    shown.join(", ")
}

/// The most header names a message lists.
const LISTED_HEADERS: usize = 12;

fn number(
    record: &csv::StringRecord,
    line: u64,
    column: usize,
    header: &str,
    max: f64,
) -> Result<f64, HistoryError> {
    let value = &record[column];
    if let Ok(v) = value.parse::<f64>() {
        if v.is_finite() && v > max {
            return Err(HistoryError::TooLarge {
                line,
                column: column + 1,
                header: header.into(),
                value: value.into(),
                max,
            });
        }
    }
    let err = |negative: bool| {
        let (line, column, header, value) = (line, column + 1, header.into(), value.into());
        if negative {
            HistoryError::Negative {
                line,
                column,
                header,
                value,
            }
        } else {
            HistoryError::NotANumber {
                line,
                column,
                header,
                value,
            }
        }
    };
    match value.parse::<f64>() {
        Ok(v) if !v.is_finite() => Err(err(false)),
        Ok(v) if v < 0.0 => Err(err(true)),
        Ok(v) => Ok(v),
        Err(_) => Err(err(false)),
    }
}

/// Parses a history. The first line is the header; fields are trimmed.
pub fn parse_history(input: impl Read, columns: &Columns) -> Result<Vec<Period>, HistoryError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(input);
    let headers = rdr.headers().map_err(csv_error)?.clone();
    if headers.iter().all(str::is_empty) {
        let expected = Role::ALL[..3]
            .iter()
            .map(|r| columns.header(*r))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(HistoryError::Empty { expected });
    }
    let at = locate(&headers, columns)?;
    let header_line = headers.position().map_or(1, |p| p.line());
    let mut periods = Vec::new();
    let mut record = csv::StringRecord::new();
    while rdr.read_record(&mut record).map_err(csv_error)? {
        let line = record.position().map_or(0, |p| p.line());
        // A line of blanks only (trimmed to one empty field) is not a period.
        if record.len() == 1 && record[0].is_empty() && headers.len() > 1 {
            continue;
        }
        if record.len() != headers.len() {
            return Err(HistoryError::FieldCount {
                line,
                found: record.len(),
                expected: headers.len(),
            });
        }
        let get = |role: Role| -> Result<Option<f64>, HistoryError> {
            let max = match role {
                Role::ReadMbps | Role::WriteMbps => WORKLOAD_MBPS.max,
                _ => WORKLOAD_IOPS.max,
            };
            at[role as usize]
                .map(|c| number(&record, line, c, &headers[c], max))
                .transpose()
        };
        periods.push(Period {
            line,
            timestamp: at[Role::Timestamp as usize].map_or_else(String::new, |c| record[c].into()),
            read_iops: Iops(get(Role::ReadIops)?.unwrap_or(0.0)),
            write_iops: Iops(get(Role::WriteIops)?.unwrap_or(0.0)),
            read_mbps: get(Role::ReadMbps)?.map(MiBps),
            write_mbps: get(Role::WriteMbps)?.map(MiBps),
        });
    }
    if periods.is_empty() {
        return Err(HistoryError::NoRows { line: header_line });
    }
    Ok(periods)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Vec<Period>, HistoryError> {
        parse_history(s.as_bytes(), &Columns::default())
    }

    #[test]
    fn rows_with_and_without_mbps() {
        let p = parse("timestamp,read_iops,write_iops\n09:00, 100 ,50\n09:05,200,0.5\n").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].line, p[0].timestamp.as_str()), (2, "09:00"));
        assert_eq!((p[0].read_iops, p[1].write_iops), (Iops(100.0), Iops(0.5)));
        assert_eq!(p[0].read_mbps, None);

        let p = parse("write_mbps,Timestamp,READ_IOPS,write_iops,read_mbps\n3,t,1,2,4\n").unwrap();
        assert_eq!(
            (p[0].read_mbps, p[0].write_mbps),
            (Some(MiBps(4.0)), Some(MiBps(3.0)))
        );
    }

    #[test]
    fn columns_map_other_exports() {
        let c: Columns =
            "timestamp=BEGIN_TIME, read_iops=r/s,write_iops=w/s,read_mbps=rMB/s,write_mbps=wMB/s"
                .parse()
                .unwrap();
        let p =
            parse_history("BEGIN_TIME,r/s,w/s,rMB/s,wMB/s\nx,1,2,3,4\n".as_bytes(), &c).unwrap();
        assert_eq!(p[0].write_mbps, Some(MiBps(4.0)));
        assert_eq!(
            "read_iops".parse::<Columns>().unwrap_err(),
            ColumnsError::Syntax("read_iops".into())
        );
        assert_eq!(
            "reads=r/s".parse::<Columns>().unwrap_err(),
            ColumnsError::UnknownRole("reads".into())
        );
    }

    #[test]
    fn every_malformed_input_names_its_line_and_column() {
        let h = "timestamp,read_iops,write_iops\n";
        let table: [(String, &str); 12] = [
            (
                format!("{h}a,1e308,2\n"),
                "line 2, column 2 (read_iops): 1e308 is above 1000000000",
            ),
            (
                "timestamp,read_iops,write_iops,read_mbps,write_mbps\nt,1,2,3,1e9\n".into(),
                "line 2, column 5 (write_mbps): 1e9 is above 100000000",
            ),
            (String::new(), "line 1: the file is empty"),
            ("\n\n".into(), "line 1: the file is empty"),
            (h.into(), "line 1: the header is the only line"),
            (
                "timestamp,reads,write_iops\nt,1,2\n".into(),
                "line 1: no column \"read_iops\" for read_iops",
            ),
            (
                format!("{h}a,1,2\nb,3\n"),
                "line 3: 2 fields where the header has 3",
            ),
            (
                format!("{h}a,1,2\nb,3,x\n"),
                "line 3, column 3 (write_iops): \"x\" is not a number",
            ),
            (
                format!("{h}a,-1,2\n"),
                "line 2, column 2 (read_iops): -1 is negative",
            ),
            (
                format!("{h}a,NaN,2\n"),
                "line 2, column 2 (read_iops): \"NaN\" is not a number",
            ),
            (
                format!("{h}a,,2\n"),
                "line 2, column 2 (read_iops): \"\" is not a number",
            ),
            (
                "timestamp,read_iops,write_iops,read_mbps\nt,1,2,3\n".into(),
                "no column \"write_mbps\" for write_mbps",
            ),
        ];
        for (input, want) in table {
            let e = parse(&input).unwrap_err().to_string();
            assert!(e.starts_with(want) || e.contains(want), "{input:?}: {e}");
        }
        let mut mapped = Columns::default();
        mapped.set("read_mbps=rMB/s").unwrap();
        let e = parse_history(format!("{h}t,1,2\n").as_bytes(), &mapped).unwrap_err();
        assert!(e.to_string().contains("--columns read_mbps=HEADER"), "{e}");
    }

    /// Issue #44 row 6: a 100,000-digit field (and header) was echoed whole.
    #[test]
    fn long_values_are_named_by_their_start() {
        let digits = "9".repeat(100_000);
        let head = "9".repeat(40);
        for (input, want) in [
            (
                format!("timestamp,read_iops,write_iops\na,{digits},2\n"),
                format!("\"{head}\"… (100000 characters) is not a number"),
            ),
            (
                format!(
                    "timestamp,read_iops,write_iops\na,-1.{},2\n",
                    "0".repeat(99_997)
                ),
                format!("-1.{}… (100000 characters) is negative", "0".repeat(37)),
            ),
            (
                format!("timestamp,{digits},write_iops\nt,1,2\n"),
                format!("\"{head}\"… (100000 characters)"),
            ),
        ] {
            let e = parse(&input).unwrap_err().to_string();
            assert!(
                e.contains(&want) && e.len() < 400,
                "{}",
                &e[..e.len().min(400)]
            );
        }
        let many: Vec<String> = (0..1000).map(|i| format!("c{i}")).collect();
        let e = parse(&format!("{}\n1\n", many.join(",")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("… (1000 columns)") && e.len() < 400, "{e}");
        let e = format!("{}=x", "r".repeat(1000))
            .parse::<Columns>()
            .unwrap_err();
        assert!(e.to_string().len() < 200, "{e}");
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_line() {
        let mut bytes = b"timestamp,read_iops,write_iops\nt,1,2\nt,".to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe]);
        bytes.extend_from_slice(b",2\n");
        let e = parse_history(&bytes[..], &Columns::default()).unwrap_err();
        assert_eq!(
            e,
            HistoryError::Malformed {
                line: 3,
                message: "field 2 is not UTF-8 text".into()
            }
        );
    }
}
