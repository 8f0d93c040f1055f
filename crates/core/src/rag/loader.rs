//! Loaders: turn a file into text, or say plainly why it was skipped.
//!
//! The kind comes from the extension: Markdown, plain text, source code, HTML
//! (text only, headings kept as Markdown headings so chunks keep their
//! section), PDF (its text layer) and DOCX (the paragraphs in
//! `word/document.xml`). Text that is not UTF-8 is decoded when its encoding
//! can be recognised (BOM, or a confident guess such as GBK or Shift-JIS),
//! otherwise the file is reported. Nothing here panics on hostile input: a
//! binary file named `.txt`, a FIFO, a 2 GB file or a broken PDF each come back
//! as a [`Skip`].

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The kinds of file the knowledge base reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    Markdown,
    Text,
    Code,
    Html,
    Pdf,
    Docx,
}

impl DocKind {
    /// The kind for a file name, or `None` for files the knowledge base does not read.
    pub fn for_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" | "markdown" | "mdx" => Self::Markdown,
            "txt" | "text" | "rst" | "org" | "csv" | "log" => Self::Text,
            "html" | "htm" | "xhtml" => Self::Html,
            "pdf" => Self::Pdf,
            "docx" => Self::Docx,
            "rs" | "py" | "js" | "jsx" | "ts" | "tsx" | "go" | "java" | "kt" | "c" | "h" | "cc" | "cpp" | "hpp"
            | "cs" | "rb" | "php" | "swift" | "scala" | "sh" | "bash" | "zsh" | "sql" | "lua" | "r" | "toml"
            | "yaml" | "yml" | "json" | "css" | "scss" | "vue" | "svelte" | "dart" | "ex" | "exs" | "hs" | "ml"
            | "zig" => Self::Code,
            _ => return None,
        })
    }

    /// Name stored in the index and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Code => "code",
            Self::Html => "html",
            Self::Pdf => "pdf",
            Self::Docx => "docx",
        }
    }

    /// Whether the chunker should read Markdown structure (headings, fences).
    pub fn is_markdown_like(self) -> bool {
        matches!(self, Self::Markdown | Self::Html | Self::Docx)
    }
}

/// Why a file was not indexed. Reported per file; the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Skip {
    /// The extension is not one the knowledge base reads.
    #[error("unsupported file type")]
    Unsupported,
    /// Not a regular file (FIFO, socket, device).
    #[error("not a regular file")]
    NotRegular,
    /// Larger than the configured limit.
    #[error("file is {size} bytes, above the {limit}-byte limit")]
    TooLarge { size: u64, limit: u64 },
    /// Looks binary although the extension says text.
    #[error("binary content in a text file")]
    Binary,
    /// Not UTF-8 and no encoding could be recognised.
    #[error("text is not UTF-8 and its encoding could not be recognised")]
    Undecodable,
    /// A PDF with no text layer (a scan).
    #[error("no text layer (a scanned PDF needs OCR first)")]
    NoText,
    /// The document's structure could not be read.
    #[error("could not read the {format} structure: {detail}")]
    Malformed { format: String, detail: String },
    /// The file could not be read (permissions, dangling link, vanished).
    #[error("could not be read: {detail}")]
    Unreadable { detail: String },
}

/// Extracted text of one file.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub kind: DocKind,
    pub text: String,
    /// The encoding the text was decoded from, when it was not UTF-8.
    pub decoded_from: Option<&'static str>,
}

/// Reads the raw bytes of a file the loaders accept, refusing non-regular and oversized files.
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>, Skip> {
    let unreadable = |e: std::io::Error| Skip::Unreadable { detail: e.to_string() };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(Skip::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(Skip::TooLarge { size: meta.len(), limit: max_bytes });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    File::open(path).and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)).map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Skip::TooLarge { size: bytes.len() as u64, limit: max_bytes });
    }
    Ok(bytes)
}

/// Extracts the text of `bytes`, read from a file of `kind`.
pub fn extract(kind: DocKind, bytes: &[u8]) -> Result<Loaded, Skip> {
    match kind {
        DocKind::Markdown | DocKind::Text | DocKind::Code => {
            let (text, decoded_from) = decode_text(bytes)?;
            Ok(Loaded { kind, text, decoded_from })
        }
        DocKind::Html => {
            let (text, decoded_from) = decode_text(bytes)?;
            Ok(Loaded { kind, text: html_to_text(&text), decoded_from })
        }
        DocKind::Pdf => pdf_text(bytes).map(|text| Loaded { kind, text, decoded_from: None }),
        DocKind::Docx => docx_text(bytes).map(|text| Loaded { kind, text, decoded_from: None }),
    }
}

fn decode_text(bytes: &[u8]) -> Result<(String, Option<&'static str>), Skip> {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        if had_errors {
            return Err(Skip::Undecodable);
        }
        let from = (encoding != encoding_rs::UTF_8).then(|| encoding.name());
        return Ok((text.into_owned(), from));
    }
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) || looks_binary(head) {
        return Err(Skip::Binary);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((text.to_owned(), None));
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    let (encoding, confident) = detector.guess_assess(None, true);
    let (text, _, had_errors) = encoding.decode(bytes);
    if !confident || had_errors {
        return Err(Skip::Undecodable);
    }
    Ok((text.into_owned(), Some(encoding.name())))
}

/// Control characters other than whitespace make up a noticeable share of binary files.
fn looks_binary(head: &[u8]) -> bool {
    let control = head.iter().filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b)).count();
    control * 20 > head.len().max(1)
}

/// Text of an HTML page: scripts, styles and tags dropped, entities decoded,
/// block elements on their own lines and headings as Markdown headings.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |end| &rest[end + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            rest = "";
            break;
        };
        let tag = rest[1..gt].trim().to_ascii_lowercase();
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if !closing && matches!(name.as_str(), "script" | "style" | "noscript" | "template") {
            let close = format!("</{name}");
            rest = rest.to_ascii_lowercase().find(&close).map_or("", |at| {
                let after = &rest[at..];
                after.find('>').map_or("", |gt| &after[gt + 1..])
            });
            continue;
        }
        match name.as_str() {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if !closing => {
                let level = usize::from(name.as_bytes()[1] - b'0');
                out.push_str("\n\n");
                out.push_str(&"#".repeat(level));
                out.push(' ');
            }
            "p" | "div" | "br" | "li" | "tr" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "section" | "article"
            | "pre" | "table" | "ul" | "ol" | "blockquote" | "header" | "footer" | "title" => out.push_str("\n\n"),
            "td" | "th" => out.push(' '),
            _ => {}
        }
    }
    out.push_str(&decode_entities(rest));
    tidy_lines(&out)
}

/// Collapses runs of spaces and of blank lines.
fn tidy_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = true;
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
        } else {
            out.push_str(&line);
            out.push('\n');
            blank = false;
        }
    }
    out
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn pdf_text(bytes: &[u8]) -> Result<String, Skip> {
    // pdf-extract panics on some malformed files; a bad PDF must not take the run down.
    let result = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(bytes));
    let text = match result {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => return Err(Skip::Malformed { format: "PDF".into(), detail: e.to_string() }),
        Err(_) => return Err(Skip::Malformed { format: "PDF".into(), detail: "the PDF parser gave up".into() }),
    };
    let text = tidy_lines(&text);
    if text.trim().is_empty() { Err(Skip::NoText) } else { Ok(text) }
}

fn docx_text(bytes: &[u8]) -> Result<String, Skip> {
    let malformed = |detail: String| Skip::Malformed { format: "DOCX".into(), detail };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| malformed(e.to_string()))?;
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .map_err(|e| malformed(format!("word/document.xml: {e}")))?
        .take(64 << 20)
        .read_to_string(&mut xml)
        .map_err(|e| malformed(e.to_string()))?;
    Ok(docx_xml_to_text(&xml))
}

/// Paragraph texts of a WordprocessingML body; `Heading N` styles become Markdown headings.
fn docx_xml_to_text(xml: &str) -> String {
    let mut out = String::new();
    for para in xml.split("</w:p>") {
        let mut line = String::new();
        let mut heading = None;
        if let Some(at) = para.find("<w:pStyle w:val=\"") {
            let style = &para[at + 17..];
            let style = &style[..style.find('"').unwrap_or(0)];
            heading = style
                .strip_prefix("Heading")
                .or_else(|| style.strip_prefix("heading"))
                .and_then(|n| n.trim().parse::<usize>().ok());
        }
        let mut rest = para;
        while let Some(at) = rest.find("<w:t") {
            rest = &rest[at + 4..];
            // `<w:t>` or `<w:t xml:space="preserve">`, not `<w:tab/>` or `<w:tbl>`.
            if !(rest.starts_with('>') || rest.starts_with(' ')) {
                continue;
            }
            let Some(gt) = rest.find('>') else { break };
            if rest[..gt].ends_with('/') {
                rest = &rest[gt + 1..];
                continue;
            }
            let body = &rest[gt + 1..];
            let end = body.find("</w:t>").unwrap_or(body.len());
            line.push_str(&decode_entities(&body[..end]));
            rest = &body[end..];
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(level) = heading {
            out.push_str(&"#".repeat(level.clamp(1, 6)));
            out.push(' ');
        }
        out.push_str(line);
        out.push_str("\n\n");
    }
    out
}

/// Whether `path` has the extension of a kind the loaders read.
pub fn is_supported(path: &Path) -> bool {
    DocKind::for_path(path).is_some()
}

/// The `file://` URI of a document (percent-encoded, as clients expect).
pub fn file_uri(path: &std::path::Path) -> String {
    url::Url::from_file_path(path).map_or_else(|()| format!("file://{}", path.display()), String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_extensions() {
        assert_eq!(DocKind::for_path(Path::new("a/README.MD")), Some(DocKind::Markdown));
        assert_eq!(DocKind::for_path(Path::new("main.rs")), Some(DocKind::Code));
        assert_eq!(DocKind::for_path(Path::new("photo.jpg")), None);
        assert_eq!(DocKind::for_path(Path::new("Makefile")), None);
    }

    #[test]
    fn html_keeps_text_and_headings_not_tags() {
        let html = "<html><head><title>T</title><style>p{color:red}</style><script>var x = '<p>';</script></head>\
                    <body><h2>Install &amp; run</h2><p>Use <b>cargo</b>&nbsp;build &#x4E2D;</p><!-- hidden --></body></html>";
        let text = html_to_text(html);
        assert!(text.contains("## Install & run"), "{text}");
        assert!(text.contains("Use cargo build 中"), "{text}");
        assert!(!text.contains("color") && !text.contains("var x") && !text.contains("hidden"), "{text}");
        assert!(!text.contains('<'), "{text}");
    }

    #[test]
    fn gbk_text_is_decoded() {
        let (bytes, _, _) = encoding_rs::GBK.encode("知识库支持中文文档的检索，这是一个用国标码保存的文件。");
        let loaded = extract(DocKind::Text, &bytes).unwrap();
        assert!(loaded.text.contains("知识库"), "{}", loaded.text);
        assert_eq!(loaded.decoded_from, Some("GBK"));
    }

    #[test]
    fn utf16_with_bom_is_decoded() {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend("hello".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(extract(DocKind::Text, &bytes).unwrap().text, "hello");
    }

    #[test]
    fn binary_named_txt_is_skipped() {
        let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
        assert_eq!(extract(DocKind::Text, &bytes).unwrap_err(), Skip::Binary);
    }

    #[test]
    fn docx_paragraphs_and_headings() {
        let xml = r#"<w:document><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Title</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:r><w:tab/><w:t>world &amp; more</w:t></w:r></w:p></w:body></w:document>"#;
        assert_eq!(docx_xml_to_text(xml), "# Title\n\nHello world & more\n\n");
    }

    #[test]
    fn garbage_pdf_is_reported_not_a_panic() {
        let err = extract(DocKind::Pdf, b"%PDF-1.4 this is not really a pdf").unwrap_err();
        assert!(matches!(err, Skip::Malformed { .. }), "{err:?}");
    }
}
