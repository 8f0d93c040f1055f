//! Text for keyword search: [`analyze`] turns a text into BM25 terms (English
//! stemming, Chinese segmentation) and [`bm25`] ranks documents by them in
//! memory. The knowledge base ([`crate::rag`]) and tool search
//! ([`crate::agent`]) both use them, so a query finds a chunk and a tool the
//! same way; they depend on nothing else in the crate. Here too: where to cut a text without
//! splitting a character.

pub mod analyze;
pub mod bm25;

/// The byte where character number `chars` (0-based) of `text` starts; its length past the end.
pub fn byte_index_of_char(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

/// `text`'s first `chars` characters, with "…" when it was longer.
pub fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The largest character boundary of `text` at or below byte `max`.
pub fn floor_char_boundary(text: &str, max: usize) -> usize {
    if max >= text.len() {
        return text.len();
    }
    (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cuts_fall_between_characters() {
        assert_eq!(super::byte_index_of_char("aé北x", 2), 3);
        assert_eq!(super::byte_index_of_char("ab", 5), 2);
        assert_eq!(super::cut("aé北x", 3), "aé北…");
        assert_eq!(super::cut("aé北", 3), "aé北");
        assert_eq!(super::floor_char_boundary("aé北", 4), 3);
        assert_eq!(super::floor_char_boundary("ab", 9), 2);
    }
}
