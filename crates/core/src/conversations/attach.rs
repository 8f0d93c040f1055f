//! What a user may attach to a message, checked before it is stored: images
//! (PNG, JPEG, GIF, WebP) and audio up to [`MAX_MEDIA`] bytes, kept base64 and
//! given to the model as they are, and text up to [`MAX_TEXT`] bytes. Each
//! refusal names the attachment and says why.

use std::path::Path;

use base64::Engine as _;

use super::{Attachment, ConversationError, Media};

/// The largest attached text, in bytes (about 250,000 tokens: more than any
/// model's context).
pub const MAX_TEXT: usize = 1 << 20;

/// The largest attached image or audio clip, in bytes once decoded.
pub const MAX_MEDIA: usize = 10 << 20;

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

fn invalid(message: String) -> ConversationError {
    ConversationError::Invalid(message)
}

fn too_big(title: &str, size: usize, limit: usize) -> ConversationError {
    let mb = |n: usize| n as f64 / f64::from(1 << 20);
    invalid(format!("{title} is {:.1} MB; an attachment can be at most {:.0} MB", mb(size), mb(limit)))
}

impl Attachment {
    /// Text attached under `title`.
    pub fn text(title: String, text: String) -> Result<Self, ConversationError> {
        if text.len() > MAX_TEXT {
            return Err(too_big(&title, text.len(), MAX_TEXT));
        }
        Ok(Self { title, uri: None, text, media: None })
    }

    /// An image or audio clip, base64-encoded `data` of type `mime_type`.
    pub fn media(title: String, mime_type: &str, data: String) -> Result<Self, ConversationError> {
        let mime_type = mime_type.trim().to_ascii_lowercase();
        if !(IMAGE_TYPES.contains(&mime_type.as_str()) || mime_type.starts_with("audio/")) {
            return Err(invalid(format!(
                "{title}: {mime_type} cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, or text"
            )));
        }
        // Base64 takes 4 characters for 3 bytes: a longer text is over the limit whatever it holds.
        if data.len() / 4 * 3 > MAX_MEDIA + 2 {
            return Err(too_big(&title, data.len() / 4 * 3, MAX_MEDIA));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data)
            .map_err(|e| invalid(format!("{title}: the attached {mime_type} data is not base64 ({e})")))?;
        if bytes.len() > MAX_MEDIA {
            return Err(too_big(&title, bytes.len(), MAX_MEDIA));
        }
        Ok(Self { title, uri: None, text: String::new(), media: Some(Media { mime_type, data }) })
    }

    /// A file from disk, named after it: an image or audio clip by its
    /// extension, else UTF-8 text.
    pub fn from_file(path: &Path) -> Result<Self, ConversationError> {
        let title = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let unreadable = |e: std::io::Error| invalid(format!("{}: cannot read it: {e}", path.display()));
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        let mime_type = BY_EXTENSION.iter().find(|(ext, _)| extension.as_deref() == Some(ext)).map(|(_, m)| *m);
        let limit = if mime_type.is_some() { MAX_MEDIA } else { MAX_TEXT };
        let size = usize::try_from(std::fs::metadata(path).map_err(unreadable)?.len()).unwrap_or(usize::MAX);
        if size > limit {
            return Err(too_big(&title, size, limit));
        }
        let bytes = std::fs::read(path).map_err(unreadable)?;
        match mime_type {
            Some(mime_type) => {
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                Self::media(title, mime_type, data)
            }
            None => match String::from_utf8(bytes) {
                Ok(text) if !text.contains('\0') => Self::text(title, text),
                _ => Err(invalid(format!(
                    "{title} is not a text file; attach text, a PNG, JPEG, GIF or WebP image, or audio"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_media_by_extension_else_text() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let png = Attachment::from_file(&write("Dot.PNG", b"\x89PNG")).unwrap();
        assert_eq!(png.title, "Dot.PNG");
        assert_eq!(png.media, Some(Media { mime_type: "image/png".into(), data: "iVBORw==".into() }));
        let notes = Attachment::from_file(&write("notes.md", "# 笔记\n".as_bytes())).unwrap();
        assert_eq!((notes.title.as_str(), notes.text.as_str(), notes.media), ("notes.md", "# 笔记\n", None));

        let refused = |path: &Path| Attachment::from_file(path).unwrap_err().to_string();
        assert_eq!(
            refused(&write("paper.pdf", b"%PDF-1.7\n\xff\xfe\0")),
            "paper.pdf is not a text file; attach text, a PNG, JPEG, GIF or WebP image, or audio"
        );
        assert!(refused(&write("nul.txt", b"a\0b")).starts_with("nul.txt is not a text file"));
        assert_eq!(
            refused(&write("big.log", &vec![b'x'; MAX_TEXT + 1])),
            "big.log is 1.0 MB; an attachment can be at most 1 MB"
        );
        assert!(refused(&dir.path().join("gone.txt")).contains("gone.txt: cannot read it:"));
    }

    #[test]
    fn media_must_be_a_type_models_take_in_base64_within_the_limit() {
        let ok = Attachment::media("a".into(), " Image/WebP ", "AAAA".into()).unwrap();
        assert_eq!(ok.media.unwrap().mime_type, "image/webp");
        assert!(Attachment::media("a".into(), "audio/x-whatever", "AAAA".into()).is_ok());
        let refused = |mime: &str, data: String| Attachment::media("a".into(), mime, data).unwrap_err().to_string();
        assert_eq!(
            refused("image/svg+xml", "AAAA".into()),
            "a: image/svg+xml cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, or text"
        );
        assert!(refused("image/png", "AA=A".into()).starts_with("a: the attached image/png data is not base64"));
        let over = "A".repeat((MAX_MEDIA + 3) / 3 * 4 + 4);
        assert_eq!(refused("image/png", over), "a is 10.0 MB; an attachment can be at most 10 MB");
        assert!(Attachment::text("t".into(), "x".repeat(MAX_TEXT)).is_ok());
    }
}
