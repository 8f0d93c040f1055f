//! What a user may attach to a message, checked and read before it is stored.
//!
//! - Images (PNG, JPEG, GIF, WebP) and audio, up to [`MAX_MEDIA`] bytes, are
//!   kept base64 and given to the model as they are.
//! - Documents are read to text by the knowledge base's loaders
//!   ([`crate::rag::loader`]), so an attachment reads as the same file indexed
//!   would: PDF (its text layer), Word (`.docx`), HTML, Markdown, code and
//!   text in any encoding the loaders recognise. A document may be up to
//!   [`MAX_DOCUMENT`] bytes, its text up to [`MAX_TEXT`].
//!
//! Each refusal names the attachment and says why.

use std::path::Path;

use base64::Engine as _;

use crate::conversations::{Attachment, Media};
use crate::rag::loader::{self, DocKind, Skip};

/// The largest attached text, in bytes (about 250,000 tokens: more than any
/// model's context).
pub const MAX_TEXT: usize = 1 << 20;

/// The largest attached image or audio clip, in bytes once decoded.
pub const MAX_MEDIA: usize = 10 << 20;

/// The largest attached document (a PDF or Word file), in bytes.
pub const MAX_DOCUMENT: usize = 20 << 20;

/// The image types every provider takes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Media types by file extension, for files read from disk.
const BY_EXTENSION: [(&str, &str); 10] = [
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("wav", "audio/wav"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("flac", "audio/flac"),
    ("m4a", "audio/mp4"),
];

const MIB: f64 = (1 << 20) as f64;

/// Why something cannot be attached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    /// A kind of file no model takes and no loader reads.
    #[error(
        "{title}: {what} cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, a PDF, a Word document or text"
    )]
    Kind { title: String, what: String },
    #[error("{title} is {:.1} MB; an attachment can be at most {:.0} MB", *size as f64 / MIB, *limit as f64 / MIB)]
    TooBig { title: String, size: usize, limit: usize },
    #[error("{title}: the attached {what} data is not base64 ({source})")]
    NotBase64 {
        title: String,
        what: String,
        #[source]
        source: base64::DecodeError,
    },
    /// The document could not be read to text.
    #[error("{title}: {reason}")]
    Unreadable { title: String, reason: Skip },
}

/// Text attached under `title`.
pub fn text(title: String, text: String) -> Result<Attachment, AttachError> {
    if text.len() > MAX_TEXT {
        return Err(AttachError::TooBig { title, size: text.len(), limit: MAX_TEXT });
    }
    Ok(Attachment { title, uri: None, text, media: None })
}

/// The bytes of base64 `data` that may hold at most `limit` of them.
fn decode(title: &str, what: &str, data: &str, limit: usize) -> Result<Vec<u8>, AttachError> {
    // Base64 takes 4 characters for 3 bytes: a longer text is over the limit whatever it holds.
    if data.len() / 4 * 3 > limit + 2 {
        return Err(AttachError::TooBig { title: title.to_owned(), size: data.len() / 4 * 3, limit });
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).map_err(|source| AttachError::NotBase64 {
        title: title.to_owned(),
        what: what.to_owned(),
        source,
    })?;
    if bytes.len() > limit {
        return Err(AttachError::TooBig { title: title.to_owned(), size: bytes.len(), limit });
    }
    Ok(bytes)
}

/// An image or audio clip: base64 `data` of type `mime_type`.
pub fn media(title: String, mime_type: &str, data: String) -> Result<Attachment, AttachError> {
    let mime_type = mime_type.trim().to_ascii_lowercase();
    if !(IMAGE_TYPES.contains(&mime_type.as_str()) || mime_type.starts_with("audio/")) {
        return Err(AttachError::Kind { title, what: mime_type });
    }
    decode(&title, &mime_type, &data, MAX_MEDIA)?;
    Ok(Attachment { title, uri: None, text: String::new(), media: Some(Media { mime_type, data }) })
}

/// A document sent as base64 `data`, read as [`document`] reads it.
pub fn encoded_document(title: String, data: &str) -> Result<Attachment, AttachError> {
    let bytes = decode(&title, "file", data, MAX_DOCUMENT)?;
    document(title, &bytes)
}

/// A document named `title` (its extension says how to read it; none reads as
/// text), read to text.
pub fn document(title: String, bytes: &[u8]) -> Result<Attachment, AttachError> {
    if bytes.len() > MAX_DOCUMENT {
        return Err(AttachError::TooBig { title, size: bytes.len(), limit: MAX_DOCUMENT });
    }
    let kind = DocKind::for_path(Path::new(&title));
    match loader::extract(kind.unwrap_or(DocKind::Text), bytes) {
        Ok(loaded) => text(title, loaded.text),
        // A file of a kind the loaders do not know, and not text either: an archive, a program.
        Err(Skip::Binary | Skip::Undecodable) if kind.is_none() => {
            Err(AttachError::Kind { title, what: "a binary file".into() })
        }
        Err(reason) => Err(AttachError::Unreadable { title, reason }),
    }
}

/// A file from disk, named after it: an image or audio clip by its extension,
/// else a document.
pub fn file(path: &Path) -> Result<Attachment, AttachError> {
    let title = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let mime_type = BY_EXTENSION.iter().find(|(ext, _)| extension.as_deref() == Some(ext)).map(|(_, m)| *m);
    let limit = if mime_type.is_some() { MAX_MEDIA } else { MAX_DOCUMENT };
    let bytes = loader::read_bytes(path, limit as u64).map_err(|reason| match reason {
        Skip::TooLarge { size, .. } => {
            AttachError::TooBig { title: title.clone(), size: usize::try_from(size).unwrap_or(usize::MAX), limit }
        }
        reason => AttachError::Unreadable { title: title.clone(), reason },
    })?;
    match mime_type {
        Some(mime_type) => media(title, mime_type, base64::engine::general_purpose::STANDARD.encode(bytes)),
        None => document(title, &bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_media_by_extension_else_documents_read_to_text() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let png = file(&write("Dot.PNG", b"\x89PNG")).unwrap();
        assert_eq!(png.title, "Dot.PNG");
        assert_eq!(png.media, Some(Media { mime_type: "image/png".into(), data: "iVBORw==".into() }));
        let notes = file(&write("notes.md", "# 笔记\n".as_bytes())).unwrap();
        assert_eq!((notes.title.as_str(), notes.text.as_str(), notes.media), ("notes.md", "# 笔记\n", None));
        // GBK, as a Windows editor in China saves it, reads as the knowledge base reads it.
        let gbk = encoding_rs::GBK.encode("上海明天多云转小雨，气温十五度。").0;
        assert_eq!(file(&write("weather.txt", &gbk)).unwrap().text, "上海明天多云转小雨，气温十五度。");
        let page = file(&write("page.html", b"<h1>Title</h1><p>Body &amp; more</p>")).unwrap();
        assert!(page.text.contains("# Title") && page.text.contains("Body & more"), "{}", page.text);

        let pdf = file(&write("paper.pdf", &crate::rag::tests::pdf_with("Tidal bulges come from the moon"))).unwrap();
        assert!(pdf.text.contains("Tidal bulges come from the moon"), "{:?}", pdf.text);
        let memo = file(&write("memo.docx", &crate::rag::tests::docx_with("Axolotls regrow limbs"))).unwrap();
        assert!(memo.text.contains("Axolotls regrow limbs"), "{:?}", memo.text);

        let refused = |path: &Path| file(path).unwrap_err().to_string();
        assert_eq!(
            refused(&write("scan.pdf", &crate::rag::tests::blank_pdf())),
            "scan.pdf: no text layer (a scanned PDF needs OCR first)"
        );
        assert_eq!(
            refused(&write("backup.zip", b"PK\x03\x04\0\0\xff\xfe")),
            "backup.zip: a binary file cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, a PDF, a Word document or text"
        );
        assert_eq!(refused(&write("broken.pdf", b"%PDF-1.7 not really")), format!("broken.pdf: {}", pdf_skip()));
        assert_eq!(
            refused(&write("big.log", &vec![b'x'; MAX_TEXT + 1])),
            "big.log is 1.0 MB; an attachment can be at most 1 MB"
        );
        assert!(refused(&dir.path().join("gone.txt")).starts_with("gone.txt: could not be read:"));
    }

    /// How the loader refuses a PDF it cannot parse.
    fn pdf_skip() -> Skip {
        loader::extract(DocKind::Pdf, b"%PDF-1.7 not really").unwrap_err()
    }

    #[test]
    fn media_must_be_a_type_models_take_in_base64_within_the_limit() {
        let ok = media("a".into(), " Image/WebP ", "AAAA".into()).unwrap();
        assert_eq!(ok.media.unwrap().mime_type, "image/webp");
        assert!(media("a".into(), "audio/x-whatever", "AAAA".into()).is_ok());
        let refused = |mime: &str, data: String| media("a".into(), mime, data).unwrap_err().to_string();
        assert_eq!(
            refused("image/svg+xml", "AAAA".into()),
            "a: image/svg+xml cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, a PDF, a Word document or text"
        );
        assert!(refused("image/png", "AA=A".into()).starts_with("a: the attached image/png data is not base64"));
        let over = "A".repeat((MAX_MEDIA + 3) / 3 * 4 + 4);
        assert_eq!(refused("image/png", over), "a is 10.0 MB; an attachment can be at most 10 MB");
        assert!(text("t".into(), "x".repeat(MAX_TEXT)).is_ok());
        assert_eq!(
            encoded_document("notes.md".into(), "IyBOb3Rlcw==").unwrap().text,
            "# Notes",
            "a document sent as base64"
        );
        assert!(
            encoded_document("x.md".into(), "%%%")
                .unwrap_err()
                .to_string()
                .starts_with("x.md: the attached file data is not base64")
        );
        let huge = vec![b' '; MAX_DOCUMENT + 1];
        assert_eq!(
            document("scan.pdf".into(), &huge).unwrap_err().to_string(),
            "scan.pdf is 20.0 MB; an attachment can be at most 20 MB"
        );
    }
}
