//! The end of a job up the ranks' tree: each rank waits for its children's bundles, folds
//! them into its own and sends the whole to its parent; rank 0 ends with the job's.

use super::cpu::thread_cpu_ms;
use super::talk::{Talk, PART};
use super::tree::Bundle;
use anyhow::Context;
use mpi::traits::*;
use std::time::{Duration, Instant};

/// What rank 0 paid for the job's end: its wait (with the folding of each part as it came)
/// and the parts' bytes and messages it received.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gathered {
    pub wait_ms: f64,
    /// Of that, this rank's CPU time folding parts in (decoding, merging).
    pub fold_ms: f64,
    pub received_bytes: u64,
    pub messages: u32,
}

impl Talk<'_> {
    /// Rank 0: [`Talk::gather`], the job's whole bundle.
    pub fn gather_at_root<B: Bundle>(
        &mut self,
        mine: B,
        since: Instant,
        interval: Duration,
    ) -> anyhow::Result<(B, Gathered)> {
        self.gather(mine, since, interval)?
            .ok_or_else(|| anyhow::anyhow!("only rank 0 ends a gather holding the job's part"))
    }

    /// This rank's bundle with its children's subtrees folded in (each child waited for
    /// while it is alive, see [`Talk::grace`]; one silent past that is given up with its
    /// subtree), sent to its parent (`None`) or, on rank 0, returned. A rank waiting beats
    /// to its parent every half interval, so it is not given up while it waits in turn.
    pub fn gather<B: Bundle>(
        &mut self,
        mut mine: B,
        since: Instant,
        interval: Duration,
    ) -> anyhow::Result<Option<(B, Gathered)>> {
        let mut waiting = self.shape.children(self.rank, self.size);
        let mut got = Gathered::default();
        let mut beat = Instant::now();
        while !waiting.is_empty() {
            self.tick(interval / 2, &mut beat);
            if let Some(m) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(PART)
            {
                let from = m.1.source_rank() as u32;
                let (bytes, _) = m.matched_receive_vec::<u8>();
                let (sent, body) = bytes
                    .split_first_chunk::<8>()
                    .context("a rank's part: too short")?;
                self.finish_live(from, u64::from_le_bytes(*sent));
                let fold = thread_cpu_ms();
                let child: B = serde_json::from_slice(body).context("a rank's part")?;
                mine.absorb(child, bytes.len() as u64)?;
                got.fold_ms += thread_cpu_ms() - fold;
                got.received_bytes += bytes.len() as u64;
                got.messages += 1;
                waiting.retain(|c| *c != from);
                continue;
            }
            let grace = self.grace(interval);
            let gone: Vec<u32> = waiting
                .iter()
                .copied()
                .filter(|c| self.heard_at[*c as usize].max(since).elapsed() > grace)
                .collect();
            for c in gone {
                mine.absorb(
                    B::lost(self.shape.subtree(c, self.size), self.live_heard(c)),
                    0,
                )?;
                waiting.retain(|w| *w != c);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        got.wait_ms = since.elapsed().as_secs_f64() * 1e3;
        mine.seal()?;
        let Some(parent) = self.shape.parent(self.rank) else {
            return Ok(Some((mine, got)));
        };
        let mut msg = self.live_sent.to_le_bytes().to_vec();
        serde_json::to_writer(&mut msg, &mine)?;
        // Sent without a blocking send: a part too large to go eagerly waits for its parent
        // to take it, and a blocking send spins a core all that time (a parent that died
        // never takes it, and ranks spinning on a host starve the ranks still storing).
        mpi::request::scope(|scope| {
            let mut req = self
                .world
                .process_at_rank(parent as i32)
                .immediate_send_with_tag(scope, &msg[..], PART);
            loop {
                match req.test() {
                    Ok(_) => break,
                    Err(r) => req = r,
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Ok(None)
    }
}
