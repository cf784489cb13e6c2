//! Value parsers shared by every subcommand's flags, so a kind of value is refused in one
//! wording everywhere: whole numbers (a range, and what was wrong: `1e1`, `0x10`, `2^64`)
//! and the items of a path list (an empty one from a stray comma). A leaf, as `usage`.

use iogauge_model::units::parse_whole;
use std::path::PathBuf;

/// A whole number from `lo` to `hi`, in plain decimal digits (clap's own parser said
/// "invalid digit found in string" for `--qd 1e1`, and nothing of the range for `--seed
/// 2^64`).
pub fn whole<T>(lo: T, hi: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: Copy + Into<u64> + TryFrom<u64> + Send + Sync + 'static,
{
    let (lo, hi) = (lo.into(), hi.into());
    move |s: &str| {
        let v = parse_whole(s, lo, hi)?;
        // Within lo..=hi, both of type T: the conversion cannot fail.
        T::try_from(v).map_err(|_| format!("above {hi}"))
    }
}

/// A stored result's id (`iogauge history` lists them): a whole number from 1.
pub fn result_id(s: &str) -> Result<i64, String> {
    let v = parse_whole(s, 1, i64::MAX as u64)?;
    Ok(v as i64)
}

/// One path of a comma-separated list (`--target A,B`): clap hands each item here after the
/// split, so an empty one is a stray comma (`A,`, `A,,B`, `,`) or an empty argument.
pub fn path_item(s: &str) -> Result<PathBuf, String> {
    if s.is_empty() {
        return Err("empty path; give PATH[,PATH...] with no empty item (a stray comma?)".into());
    }
    Ok(PathBuf::from(s))
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_numbers_in_the_flag_type() {
        let qd = super::whole(1u32, 4096);
        assert_eq!(qd("32"), Ok(32));
        assert!(qd("1e1").unwrap_err().contains("decimal digits"));
        assert!(qd("0").unwrap_err().contains("from 1 to 4096"));
        let seed = super::whole(0u64, u64::MAX);
        assert_eq!(seed("18446744073709551615"), Ok(u64::MAX));
        assert!(seed("18446744073709551616")
            .unwrap_err()
            .contains("above 18446744073709551615"));
        assert_eq!(super::result_id("7"), Ok(7));
        assert!(super::result_id("0").is_err());
    }

    #[test]
    fn empty_list_items() {
        assert!(super::path_item("").unwrap_err().contains("stray comma"));
        assert_eq!(
            super::path_item("a").unwrap(),
            std::path::PathBuf::from("a")
        );
    }
}
