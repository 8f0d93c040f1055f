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

use std::io::{self, Read, Write};

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

/// The varint at `data[*at..]`. Never panics: a list read back from a file ([`Bm25Index::load`])
/// that ends inside a varint or runs one past 32 bits reads as ending there.
fn read_varint(data: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    while let Some(&byte) = data.get(*at) {
        *at += 1;
        v |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
    v
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
            slot = read_varint(&self.data, &mut at).wrapping_add(slot);
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
            p.live = p.live.saturating_sub(1);
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
                let to = remap.get(slot as usize).copied().unwrap_or(u32::MAX);
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
                // `get`: a slot past the end can only come from a damaged saved file.
                if self.ids.get(s).is_some_and(|&id| id != 0) {
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

fn put_u32(out: &mut impl Write, v: u32) -> io::Result<()> {
    out.write_all(&v.to_le_bytes())
}

/// A count as stored: every count here fits in a u32 (slots and terms are u32).
fn put_len(out: &mut impl Write, n: usize) -> io::Result<()> {
    put_u32(out, u32::try_from(n).map_err(|_| io::Error::other("more than 2^32 entries"))?)
}

fn get_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// `n` bytes; a length that lies ends in `UnexpectedEof`, having grown the buffer only as far
/// as the bytes went.
fn get_bytes(r: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    r.take(n as u64).read_to_end(&mut out)?;
    if out.len() != n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(out)
}

fn words<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes.chunks_exact(N).map(|b| f(b.try_into().unwrap_or([0; N]))).collect()
}

impl Bm25Index {
    /// Writes the index, to be read back by [`Bm25Index::load`] without analysing any chunk again
    /// (the knowledge base keeps its postings beside the database, `rag::saved`).
    pub(crate) fn save(&self, out: &mut impl Write) -> io::Result<()> {
        let mut terms: Vec<(&str, u32)> = self.term_ids.iter().map(|(t, &id)| (&**t, id)).collect();
        terms.sort_unstable_by_key(|&(_, id)| id);
        put_len(out, terms.len())?;
        for ((term, _), p) in terms.iter().zip(&self.postings) {
            put_len(out, term.len())?;
            out.write_all(term.as_bytes())?;
            put_u32(out, p.last)?;
            put_u32(out, p.live)?;
            put_len(out, p.data.len())?;
            out.write_all(&p.data)?;
        }
        put_len(out, self.ids.len())?;
        let ids: Vec<u8> = self.ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        out.write_all(&ids)?;
        let lens: Vec<u8> = self.lens.iter().flat_map(|l| l.to_le_bytes()).collect();
        out.write_all(&lens)?;
        let groups: Vec<u8> = self.groups.iter().flat_map(|g| g.to_le_bytes()).collect();
        out.write_all(&groups)?;
        out.write_all(&self.total_len.to_le_bytes())
    }

    /// The index [`Bm25Index::save`] wrote. Counts that do not fit are `InvalidData`; the postings'
    /// bytes are taken as written (the caller checks the file's hash).
    pub(crate) fn load(r: &mut impl Read) -> io::Result<Self> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        let n_terms = get_u32(r)?;
        let mut index = Self::default();
        for id in 0..n_terms {
            let len = get_u32(r)? as usize;
            let term = String::from_utf8(get_bytes(r, len)?).map_err(|_| bad("a term is not UTF-8"))?;
            let (last, live) = (get_u32(r)?, get_u32(r)?);
            let len = get_u32(r)? as usize;
            index.postings.push(Postings { data: get_bytes(r, len)?, last, live });
            index.term_ids.insert(term.into_boxed_str(), id);
        }
        let slots = get_u32(r)? as usize;
        index.ids = words(&get_bytes(r, slots * 8)?, i64::from_le_bytes);
        index.lens = words(&get_bytes(r, slots * 4)?, u32::from_le_bytes);
        index.groups = words(&get_bytes(r, slots * 8)?, i64::from_le_bytes);
        let mut total = [0; 8];
        r.read_exact(&mut total)?;
        index.total_len = u64::from_le_bytes(total);
        if index.postings.iter().any(|p| p.last as usize >= slots.max(1))
            || index.term_ids.len() != index.postings.len()
        {
            return Err(bad("postings name slots the index does not have"));
        }
        if index.lens.iter().map(|&l| u64::from(l)).sum::<u64>() != index.total_len {
            return Err(bad("the chunks' lengths do not add up"));
        }
        index.slot_of.reserve(slots);
        for (slot, &id) in index.ids.iter().enumerate().filter(|(_, id)| **id != 0) {
            if index.slot_of.insert(id, slot as u32).is_some() {
                return Err(bad("a chunk is in two slots"));
            }
        }
        // The lists' bytes are not decoded here (hundreds of MB at a million chunks): reading
        // them never panics (`read_varint`, `scores_plus`), and the file's hash finds damage.
        Ok(index)
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
