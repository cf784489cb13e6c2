//! Stripe and mirror placement, the arithmetic of the layout module's doc: which member and
//! which of its AUs hold copy `k` of logical AU `c`, how many logical AUs the members hold,
//! and which members share a copy set (partners).

/// Stripe and mirror placement (see the layout module's doc); stripe is one copy, one disk
/// per group.
#[derive(Clone, Debug)]
pub(super) struct Grid {
    pub(super) unit: u64,
    pub(super) copies: usize,
    groups: Vec<Vec<u32>>,
    /// `slot[p·copies + k]`: AUs the group of copy k received earlier in the cycle than AU p.
    slot: Vec<u64>,
}

impl Grid {
    /// Member and member AU of copy `k` of logical AU `c`.
    #[inline]
    pub(super) fn locate(&self, c: u64, k: usize) -> (u32, u64) {
        let g = self.groups.len();
        let (q, p) = (c / g as u64, (c % g as u64) as usize);
        let members = &self.groups[(p + k) % g];
        let a = q * self.copies as u64 + self.slot[p * self.copies + k];
        let n = members.len() as u64;
        (members[(a % n) as usize], a / n)
    }

    /// The placement of `copies` copies over `groups`: the G×N table of AUs each copy's
    /// group received earlier in the cycle.
    pub(super) fn new(unit: u64, copies: usize, groups: Vec<Vec<u32>>) -> Grid {
        let g = groups.len();
        let slot = (0..g * copies)
            .map(|i| {
                let (p, h) = (i / copies, (i / copies + i % copies) % g);
                (0..p).filter(|&e| (h + g - e) % g < copies).count() as u64
            })
            .collect();
        Grid {
            unit,
            copies,
            groups,
            slot,
        }
    }

    /// Logical AUs that fit when every member holds `aus` AUs: the whole cycles the smallest
    /// group allows, then the cycle prefix whose every copy still fits.
    pub(super) fn chunks(&self, aus: u64) -> u64 {
        let (g, copies) = (self.groups.len(), self.copies);
        let cap = |h: usize| self.groups[h].len() as u64 * aus;
        let cycles = (0..g).map(cap).min().unwrap_or(0) / copies as u64;
        let mut chunks = cycles * g as u64;
        for p in 0..g {
            let fits =
                |k: usize| cycles * copies as u64 + self.slot[p * copies + k] < cap((p + k) % g);
            if !(0..copies).all(fits) {
                break;
            }
            chunks += 1;
        }
        chunks
    }
}

/// Partner lists of every member, from the copy sets of the first `chunks` AUs. Copy sets
/// repeat every lcm(group sizes) cycles, so one such period suffices. `Err` holds the members
/// of a copy set that is wholly degraded.
pub(super) fn partners_of(
    g: &Grid,
    chunks: u64,
    n: usize,
    failed: &[bool],
) -> Result<Vec<Vec<u32>>, Vec<usize>> {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let period = g
        .groups
        .iter()
        .map(|m| m.len() as u64)
        .fold(1u64, |l, s| (l / gcd(l, s)).saturating_mul(s).min(chunks));
    let mut seen = vec![false; n * n];
    let mut set = Vec::with_capacity(g.copies);
    for c in 0..(period.saturating_mul(g.groups.len() as u64)).min(chunks) {
        set.clear();
        set.extend((0..g.copies).map(|k| g.locate(c, k).0 as usize));
        if g.copies > 1 && set.iter().all(|&m| failed[m]) {
            set.sort_unstable();
            return Err(set.clone());
        }
        for &a in &set {
            for &b in &set {
                seen[a * n + b] |= a != b;
            }
        }
    }
    Ok((0..n)
        .map(|a| {
            (0..n as u32)
                .filter(|&b| seen[a * n + b as usize])
                .collect()
        })
        .collect())
}
