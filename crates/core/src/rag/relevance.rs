//! A relevance floor that holds across collections.
//!
//! BM25 scores grow with a collection's size and a query's length, and RRF scores are ranks, so
//! neither can say "this passage matches nothing the user asked". [`term_match`] can: the share of
//! the query's weight a passage's words cover, each query term weighted by how rare it is in the
//! collection (`Bm25Index::term_weight` in `text::bm25`), so that "[use-tool] please echo something"
//! matched by a FAQ's "use" and "tool" alone scores low while "how do I add a server" matched by
//! "add" and "server" scores high. Words that only make a request polite ([`FILLER`]) carry no
//! weight: no collection has "please", which would otherwise count as the rarest word of all.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::text::analyze::{self, Purpose};

/// Words of a request that say nothing about what is asked, in English and Chinese.
const FILLER: &str = "please pls kindly thanks thank you hi hello hey tell me something anything someone \
                      somebody 请 请问 麻烦 一下 谢谢 你好 帮我 告诉 我";

static FILLER_TERMS: LazyLock<HashSet<String>> =
    LazyLock::new(|| analyze::terms(FILLER, Purpose::Query).into_iter().collect());

/// The distinct terms of an analysed query that say what is asked, in order.
pub fn content_terms(terms: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for term in terms {
        if !FILLER_TERMS.contains(term) && !out.contains(&term.as_str()) {
            out.push(term);
        }
    }
    out
}

/// The weighted share (0 to 1) of `terms` among a passage's analysed `words` (its heading's and
/// text's, as stored); `weights[i]` is `terms[i]`'s. 0 when no term is left to match.
pub fn term_match(terms: &[&str], weights: &[f64], words: &HashSet<&str>) -> f64 {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let found: f64 = terms.iter().zip(weights).filter(|(t, _)| words.contains(*t)).map(|(_, w)| w).sum();
    found / total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Vec<String> {
        content_terms(&analyze::terms(text, Purpose::Query)).into_iter().map(str::to_owned).collect()
    }

    fn words(text: &str) -> String {
        let mut out = String::new();
        analyze::push_terms(text, Purpose::Document, &mut out);
        out
    }

    #[test]
    fn filler_words_are_not_what_is_asked() {
        assert_eq!(query("Please tell me how to add a server, thanks! Add it."), ["add", "server"]);
        assert_eq!(query("请问如何添加服务器"), query("如何添加服务器"));
        assert!(query("please").is_empty());
    }

    #[test]
    fn rare_terms_weigh_more() {
        let terms = query("use tool echo");
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        // "use" and "tool" are everywhere (weight 0.5), "echo" nowhere (as rare as can be: 3).
        let weights = [0.5, 0.5, 3.0];
        let tools = words("Tools: how to use a tool.");
        let matched = term_match(&terms, &weights, &tools.split(' ').collect());
        assert!((matched - 1.0 / 4.0).abs() < 1e-9, "{matched}");
        let echo = words("echo what a tool gets");
        assert!((term_match(&terms, &weights, &echo.split(' ').collect()) - 3.5 / 4.0).abs() < 1e-9);
        assert_eq!(term_match(&[], &[], &HashSet::new()), 0.0);
    }
}
