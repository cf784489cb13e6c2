//! The names of the files iogauge makes beside the store (a new store's temporary, a
//! campaign's lock), kept within what a file name may be: a long name is cut to its start
//! and a digest of the whole (FNV-1a, 64 bits), so it stays readable and two names cut alike
//! still differ (issue #44 L6).

/// Linux's longest file name in bytes (NAME_MAX).
pub(crate) const NAME_MAX: usize = 255;

/// `name` if it has at most `room` bytes, else its start and `-DIGEST` (16 hex digits) in
/// `room` bytes (`room` is more than 17).
pub(crate) fn fit(name: &[u8], room: usize) -> Vec<u8> {
    if name.len() <= room {
        return name.to_vec();
    }
    let digest = format!("-{:016x}", iogauge_stats::fnv1a(name.iter().copied()));
    [start(name, room - digest.len()), digest.as_bytes()].concat()
}

/// The first `max` bytes of `b` at most, not cutting a UTF-8 character in two.
fn start(b: &[u8], max: usize) -> &[u8] {
    let mut end = b.len().min(max);
    while end > 0 && end < b.len() && (b[end] & 0xc0) == 0x80 {
        end -= 1;
    }
    &b[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_with_a_digest() {
        assert_eq!(fit(b"short", 20), b"short");
        let a = fit(&[b'a'; 300], 100);
        let b = fit(&[[b'a'; 299].as_slice(), b"b"].concat(), 100);
        assert_eq!((a.len(), b.len()), (100, 100));
        assert_ne!(a, b, "cut alike, told apart by the digest");
        assert!(a.starts_with(&[b'a'; 83]) && a[83] == b'-');
        // No character cut in two: 'é' is two bytes.
        let e = fit("aé".repeat(50).as_bytes(), 20);
        assert!(std::str::from_utf8(&e).is_ok() && e.len() <= 20, "{e:?}");
    }
}
