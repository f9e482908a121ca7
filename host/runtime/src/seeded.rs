//! A generator's randomness: bytes derived from the model hash, so that
//! the same model gives a generator the same "random" numbers. Block `i`
//! of the stream is the sha256 of the hash's text then `i` (8 bytes,
//! little-endian); the stream cycles after [`CYCLE_BYTES`].
//!
//! Blocks are made as they are asked for: most generators ask for a few
//! bytes (a hash map's keys) or none, and making the whole cycle up front
//! cost a sha256 per 32 bytes, 0.2 ms of every run.

use std::convert::Infallible;

use rand_core::TryRng;
use sha2::{Digest, Sha256};

/// Bytes in one cycle of the stream.
pub(crate) const CYCLE_BYTES: usize = 64 << 10;

const BLOCK: usize = 32;

/// The stream of one run, from its start.
pub(crate) struct Seeded {
    model_hash: String,
    /// The block being read and how much of it was.
    block: [u8; BLOCK],
    used: usize,
    /// The number of the next block.
    next: u64,
}

impl Seeded {
    pub(crate) fn new(model_hash: &str) -> Seeded {
        Seeded {
            model_hash: model_hash.to_owned(),
            block: [0; BLOCK],
            used: BLOCK,
            next: 0,
        }
    }

    /// The first 16 bytes of the stream, as `wasi:random/insecure-seed`
    /// gives them.
    pub(crate) fn seed(model_hash: &str) -> u128 {
        let mut first = [0; 16];
        Seeded::new(model_hash).fill(&mut first);
        u128::from_le_bytes(first)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        let mut at = 0;
        while at < buf.len() {
            if self.used == BLOCK {
                let mut hasher = Sha256::new();
                hasher.update(self.model_hash.as_bytes());
                hasher.update(self.next.to_le_bytes());
                self.block = hasher.finalize().into();
                self.used = 0;
                self.next = (self.next + 1) % (CYCLE_BYTES / BLOCK) as u64;
            }
            let n = (BLOCK - self.used).min(buf.len() - at);
            buf[at..at + n].copy_from_slice(&self.block[self.used..self.used + n]);
            self.used += n;
            at += n;
        }
    }
}

impl TryRng for Seeded {
    type Error = Infallible;

    // Big-endian words, as the stream of bytes was read before.
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut word = [0; 4];
        self.fill(&mut word);
        Ok(u32::from_be_bytes(word))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut word = [0; 8];
        self.fill(&mut word);
        Ok(u64::from_be_bytes(word))
    }

    fn try_fill_bytes(&mut self, buf: &mut [u8]) -> Result<(), Infallible> {
        self.fill(buf);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    /// The cycle as it was made up front before.
    fn whole_cycle(model_hash: &str) -> Vec<u8> {
        (0..(CYCLE_BYTES / BLOCK) as u64)
            .flat_map(|i| {
                let mut hasher = Sha256::new();
                hasher.update(model_hash.as_bytes());
                hasher.update(i.to_le_bytes());
                <[u8; BLOCK]>::from(hasher.finalize())
            })
            .collect()
    }

    #[test]
    fn the_stream_is_the_cycle_made_up_front_read_any_way() {
        let hash = "ab".repeat(32);
        let cycle = whole_cycle(&hash);
        // In pieces that straddle blocks, past the end of the cycle.
        let mut seeded = Seeded::new(&hash);
        let mut read = Vec::new();
        for len in [1, 31, 33, 7, 64, 1000].into_iter().cycle().take(400) {
            let mut piece = vec![0; len];
            seeded.fill_bytes(&mut piece);
            read.extend(piece);
        }
        assert!(read.len() > CYCLE_BYTES);
        let expected: Vec<u8> = cycle.iter().cycle().take(read.len()).copied().collect();
        assert_eq!(read, expected);

        // Words as wasmtime-wasi's cycle of the same bytes gives them.
        let mut old = wasmtime_wasi::Deterministic::new(cycle.clone());
        let mut new = Seeded::new(&hash);
        for _ in 0..100 {
            assert_eq!(new.next_u32(), old.next_u32());
            assert_eq!(new.next_u64(), old.next_u64());
        }
        let seed = u128::from_le_bytes(cycle[..16].try_into().unwrap());
        assert_eq!(Seeded::seed(&hash), seed);
    }

    #[test]
    fn another_model_gives_other_bytes() {
        let mut a = [0; 64];
        let mut b = [0; 64];
        Seeded::new(&"a".repeat(64)).fill_bytes(&mut a);
        Seeded::new(&"b".repeat(64)).fill_bytes(&mut b);
        assert_ne!(a, b);
    }
}
