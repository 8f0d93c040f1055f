//! An in-memory BM25 index: the knowledge base's ([`crate::rag::SqliteIndex::bm25`]) and tool
//! search's ([`crate::agent`]). For the knowledge base it replaced FTS5's `bm25()`
//! (migration 10 dropped that table), which did per-row work for every chunk matching any term: at
//! 100k chunks a query went from 9–18 ms to under 1 ms (docs/BENCHMARKS.md).
//!
//! Chunks are stored with their analysed terms (`kb_chunks.terms`, [`super::analyze`]); here are their
//! postings (slot deltas and frequencies as varints, about two bytes a posting). A query accumulates
//! term by term into a dense array and keeps the best `k`. Scores are FTS5's `bm25()` to the last bit
//! (same formula and order of operations; `bm25_matches_fts5` checks). Writes update it in place:
//! [`Bm25Index::add`] appends, [`Bm25Index::remove`] marks a slot dead, [`Bm25Index::compact`]
//! squeezes dead slots out once they are a quarter of the live ones.

use rustc_hash::FxHashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The chunks a term occurs in, in slot order.
#[derive(Default)]
struct Postings {
    /// (slot − previous slot, term frequency) pairs as varints.
    data: Vec<u8>,
    /// The last slot in `data` (0 when empty).
    last: u32,
    /// Live chunks among the slots (the document frequency n).
    live: u32,
}

fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(data: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let byte = data[*at];
        *at += 1;
        v |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

impl Postings {
    fn push(&mut self, slot: u32, tf: u32) {
        push_varint(&mut self.data, slot - self.last);
        push_varint(&mut self.data, tf);
        self.last = slot;
    }

    /// Calls `f(slot, tf)` for every posting, dead slots included.
    fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        let mut at = 0;
        let mut slot = 0;
        while at < self.data.len() {
            slot += read_varint(&self.data, &mut at);
            let tf = read_varint(&self.data, &mut at);
            f(slot, tf);
        }
    }
}

/// BM25 postings of every chunk of the index.
#[derive(Default)]
pub(crate) struct Bm25Index {
    /// Term → its number, the index of its postings.
    term_ids: FxHashMap<Box<str>, u32>,
    postings: Vec<Postings>,
    /// Chunk id per slot; 0 marks a removed chunk (chunk ids start at 1).
    ids: Vec<i64>,
    /// Terms per slot.
    lens: Vec<u32>,
    /// The group of each slot (the knowledge base's document of a chunk; 0 when not grouped).
    groups: Vec<i64>,
    /// Slot of each live chunk id.
    slot_of: FxHashMap<i64, u32>,
    /// Sum of the live chunks' lengths.
    total_len: u64,
}

/// The analysed terms of a chunk, as stored (space-separated).
fn split(terms: &str) -> impl Iterator<Item = &str> {
    terms.split(' ').filter(|t| !t.is_empty())
}

impl Bm25Index {
    /// Live chunks (N).
    pub(crate) fn len(&self) -> usize {
        self.slot_of.len()
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(term) {
            return id;
        }
        let id = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
        self.term_ids.insert(term.into(), id);
        self.postings.push(Postings::default());
        id
    }

    /// Adds chunk `id` (not live in the index) with its stored `terms`, in a
    /// new slot after all others, so that posting lists stay in slot order.
    pub(crate) fn add(&mut self, id: i64, terms: &str) {
        self.add_in(id, 0, terms);
    }

    /// [`Bm25Index::add`], the chunk belonging to `group` (see [`Bm25Index::scores_plus`]).
    pub(crate) fn add_in(&mut self, id: i64, group: i64, terms: &str) {
        let slot = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        let mut tids: Vec<u32> = split(terms).map(|t| self.term_id(t)).collect();
        let len = u32::try_from(tids.len()).unwrap_or(u32::MAX);
        tids.sort_unstable();
        let mut i = 0;
        while i < tids.len() {
            let tid = tids[i];
            let run = tids[i..].iter().take_while(|&&t| t == tid).count();
            let p = &mut self.postings[tid as usize];
            p.push(slot, u32::try_from(run).unwrap_or(u32::MAX));
            p.live += 1;
            i += run;
        }
        self.ids.push(id);
        self.lens.push(len);
        self.groups.push(group);
        self.slot_of.insert(id, slot);
        self.total_len += u64::from(len);
    }

    /// Removes chunk `id`, whose stored terms were `terms`; unknown ids are ignored.
    pub(crate) fn remove(&mut self, id: i64, terms: &str) {
        let Some(slot) = self.slot_of.remove(&id) else { return };
        let mut tids: Vec<u32> = split(terms).filter_map(|t| self.term_ids.get(t).copied()).collect();
        tids.sort_unstable();
        tids.dedup();
        for tid in tids {
            let p = &mut self.postings[tid as usize];
            p.live -= 1;
            if p.live == 0 {
                *p = Postings::default();
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

    /// Frees the spare capacity of growing lists (after a bulk build).
    pub(crate) fn shrink_to_fit(&mut self) {
        for p in &mut self.postings {
            p.data.shrink_to_fit();
        }
        self.ids.shrink_to_fit();
        self.lens.shrink_to_fit();
        self.groups.shrink_to_fit();
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
        for p in &mut self.postings {
            let mut fresh = Postings { live: p.live, ..Postings::default() };
            p.for_each(|slot, tf| {
                let to = remap[slot as usize];
                if to != u32::MAX {
                    fresh.push(to, tf);
                }
            });
            fresh.data.shrink_to_fit();
            *p = fresh;
        }
        let live: Vec<usize> = (0..self.ids.len()).filter(|&s| self.ids[s] != 0).collect();
        self.ids = live.iter().map(|&s| self.ids[s]).collect();
        self.lens = live.iter().map(|&s| self.lens[s]).collect();
        self.groups = live.iter().map(|&s| self.groups[s]).collect();
        for (slot, &id) in self.ids.iter().enumerate() {
            self.slot_of.insert(id, slot as u32);
        }
    }

    /// How much finding `term` in a chunk says, for judging relevance across collections:
    /// Lucene's smoothed idf, `ln(1 + (N − n + 0.5) / (n + 0.5))`, always above 0. A term no chunk
    /// has counts as if one chunk had it: it cannot tell more than the rarest term that exists
    /// (a query's filler words are often in no chunk at all).
    pub(crate) fn term_weight(&self, term: &str) -> f64 {
        let n = self.len() as f64;
        let hits = self.term_ids.get(term).map_or(0, |&tid| self.postings[tid as usize].live).max(1);
        let hits = f64::from(hits).min(n);
        (1.0 + (n - hits + 0.5) / (hits + 0.5)).ln()
    }

    /// The best `top_k` chunks for `terms` (duplicates count once), best
    /// first, as (chunk id, score); equal scores by chunk id.
    pub(crate) fn search(&self, terms: &[String], top_k: usize) -> Vec<(i64, f64)> {
        if top_k == 0 {
            return Vec::new();
        }
        best(self.scores(terms), top_k)
    }

    /// Every chunk that has one of `terms` (duplicates count once), with its score, in no order.
    pub(crate) fn scores(&self, terms: &[String]) -> Vec<(i64, f64)> {
        self.scores_plus(terms, |_| 0.0)
    }

    /// [`Bm25Index::scores`], each chunk's score plus `bonus` of its group.
    pub(crate) fn scores_plus(&self, terms: &[String], bonus: impl Fn(i64) -> f64) -> Vec<(i64, f64)> {
        let n = self.len();
        if n == 0 {
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
            let Some(p) = self.term_ids.get(term).map(|&tid| &self.postings[tid as usize]) else { continue };
            let hits = i64::from(p.live);
            let mut idf = (((n as i64 - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
            if idf <= 0.0 {
                idf = 1e-6;
            }
            p.for_each(|slot, tf| {
                let s = slot as usize;
                if self.ids[s] != 0 {
                    let f = f64::from(tf);
                    let d = f64::from(self.lens[s]);
                    scores[s] += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
                }
            });
        }
        // Every match scores above 0 (idf ≥ 1e-6, tf ≥ 1).
        scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(slot, &s)| (self.ids[slot], s + bonus(self.groups[slot])))
            .collect()
    }
}

/// The best `top_k` of `hits`, best first; equal scores by id.
pub(crate) fn best(mut hits: Vec<(i64, f64)>, top_k: usize) -> Vec<(i64, f64)> {
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
