//! Text for keyword search: [`analyze`] turns a text into BM25 terms (English
//! stemming, Chinese segmentation) and [`bm25`] ranks documents by them in
//! memory. The knowledge base ([`crate::rag`]) and tool search
//! ([`crate::agent`]) both use them, so a query finds a chunk and a tool the
//! same way; they depend on nothing else in the crate.

pub mod analyze;
pub mod bm25;
