//! LEB128 varints and zigzag signed deltas for the chunk encoding, and a cursor that reads
//! them back without ever panicking: every malformed input is an [`IologError::Chunk`]
//! naming the byte.

use crate::IologError;

/// Appends `v` as an unsigned LEB128 varint (7 bits a byte, high bit: more follows).
pub(crate) fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends a value of up to 65 bits (a 64-bit zigzag with one more bit beside it), still at
/// most 10 bytes.
pub(crate) fn put_wide(buf: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Zigzag (protobuf's): small magnitudes of either sign become small unsigned numbers.
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a chunk front to back.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    pub(crate) fn error(&self, what: impl Into<String>) -> IologError {
        IologError::Chunk {
            offset: self.pos,
            what: what.into(),
        }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    pub(crate) fn byte(&mut self) -> Result<u8, IologError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.error("the chunk ends inside a request"))?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, IologError> {
        self.varint_bits(64).map(|v| v as u64)
    }

    /// A varint of [`put_wide`].
    pub(crate) fn varint_wide(&mut self) -> Result<u128, IologError> {
        self.varint_bits(65)
    }

    fn varint_bits(&mut self, max_bits: u32) -> Result<u128, IologError> {
        let start = self.pos;
        let mut v = 0u128;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            let bits = u128::from(b & 0x7f);
            if shift + (8 - (b & 0x7f).leading_zeros()) > max_bits {
                self.pos = start;
                return Err(self.error(format!("a varint overflows {max_bits} bits")));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.pos = start;
        Err(self.error("a varint runs past 10 bytes"))
    }

    /// A varint that must fit `T` (what the field is named in the message).
    pub(crate) fn varint_as<T: TryFrom<u64>>(&mut self, field: &str) -> Result<T, IologError> {
        let start = self.pos;
        let v = self.varint()?;
        T::try_from(v).map_err(|_| {
            self.pos = start;
            self.error(format!("{field} {v} is out of range"))
        })
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], IologError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.error(format!("{n} bytes announced, fewer left")))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut buf = Vec::new();
            put(&mut buf, v);
            let mut c = Cursor::new(&buf);
            assert_eq!(c.varint().unwrap(), v);
            assert!(c.at_end());
        }
        for v in [0i64, 1, -1, 63, -64, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn malformed_varints_are_errors() {
        // Eleven continuation bytes, a 10th byte with too many bits, and a cut-off varint.
        for bad in [
            &[0xffu8; 11][..],
            &[0xff; 9].iter().chain(&[0x02]).copied().collect::<Vec<_>>(),
            &[0x80],
        ] {
            assert!(Cursor::new(bad).varint().is_err(), "{bad:?}");
        }
    }
}
