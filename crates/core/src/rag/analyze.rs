//! Text analysis for BM25: the same function turns documents and queries into terms.
//!
//! Latin-script runs are split on anything that is not a letter or digit,
//! lower-cased, stripped of English stop words and stemmed (Snowball English).
//! Han runs are segmented into words with jieba; documents are cut "for search"
//! (a compound word also yields its parts, so `知识` finds `知识库`), queries
//! are cut plainly. Mixed Chinese/English text is handled run by run.

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

/// Turns `text` into BM25 terms.
pub fn terms(text: &str, purpose: Purpose) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut han = None;
    for (i, c) in text.char_indices() {
        let this = is_han(c);
        if han != Some(this) {
            if let Some(was_han) = han {
                push_run(&text[start..i], was_han, purpose, &mut out);
            }
            start = i;
            han = Some(this);
        }
    }
    if let Some(was_han) = han {
        push_run(&text[start..], was_han, purpose, &mut out);
    }
    out
}

fn push_run(run: &str, han: bool, purpose: Purpose, out: &mut Vec<String>) {
    if han {
        let words = match purpose {
            Purpose::Document => JIEBA.cut_for_search(run, true),
            Purpose::Query => JIEBA.cut(run, true),
        };
        out.extend(words.into_iter().map(|t| t.word).filter(|w| !ZH_STOP.contains(w)).map(str::to_owned));
        return;
    }
    for word in run.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let lower = word.to_lowercase();
        if EN_STOP.contains(&lower.as_str()) {
            continue;
        }
        let stemmed =
            if lower.chars().all(|c| c.is_ascii_alphabetic()) { STEMMER.stem(&lower).into_owned() } else { lower };
        out.push(stemmed);
    }
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
    fn token_count_counts_words_and_han_characters() {
        assert_eq!(token_count("hello, world 42"), 3);
        assert_eq!(token_count("知识库 search"), 4);
    }
}
