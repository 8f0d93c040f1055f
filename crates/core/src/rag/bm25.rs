//! The in-memory BM25 index behind [`super::store::SqliteIndex::bm25`].
//!
//! Chunks are stored with their analysed terms (`kb_chunks.terms`, see
//! [`super::analyze`]); this index holds their postings in memory: per term
//! the chunk slots it occurs in with the term frequency, per slot the chunk's
//! id and length in terms. A query accumulates term by term into a dense score
//! array and keeps the best `k`, so it costs the length of its terms' posting
//! lists, not a B-tree lookup per matching row as FTS5's `bm25()` did.
//!
//! Scores are FTS5's `bm25()` to the last bit (same formula, same order of
//! floating-point operations; `bm25_matches_fts5` in the tests checks it):
//! k1 = 1.2, b = 0.75, idf = ln((N − n + 0.5) / (n + 0.5)) clamped to 1e-6
//! when ≤ 0, a chunk's length is its number of terms and avgdl is averaged over
//! all chunks, including those without terms.
//!
//! Writes update the index in place: [`Bm25Index::add`] appends a chunk,
//! [`Bm25Index::remove`] marks its slot dead and decrements the document
//! frequencies of its terms; dead slots are skipped when scoring and squeezed
//! out by [`Bm25Index::compact`] once they are a quarter of the live ones.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The chunks a term occurs in, in slot order.
#[derive(Default)]
struct Postings {
    slots: Vec<u32>,
    /// Occurrences in the chunk at the same position of `slots` (saturating:
    /// a chunk is a few hundred terms long).
    tfs: Vec<u16>,
    /// Live chunks among `slots` (the document frequency n).
    live: u32,
}

/// BM25 postings of every chunk of the index.
#[derive(Default)]
pub(super) struct Bm25Index {
    postings: HashMap<Box<str>, Postings>,
    /// Chunk id per slot; 0 marks a removed chunk (chunk ids start at 1).
    ids: Vec<i64>,
    /// Terms per slot.
    lens: Vec<u32>,
    /// Slot of each live chunk id.
    slot_of: HashMap<i64, u32>,
    /// Sum of the live chunks' lengths.
    total_len: u64,
}

/// The analysed terms of a chunk, as stored (space-separated).
fn split(terms: &str) -> impl Iterator<Item = &str> {
    terms.split(' ').filter(|t| !t.is_empty())
}

impl Bm25Index {
    /// Live chunks (N).
    pub(super) fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// Adds chunk `id` with its stored `terms`; ids must grow from call to
    /// call (SQLite's rowids do), so that posting lists stay in slot order.
    pub(super) fn add(&mut self, id: i64, terms: &str) {
        let slot = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        let mut all: Vec<&str> = split(terms).collect();
        let len = u32::try_from(all.len()).unwrap_or(u32::MAX);
        all.sort_unstable();
        let mut counts: Vec<(&str, u16)> = Vec::new();
        for term in all {
            match counts.last_mut() {
                Some((t, n)) if *t == term => *n = n.saturating_add(1),
                _ => counts.push((term, 1)),
            }
        }
        for (term, tf) in counts {
            let p = match self.postings.get_mut(term) {
                Some(p) => p,
                None => self.postings.entry(term.into()).or_default(),
            };
            p.slots.push(slot);
            p.tfs.push(tf);
            p.live += 1;
        }
        self.ids.push(id);
        self.lens.push(len);
        self.slot_of.insert(id, slot);
        self.total_len += u64::from(len);
    }

    /// Removes chunk `id`, whose stored terms were `terms`; unknown ids are ignored.
    pub(super) fn remove(&mut self, id: i64, terms: &str) {
        let Some(slot) = self.slot_of.remove(&id) else { return };
        let mut unique: Vec<&str> = split(terms).collect();
        unique.sort_unstable();
        unique.dedup();
        for term in unique {
            if let Some(p) = self.postings.get_mut(term) {
                p.live -= 1;
                if p.live == 0 {
                    self.postings.remove(term);
                }
            }
        }
        let s = slot as usize;
        self.total_len -= u64::from(self.lens[s]);
        self.ids[s] = 0;
        self.lens[s] = 0;
        let dead = self.ids.len() - self.slot_of.len();
        if dead > 256 + self.slot_of.len() / 4 {
            self.compact();
        }
    }

    /// Drops dead slots and renumbers the live ones (order kept).
    fn compact(&mut self) {
        let mut remap = vec![u32::MAX; self.ids.len()];
        let mut next = 0u32;
        for (slot, &id) in self.ids.iter().enumerate() {
            if id != 0 {
                remap[slot] = next;
                next += 1;
            }
        }
        for p in self.postings.values_mut() {
            let mut w = 0;
            for r in 0..p.slots.len() {
                let to = remap[p.slots[r] as usize];
                if to != u32::MAX {
                    p.slots[w] = to;
                    p.tfs[w] = p.tfs[r];
                    w += 1;
                }
            }
            p.slots.truncate(w);
            p.tfs.truncate(w);
            p.slots.shrink_to_fit();
            p.tfs.shrink_to_fit();
        }
        let live: Vec<usize> = (0..self.ids.len()).filter(|&s| self.ids[s] != 0).collect();
        self.ids = live.iter().map(|&s| self.ids[s]).collect();
        self.lens = live.iter().map(|&s| self.lens[s]).collect();
        for (slot, &id) in self.ids.iter().enumerate() {
            self.slot_of.insert(id, slot as u32);
        }
    }

    /// The best `top_k` chunks for `terms` (duplicates count once), best
    /// first, as (chunk id, score); equal scores by chunk id.
    pub(super) fn search(&self, terms: &[String], top_k: usize) -> Vec<(i64, f64)> {
        let n = self.len();
        if n == 0 || top_k == 0 {
            return Vec::new();
        }
        let avgdl = self.total_len as f64 / n as f64;
        let mut scores = vec![0.0f64; self.ids.len()];
        let mut unique: Vec<&str> = Vec::new();
        for t in terms {
            if !unique.contains(&t.as_str()) {
                unique.push(t);
            }
        }
        for term in unique {
            let Some(p) = self.postings.get(term) else { continue };
            let hits = i64::from(p.live);
            let mut idf = (((n as i64 - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
            if idf <= 0.0 {
                idf = 1e-6;
            }
            for (&slot, &tf) in p.slots.iter().zip(&p.tfs) {
                let s = slot as usize;
                if self.ids[s] == 0 {
                    continue;
                }
                let f = f64::from(tf);
                let d = f64::from(self.lens[s]);
                scores[s] += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
            }
        }
        // Every match scores above 0 (idf ≥ 1e-6, tf ≥ 1).
        let mut hits: Vec<(i64, f64)> =
            scores.iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(slot, &s)| (self.ids[slot], s)).collect();
        let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let k = top_k.min(hits.len());
        if k == 0 {
            return Vec::new();
        }
        if k < hits.len() {
            hits.select_nth_unstable_by(k - 1, order);
            hits.truncate(k);
        }
        hits.sort_by(order);
        hits
    }
}
