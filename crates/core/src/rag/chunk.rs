//! Chunking that follows the document's structure.
//!
//! Text is first cut into blocks: a Markdown heading starts a new section, a
//! fenced code block is one block, and paragraphs end at blank lines. Blocks
//! are then packed into chunks of at most `chunk_tokens` tokens
//! ([`token_count`]). A chunk never spans two sections; a block is only split
//! (by lines, then by words) when it alone is larger than a chunk. Consecutive
//! chunks of one section share up to `overlap_tokens` tokens of trailing lines.
//! Every chunk keeps its heading path ("Install > Linux") and its 1-based line
//! range in the extracted text.

use serde::{Deserialize, Serialize};

use crate::text::analyze::token_count;

/// Chunk size and overlap, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkParams {
    pub chunk_tokens: usize,
    pub overlap_tokens: usize,
}

impl Default for ChunkParams {
    fn default() -> Self {
        Self { chunk_tokens: 256, overlap_tokens: 32 }
    }
}

/// One piece of a document, ready to index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub text: String,
    /// Heading path, outermost first, joined with " > ". Empty before the first heading.
    pub heading: String,
    /// First line (1-based, inclusive).
    pub line_start: usize,
    /// Last line (1-based, inclusive).
    pub line_end: usize,
}

struct Line<'a> {
    no: usize,
    text: &'a str,
    tokens: usize,
}

struct Section<'a> {
    heading: String,
    blocks: Vec<Vec<Line<'a>>>,
}

/// Splits `text` into chunks; `markdown` turns on headings and code fences.
pub fn chunk(text: &str, markdown: bool, params: ChunkParams) -> Vec<Chunk> {
    let max = params.chunk_tokens.max(8);
    let overlap = params.overlap_tokens.min(max / 2);
    let source: Vec<&str> = text.lines().collect();
    let mut chunks = Vec::new();
    for section in sections(text, markdown) {
        let mut current: Vec<&Line<'_>> = Vec::new();
        let mut size = 0;
        let mut fresh = 0; // lines in `current` that are not overlap
        for block in &section.blocks {
            let block_tokens: usize = block.iter().map(|l| l.tokens).sum();
            if size + block_tokens > max && fresh > 0 {
                emit(&mut chunks, &source, &section.heading, &current);
                let kept = tail(&current, overlap);
                current = kept;
                size = current.iter().map(|l| l.tokens).sum();
                fresh = 0;
            }
            for line in block {
                if size + line.tokens > max && fresh > 0 {
                    emit(&mut chunks, &source, &section.heading, &current);
                    current = tail(&current, overlap);
                    size = current.iter().map(|l| l.tokens).sum();
                    fresh = 0;
                }
                if line.tokens > max {
                    // One enormous line (minified code, a PDF paragraph): cut it by words.
                    for piece in split_words(line.text, max) {
                        chunks.push(Chunk {
                            text: piece,
                            heading: section.heading.clone(),
                            line_start: line.no,
                            line_end: line.no,
                        });
                    }
                    current.clear();
                    size = 0;
                    fresh = 0;
                    continue;
                }
                current.push(line);
                size += line.tokens;
                fresh += 1;
            }
        }
        if fresh > 0 {
            emit(&mut chunks, &source, &section.heading, &current);
        }
    }
    chunks
}

/// Emits the source lines spanned by `lines` (blank lines between blocks included).
fn emit(chunks: &mut Vec<Chunk>, source: &[&str], heading: &str, lines: &[&Line<'_>]) {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else { return };
    let text = source[first.no - 1..last.no].join("\n");
    if text.trim().is_empty() {
        return;
    }
    chunks.push(Chunk { text, heading: heading.to_owned(), line_start: first.no, line_end: last.no });
}

/// The trailing lines of `lines` that fit in `budget` tokens.
fn tail<'a, 'b>(lines: &[&'a Line<'b>], budget: usize) -> Vec<&'a Line<'b>> {
    let mut used = 0;
    let mut start = lines.len();
    while start > 0 && used + lines[start - 1].tokens <= budget {
        used += lines[start - 1].tokens;
        start -= 1;
    }
    lines[start..].to_vec()
}

fn split_words(text: &str, max: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for word in text.split_inclusive(char::is_whitespace) {
        if token_count(&piece) + token_count(word) > max && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
        }
        if token_count(word) > max {
            // A run of Han characters without spaces: cut by characters.
            let chars: Vec<char> = word.chars().collect();
            pieces.extend(chars.chunks(max).map(|c| c.iter().collect::<String>()));
            continue;
        }
        piece.push_str(word);
    }
    if !piece.trim().is_empty() {
        pieces.push(piece);
    }
    pieces
}

fn heading_of(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    let title = &trimmed[level..];
    ((1..=6).contains(&level) && (title.is_empty() || title.starts_with(' ')))
        .then(|| (level, title.trim().trim_end_matches('#').trim()))
}

fn fence_of(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f))
}

fn sections(text: &str, markdown: bool) -> Vec<Section<'_>> {
    let mut sections = vec![Section { heading: String::new(), blocks: Vec::new() }];
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut block: Vec<Line<'_>> = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = Line { no: i + 1, text: raw, tokens: token_count(raw).max(1) };
        let section = sections.last_mut().expect("never empty");
        if markdown {
            if let Some(open) = fence {
                block.push(line);
                if fence_of(raw) == Some(open) && raw.trim().len() <= open.len() + 1 {
                    section.blocks.push(std::mem::take(&mut block));
                    fence = None;
                }
                continue;
            }
            if let Some(f) = fence_of(raw) {
                if !block.is_empty() {
                    section.blocks.push(std::mem::take(&mut block));
                }
                fence = Some(f);
                block.push(line);
                continue;
            }
            if let Some((level, title)) = heading_of(raw) {
                if !block.is_empty() {
                    section.blocks.push(std::mem::take(&mut block));
                }
                path.retain(|(l, _)| *l < level);
                path.push((level, title.to_owned()));
                let heading = path.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" > ");
                // The heading line itself belongs to its section's first chunk.
                sections.push(Section { heading, blocks: vec![vec![line]] });
                continue;
            }
        }
        if raw.trim().is_empty() {
            if !block.is_empty() {
                section.blocks.push(std::mem::take(&mut block));
            }
            continue;
        }
        block.push(line);
    }
    if !block.is_empty() {
        sections.last_mut().expect("never empty").blocks.push(block);
    }
    sections.retain(|s| !s.blocks.is_empty());
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Guide\n\nIntro line.\n\n## Install\n\nRun the installer.\n\n```sh\ncargo build\n\ncargo test\n```\n\n### Linux\n\nUse the AppImage.\n";

    #[test]
    fn headings_become_paths_and_lines_are_kept() {
        let chunks = chunk(DOC, true, ChunkParams::default());
        let headings: Vec<_> = chunks.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(headings, ["Guide", "Guide > Install", "Guide > Install > Linux"]);
        assert_eq!((chunks[1].line_start, chunks[1].line_end), (5, 13));
        assert!(chunks[1].text.contains("cargo build\n\ncargo test\n```"));
        assert_eq!((chunks[2].line_start, chunks[2].line_end), (15, 17));
    }

    #[test]
    fn code_fences_are_not_cut_when_they_fit() {
        let mut doc = String::from("# A\n\n");
        for i in 0..30 {
            doc.push_str(&format!("word{i} filler text here\n\n"));
        }
        doc.push_str("```\nfn a() {}\n\nfn b() {}\n\nfn c() {}\n```\n");
        let chunks = chunk(&doc, true, ChunkParams { chunk_tokens: 40, overlap_tokens: 0 });
        let with_fence: Vec<_> = chunks.iter().filter(|c| c.text.contains("```")).collect();
        assert_eq!(with_fence.len(), 1, "{chunks:#?}");
        assert!(with_fence[0].text.contains("fn a() {}") && with_fence[0].text.contains("fn c() {}"));
    }

    #[test]
    fn chunks_respect_size_and_overlap() {
        let text: String = (1..=100).map(|i| format!("line number {i} has words\n")).collect();
        let params = ChunkParams { chunk_tokens: 50, overlap_tokens: 10 };
        let chunks = chunk(&text, false, params);
        assert!(chunks.len() > 5);
        for c in &chunks {
            assert!(token_count(&c.text) <= 50, "{}", c.text);
        }
        for pair in chunks.windows(2) {
            assert!(pair[1].line_start <= pair[0].line_end, "overlap between {pair:?}");
            assert!(pair[1].line_start > pair[0].line_start);
        }
        assert_eq!(chunks.last().unwrap().line_end, 100);
    }

    #[test]
    fn a_huge_line_is_split_by_words() {
        let line = "tok ".repeat(1000);
        let chunks = chunk(&line, false, ChunkParams { chunk_tokens: 100, overlap_tokens: 0 });
        assert_eq!(chunks.len(), 10);
        assert!(chunks.iter().all(|c| c.line_start == 1 && token_count(&c.text) <= 100));
    }

    #[test]
    fn hash_inside_code_is_not_a_heading() {
        let doc = "# Real\n\n```py\n# comment\nx = 1\n```\n";
        let chunks = chunk(doc, true, ChunkParams::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].heading, "Real");
    }
}
