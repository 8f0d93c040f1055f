//! The knowledge base's BM25 postings kept beside the database (`kb-postings.bin`), so that the
//! first search after a start reads them instead of analysing every chunk again (at a million
//! chunks: about 20 s to build; docs/BENCHMARKS.md).
//!
//! A file is good for one state of the chunks: migration 18's triggers draw a new random
//! generation in `kb_postings_gen` at every change to `kb_chunks`, by this process or another, and
//! the file records the generation it was saved at. A file of another generation, or a torn or
//! altered one (its length and hash are checked) is ignored, and the postings are built from the chunks as before. It is written to a
//! temporary name and renamed, so a reader never sees half a file.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::text::bm25::Bm25Index;

const FILE: &str = "kb-postings.bin";
/// Names the layout: a new one (of this file or of `Bm25Index::save`) takes a new magic.
const MAGIC: &[u8; 8] = b"PBKBPST1";

/// Where the postings of the database at `db` are kept (`None` for an in-memory database).
pub(super) fn path(db: &Path) -> Option<PathBuf> {
    (db != Path::new(":memory:")).then(|| db.with_file_name(FILE))
}

/// The chunks' generation: a new random value at each change (the triggers draw it).
pub(super) fn generation(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT n FROM kb_postings_gen", [], |r| r.get(0))
}

/// Whether the triggers that move the generation are all there (a later migration that rebuilt
/// `kb_chunks` would drop them with it, and the generation would stand still).
pub(super) fn tracked(conn: &Connection) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'kb_chunks' \
         AND name IN ('kb_chunks_insert_moves', 'kb_chunks_delete_moves', 'kb_chunks_update_moves')",
        [],
        |r| r.get(0),
    )?;
    Ok(n == 3)
}

/// Writes `parts` for chunks at `generation`.
pub(super) fn save(path: &Path, generation: i64, parts: &[&Bm25Index]) -> io::Result<()> {
    // A temporary file of its own (removed if this fails): another process may be saving too.
    // Named after the file, so that one a crash leaves behind says what it is.
    let tmp = tempfile::Builder::new()
        .prefix("kb-postings.")
        .suffix(".tmp")
        .tempfile_in(path.parent().unwrap_or(Path::new(".")))?;
    let (file, tmp) = tmp.into_parts();
    let mut out = Hashing { inner: BufWriter::with_capacity(1 << 20, file), hash: Hasher::default() };
    out.write_all(MAGIC)?;
    out.write_all(&generation.to_le_bytes())?;
    for part in parts {
        part.save(&mut out)?;
    }
    let hash = out.hash.finish();
    let mut file = out.inner;
    file.write_all(&hash.to_le_bytes())?;
    let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    drop(file);
    tmp.persist(path).map_err(|e| e.error)
}

/// The `N` parts saved for chunks at `generation`; `None` when there is no file or it is of
/// another generation. An error: the file is there but unreadable, torn or altered.
pub(super) fn load<const N: usize>(path: &Path, generation: i64) -> io::Result<Option<[Bm25Index; N]>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut r = Hashing { inner: BufReader::with_capacity(1 << 20, file), hash: Hasher::default() };
    let mut head = [0; 16];
    r.read_exact(&mut head)?;
    if &head[..8] != MAGIC {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a Patchbay postings file"));
    }
    if i64::from_le_bytes(head[8..].try_into().unwrap_or_default()) != generation {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(N);
    for _ in 0..N {
        parts.push(Bm25Index::load(&mut r)?);
    }
    let hash = r.hash.finish();
    let mut rest = Vec::new();
    r.inner.read_to_end(&mut rest)?;
    if rest != hash.to_le_bytes() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the postings file is torn or altered (hash)"));
    }
    Ok(parts.try_into().ok())
}

/// A reader or writer that hashes what passes through it.
struct Hashing<T> {
    inner: T,
    hash: Hasher,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// A fast 64-bit checksum (not cryptographic: it finds torn and damaged files), four lanes of
/// 8 bytes so that hashing keeps up with reading (hundreds of MB at a million chunks).
#[derive(Default)]
struct Hasher {
    lanes: [u64; 4],
    pending: [u8; 32],
    filled: usize,
    len: u64,
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher {
    fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.filled > 0 {
            let take = (32 - self.filled).min(data.len());
            self.pending[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.filled = 0;
        }
        let mut blocks = data.chunks_exact(32);
        for b in &mut blocks {
            self.block(b.try_into().unwrap_or(&[0; 32]));
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    fn block(&mut self, b: &[u8; 32]) {
        for (lane, word) in self.lanes.iter_mut().zip(b.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            *lane = (lane.rotate_left(23) ^ w).wrapping_mul(K);
        }
    }

    fn finish(&mut self) -> u64 {
        let mut last = [0; 32];
        last[..self.filled].copy_from_slice(&self.pending[..self.filled]);
        self.block(&last);
        self.lanes.iter().fold(self.len, |h, lane| (h.rotate_left(23) ^ lane).wrapping_mul(K))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(chunks: &[(i64, i64, &str)]) -> Bm25Index {
        let mut index = Bm25Index::default();
        for &(id, group, terms) in chunks {
            index.add_in(id, group, terms);
        }
        index
    }

    #[test]
    fn saved_postings_search_as_the_originals_and_a_damaged_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE);
        let mut chunks = index(&[(1, 1, "pump seal pump"), (2, 1, "seal summer"), (3, 2, "bread dough")]);
        chunks.remove(2, "seal summer");
        chunks.add_in(4, 2, "dough rise 面包");
        let docs = index(&[(1, 0, "pump seal pump seal summer"), (2, 0, "bread dough dough rise 面包")]);
        save(&path, 7, &[&chunks, &docs]).unwrap();

        let query: Vec<String> = ["seal", "dough", "面包"].map(str::to_owned).into();
        let [c, d] = load::<2>(&path, 7).unwrap().unwrap();
        assert_eq!(c.search(&query, 10), chunks.search(&query, 10));
        assert_eq!(d.search(&query, 10), docs.search(&query, 10));
        assert_eq!(c.len(), 3);
        assert_eq!(c.term_weight("seal"), chunks.term_weight("seal"));

        assert!(load::<2>(&path, 8).unwrap().is_none(), "another generation");
        assert!(load::<2>(&tmp.path().join("none.bin"), 7).unwrap().is_none());
        let bytes = std::fs::read(&path).unwrap();
        for damaged in [bytes[..bytes.len() - 3].to_vec(), {
            let mut b = bytes.clone();
            let at = b.len() / 2;
            b[at] ^= 0x10;
            b
        }] {
            std::fs::write(&path, damaged).unwrap();
            assert!(load::<2>(&path, 7).is_err());
        }
    }
}
