//! Text analysis for BM25: the same function turns documents and queries into terms.
//!
//! Latin-script runs are split on anything that is not a letter or digit,
//! lower-cased, stripped of English stop words and stemmed (Snowball English).
//! Han runs are segmented into words with jieba; documents are cut "for search"
//! (a compound word also yields its parts, so `知识` finds `知识库`), queries
//! are cut plainly. Mixed Chinese/English text is handled run by run.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

use jieba_rs::Jieba;
use rust_stemmers::{Algorithm, Stemmer};

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);
static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// English stop words (the classic SMART/Lucene core list, kept short on purpose).
const EN_STOP: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// [`EN_STOP`] packed into integers (see [`pack`]), sorted: a lookup compares
/// integers instead of calling `memcmp`, which showed in indexing profiles.
static EN_STOP_PACKED: LazyLock<Vec<u128>> = LazyLock::new(|| {
    let mut packed: Vec<u128> = EN_STOP.iter().filter_map(|w| pack(w)).collect();
    packed.sort_unstable();
    packed
});

/// A word of at most 16 bytes as an integer; `None` if it is longer.
fn pack(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    (bytes.len() <= 16).then(|| {
        let mut buf = [0u8; 16];
        buf[..bytes.len()].copy_from_slice(bytes);
        u128::from_be_bytes(buf)
    })
}

fn is_en_stop(lower: &str) -> bool {
    pack(lower).is_some_and(|p| EN_STOP_PACKED.binary_search(&p).is_ok())
}

/// Chinese function words that carry no topic.
const ZH_STOP: &[&str] = &[
    "的",
    "了",
    "是",
    "在",
    "和",
    "与",
    "及",
    "或",
    "也",
    "就",
    "都",
    "而",
    "被",
    "把",
    "对",
    "从",
    "以",
    "为",
    "中",
    "上",
    "下",
    "这",
    "那",
    "其",
    "之",
    "吗",
    "呢",
    "吧",
    "啊",
    "个",
    "有",
    "我",
    "你",
    "他",
    "她",
    "它",
    "们",
    "如何",
    "怎么",
    "什么",
    "哪些",
    "哪里",
    "为什么",
    "怎样",
    "可以",
    "一个",
];

/// How a text is being analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Indexing a chunk: Chinese compounds also yield their parts.
    Document,
    /// Analysing a query.
    Query,
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Whether `text` is in the Latin script (what an English-only embedding model can read): ASCII,
/// the Latin supplements and extensions, and general punctuation.
pub fn is_latin(text: &str) -> bool {
    text.chars().all(|c| matches!(u32::from(c), 0..=0x024F | 0x1E00..=0x1EFF | 0x2000..=0x206F))
}

/// Whether `text` holds a Han character (Chinese, or Japanese kanji).
pub fn has_han(text: &str) -> bool {
    text.chars().any(is_han)
}

/// Turns `text` into BM25 terms.
pub fn terms(text: &str, purpose: Purpose) -> Vec<String> {
    let mut out = Vec::new();
    each_term(text, purpose, &mut |t| out.push(t.to_owned()));
    out
}

/// Appends the terms of `text` to `out`, space-separated: the form stored
/// with each chunk and split by the BM25 index ([`super::bm25`]). Same terms as [`terms`], without a string per term.
pub fn push_terms(text: &str, purpose: Purpose, out: &mut String) {
    each_term(text, purpose, &mut |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    });
}

/// Calls `f` with each term of `text`, in order.
fn each_term(text: &str, purpose: Purpose, f: &mut dyn FnMut(&str)) {
    let mut start = 0;
    let mut han = None;
    for (i, c) in text.char_indices() {
        let this = is_han(c);
        if han != Some(this) {
            if let Some(was_han) = han {
                run_terms(&text[start..i], was_han, purpose, f);
            }
            start = i;
            han = Some(this);
        }
    }
    if let Some(was_han) = han {
        run_terms(&text[start..], was_han, purpose, f);
    }
}

/// Stems already seen on this thread: stemming is the costliest step of
/// indexing, and a corpus repeats its words (Zipf). Cleared when it is full.
const STEM_CACHE_MAX: usize = 100_000;

thread_local! {
    static STEMS: RefCell<HashMap<Box<str>, Box<str>>> = RefCell::new(HashMap::new());
}

fn with_stem(word: &str, f: &mut dyn FnMut(&str)) {
    STEMS.with_borrow_mut(|cache| {
        if let Some(stem) = cache.get(word) {
            f(stem);
            return;
        }
        if cache.len() >= STEM_CACHE_MAX {
            cache.clear();
        }
        let stem: Box<str> = STEMMER.stem(word).into();
        f(&stem);
        cache.insert(word.into(), stem);
    });
}

fn run_terms(run: &str, han: bool, purpose: Purpose, f: &mut dyn FnMut(&str)) {
    if han {
        let words = match purpose {
            Purpose::Document => JIEBA.cut_for_search(run, true),
            Purpose::Query => JIEBA.cut(run, true),
        };
        for w in words.into_iter().map(|t| t.word).filter(|w| !ZH_STOP.contains(w)) {
            f(w);
        }
        return;
    }
    // Most text is ASCII: lower-case it in one reused buffer (this loop is
    // the bulk of indexing time).
    let mut lower = String::new();
    for word in run.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        word_term(word, &mut lower, f);
    }
}

/// Calls `f` with the term of one Latin-script word (none for a stop word),
/// lower-cased in `lower`.
fn word_term(word: &str, lower: &mut String, f: &mut dyn FnMut(&str)) {
    lower.clear();
    if word.is_ascii() {
        lower.push_str(word);
        lower.make_ascii_lowercase();
    } else {
        lower.push_str(&word.to_lowercase());
    }
    if is_en_stop(lower) {
        return;
    }
    if lower.bytes().all(|b| b.is_ascii_alphabetic()) {
        with_stem(lower, f);
    } else {
        f(lower);
    }
}

/// Where `query`'s terms occur in `text`, to mark them: ranges in UTF-16
/// code units (as the window indexes strings), in order and not overlapping.
/// A Latin-script word is marked when its term is one of the query's (so
/// "running" marks "runs"); a Chinese word of the query is marked wherever it
/// occurs.
pub fn marks(text: &str, query: &str) -> Vec<[usize; 2]> {
    let wanted: std::collections::HashSet<String> = terms(query, Purpose::Query).into_iter().collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut bytes: Vec<(usize, usize)> = Vec::new();
    for han in wanted.iter().filter(|t| t.chars().any(is_han)) {
        bytes.extend(text.match_indices(han.as_str()).map(|(at, m)| (at, at + m.len())));
    }
    let mut lower = String::new();
    let mut word_start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let in_word = c.is_alphanumeric() && !is_han(c);
        match (word_start, in_word) {
            (None, true) => word_start = Some(i),
            (Some(start), false) => {
                word_start = None;
                let mut hit = false;
                word_term(&text[start..i], &mut lower, &mut |term| hit = wanted.contains(term));
                if hit {
                    bytes.push((start, i));
                }
            }
            _ => {}
        }
    }
    bytes.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(bytes.len());
    for (start, end) in bytes {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    // Byte offsets to UTF-16 offsets, in one pass.
    let mut out = Vec::with_capacity(merged.len());
    let (mut utf16, mut next) = (0, merged.iter().flat_map(|&(s, e)| [s, e]).peekable());
    let mut open = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), '\0'))) {
        while next.peek() == Some(&i) {
            next.next();
            match open.take() {
                None => open = Some(utf16),
                Some(start) => out.push([start, utf16]),
            }
        }
        utf16 += c.len_utf16();
    }
    out
}

/// Approximate token count used for chunk sizes: a Latin word or number is
/// one token, each Han character is one token.
pub fn token_count(text: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in text.chars() {
        if is_han(c) {
            count += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            if !in_word {
                count += 1;
            }
            in_word = true;
        } else {
            in_word = false;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_stemmed_and_stop_words_dropped() {
        assert_eq!(terms("The engines were running quickly", Purpose::Query), ["engin", "run", "quick"]);
    }

    #[test]
    fn chinese_is_segmented_into_words() {
        let t = terms("如何配置知识库的索引", Purpose::Query);
        assert!(t.contains(&"配置".to_owned()), "{t:?}");
        assert!(t.contains(&"知识库".to_owned()), "{t:?}");
        assert!(!t.contains(&"的".to_owned()), "{t:?}");
    }

    #[test]
    fn marks_the_query_terms_in_utf16_units() {
        let text = "Runs the tool; tool approval is asked. 工具审批在设置中。😀 run";
        let marked: Vec<String> = marks(text, "running tool approvals 审批")
            .iter()
            .map(|[s, e]| String::from_utf16(&text.encode_utf16().collect::<Vec<_>>()[*s..*e]).unwrap())
            .collect();
        assert_eq!(marked, ["Runs", "tool", "tool", "approval", "审批", "run"]);
        assert!(marks(text, "the of").is_empty(), "stop words mark nothing");
        assert!(marks(text, "").is_empty());
        // Adjacent hits are one mark.
        assert_eq!(marks("知识库", "知识 知识库"), [[0, 3]]);
    }

    #[test]
    fn documents_also_index_parts_of_compounds() {
        let t = terms("知识库", Purpose::Document);
        assert!(t.contains(&"知识".to_owned()) && t.contains(&"知识库".to_owned()), "{t:?}");
    }

    #[test]
    fn mixed_text_keeps_both_scripts() {
        let t = terms("使用SQLite存储Embeddings向量", Purpose::Query);
        assert!(t.contains(&"sqlite".to_owned()), "{t:?}");
        assert!(t.contains(&"embed".to_owned()), "{t:?}");
        assert!(t.contains(&"存储".to_owned()) && t.contains(&"向量".to_owned()), "{t:?}");
    }

    #[test]
    fn stop_words_are_found_by_their_packed_form() {
        assert!(EN_STOP.iter().all(|w| is_en_stop(w)));
        assert!(!is_en_stop("engine") && !is_en_stop("") && !is_en_stop("yourselvesyourselves"));
        assert_eq!(terms("THE Über Café 42x", Purpose::Query), ["über", "café", "42x"]);
    }

    #[test]
    fn pushed_terms_are_the_terms_space_separated() {
        let text = "Running engines 运行知识库 running again";
        let mut out = String::from("heading");
        push_terms(text, Purpose::Document, &mut out);
        // Twice: the second time the stems come from the cache.
        assert_eq!(out, format!("heading {}", terms(text, Purpose::Document).join(" ")));
        assert_eq!(terms(text, Purpose::Query)[..2], ["run", "engin"]);
        assert_eq!(terms(text, Purpose::Query).last().map(String::as_str), Some("run"));
    }

    #[test]
    fn token_count_counts_words_and_han_characters() {
        assert_eq!(token_count("hello, world 42"), 3);
        assert_eq!(token_count("知识库 search"), 4);
    }
}
