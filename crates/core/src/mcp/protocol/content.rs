//! Tool results for the model, for the UI and for the trace inspector, each bounded whatever a server
//! sends:
//!
//! - [`ModelResult`]: text capped at [`ResultLimits::model_chars`] and media at
//!   [`ResultLimits::model_media_bytes`], with a note that says what was cut;
//! - [`UiResult`]: a larger copy, capped at [`ResultLimits::ui_bytes`];
//! - [`BoundedJson`]: raw JSON-RPC text for the trace inspector, written through a writer that stops
//!   keeping bytes at the cap, so a huge message is never copied whole.
//!
//! It also reads the text of a prompt ([`prompt_text`]) and a resource ([`resource_text`]), and shows
//! a resource on the server's page ([`resource_preview`]).

use std::io::{self, Write};

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, ResourceContents};
use serde::{Deserialize, Serialize};

use crate::llm::ContentPart;
use crate::text::{byte_index_of_char, floor_char_boundary};

/// Size limits for one tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultLimits {
    /// Characters of text the model gets (text blocks, text resources, structured content).
    pub model_chars: usize,
    /// Base64 bytes of images and audio the model gets, in total.
    pub model_media_bytes: usize,
    /// Bytes of the copy kept for the UI.
    pub ui_bytes: usize,
    /// Bytes of each raw JSON-RPC message kept for the trace inspector.
    pub trace_bytes: usize,
}

impl Default for ResultLimits {
    fn default() -> Self {
        Self { model_chars: 100_000, model_media_bytes: 4 << 20, ui_bytes: 10 << 20, trace_bytes: 256 << 10 }
    }
}

/// The result as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResult {
    /// Text, media and links, in the server's order; a truncation note comes last.
    pub parts: Vec<ContentPart>,
    /// The server flagged the result as an error.
    pub is_error: bool,
    /// What was left out, if anything.
    pub truncated: Option<ModelTruncation>,
}

/// What the model's copy left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelTruncation {
    /// Characters of text the server sent.
    pub total_chars: usize,
    /// Characters of text kept.
    pub kept_chars: usize,
    /// Images and audio replaced by a note because they did not fit.
    pub media_dropped: usize,
}

/// Appends text to the model's parts while the character budget lasts.
struct TextBudget {
    limit: usize,
    kept: usize,
    total: usize,
}

impl TextBudget {
    fn push(&mut self, parts: &mut Vec<ContentPart>, text: &str) {
        let chars = text.chars().count();
        self.total += chars;
        let room = self.limit - self.kept;
        if room == 0 {
            return;
        }
        let kept: &str = if chars <= room { text } else { &text[..byte_index_of_char(text, room)] };
        self.kept += chars.min(room);
        // Adjacent text is merged, so the model reads one block.
        match parts.last_mut() {
            Some(ContentPart::Text { text: last }) => {
                last.push('\n');
                last.push_str(kept);
            }
            _ => parts.push(ContentPart::text(kept)),
        }
    }
}

/// Builds the model's copy of `result`.
pub fn for_model(result: &CallToolResult, limits: &ResultLimits) -> ModelResult {
    let mut parts = Vec::new();
    let mut text = TextBudget { limit: limits.model_chars, kept: 0, total: 0 };
    let mut media_left = limits.model_media_bytes;
    let mut media_dropped = 0;
    let mut media =
        |parts: &mut Vec<ContentPart>, kind: &str, mime: &str, data: &str, part: fn(String, String) -> ContentPart| {
            if data.len() <= media_left {
                media_left -= data.len();
                parts.push(part(mime.to_owned(), data.to_owned()));
            } else {
                media_dropped += 1;
                parts.push(ContentPart::text(format!(
                    "[{kind} ({mime}, {} bytes base64) left out: too large for the model]",
                    data.len()
                )));
            }
        };
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push(&mut parts, &t.text),
            ContentBlock::Image(i) => media(&mut parts, "image", &i.mime_type, &i.data, |mime_type, data| {
                ContentPart::Image { mime_type, data }
            }),
            ContentBlock::Audio(a) => media(&mut parts, "audio", &a.mime_type, &a.data, |mime_type, data| {
                ContentPart::Audio { mime_type, data }
            }),
            ContentBlock::ResourceLink(r) => parts.push(ContentPart::ResourceLink {
                uri: r.uri.clone(),
                name: Some(r.name.clone()),
                mime_type: r.mime_type.clone(),
            }),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, text: body, .. } => {
                    text.push(&mut parts, &format!("[resource {uri}]\n{body}"))
                }
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                    let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                    if mime.starts_with("image/") {
                        media(&mut parts, "image", mime, blob, |mime_type, data| ContentPart::Image {
                            mime_type,
                            data,
                        });
                    } else {
                        parts.push(ContentPart::ResourceLink {
                            uri: uri.clone(),
                            name: None,
                            mime_type: mime_type.clone(),
                        });
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    // Structured content is given as JSON text when there is no text saying the same.
    if let Some(structured) = &result.structured_content
        && text.total == 0
    {
        text.push(&mut parts, &structured.to_string());
    }
    let truncated = (text.kept < text.total || media_dropped > 0).then_some(ModelTruncation {
        total_chars: text.total,
        kept_chars: text.kept,
        media_dropped,
    });
    if let Some(t) = truncated
        && t.kept_chars < t.total_chars
    {
        parts.push(ContentPart::text(format!(
            "[Result truncated: showing the first {} of {} characters. Ask for a narrower request if you need the rest.]",
            t.kept_chars, t.total_chars
        )));
    }
    ModelResult { parts, is_error: result.is_error == Some(true), truncated }
}

/// The UI's copy of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiResult {
    /// The content blocks that fit, in order; a block cut short is marked in `truncated`.
    pub content: Vec<ContentBlock>,
    /// `structuredContent`, when it fit.
    pub structured_content: Option<serde_json::Value>,
    /// The server flagged the result as an error.
    pub is_error: bool,
    /// Set when anything was cut.
    pub truncated: Option<UiTruncation>,
}

/// What the UI's copy left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UiTruncation {
    /// Approximate size of the whole result, in bytes.
    pub total_bytes: usize,
    /// Bytes kept.
    pub kept_bytes: usize,
    /// Content blocks left out entirely.
    pub blocks_dropped: usize,
}

/// The size a block takes in the UI's copy (its payload strings).
fn block_bytes(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(t) => t.text.len(),
        ContentBlock::Image(i) => i.data.len() + i.mime_type.len(),
        ContentBlock::Audio(a) => a.data.len() + a.mime_type.len(),
        ContentBlock::ResourceLink(r) => r.uri.len() + r.name.len(),
        ContentBlock::Resource(e) => match &e.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => uri.len() + text.len(),
            ResourceContents::BlobResourceContents { uri, blob, .. } => uri.len() + blob.len(),
            _ => 0,
        },
        _ => 0,
    }
}

/// Builds the UI's copy of `result`. Text is cut at a character boundary;
/// binary blocks that do not fit are left out whole.
pub fn for_ui(result: &CallToolResult, limits: &ResultLimits) -> UiResult {
    let mut left = limits.ui_bytes;
    let mut total = 0;
    let mut dropped = 0;
    let mut content = Vec::new();
    for block in &result.content {
        let size = block_bytes(block);
        total += size;
        if size <= left {
            left -= size;
            content.push(block.clone());
        } else if let ContentBlock::Text(t) = block
            && left > 0
        {
            let cut = floor_char_boundary(&t.text, left);
            left -= cut;
            content.push(ContentBlock::text(&t.text[..cut]));
        } else {
            dropped += 1;
        }
    }
    let structured_content = result.structured_content.as_ref().and_then(|value| {
        let mut writer = CappedWriter::new(left);
        // Writing to a CappedWriter cannot fail.
        let _ = serde_json::to_writer(&mut writer, value);
        total += writer.total;
        if writer.total <= left {
            left -= writer.total;
            Some(value.clone())
        } else {
            dropped += 1;
            None
        }
    });
    let kept = limits.ui_bytes - left;
    let truncated =
        (kept < total).then_some(UiTruncation { total_bytes: total, kept_bytes: kept, blocks_dropped: dropped });
    UiResult { content, structured_content, is_error: result.is_error == Some(true), truncated }
}

/// A `Write` that keeps the first `cap` bytes and counts the rest.
struct CappedWriter {
    kept: Vec<u8>,
    cap: usize,
    total: usize,
}

impl CappedWriter {
    fn new(cap: usize) -> Self {
        Self { kept: Vec::new(), cap, total: 0 }
    }
}

impl Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
        self.total += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// JSON text cut to a size limit, for the trace inspector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundedJson {
    /// The serialised JSON, or its first bytes (cut at a character boundary).
    pub text: String,
    /// The full serialised size in bytes.
    pub total_bytes: usize,
    /// Whether `text` is only the beginning.
    pub truncated: bool,
}

impl BoundedJson {
    /// Serialises `value`, keeping at most `cap` bytes.
    pub fn capture<T: Serialize + ?Sized>(value: &T, cap: usize) -> Self {
        let mut writer = CappedWriter::new(cap);
        if let Err(error) = serde_json::to_writer(&mut writer, value) {
            return Self { text: format!("<not serialisable: {error}>"), total_bytes: 0, truncated: false };
        }
        let truncated = writer.total > writer.kept.len();
        let text = match String::from_utf8(writer.kept) {
            Ok(text) => text,
            Err(error) => {
                // The cap fell inside a multi-byte character: drop its first bytes.
                let valid = error.utf8_error().valid_up_to();
                let mut bytes = error.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
        };
        Self { text, total_bytes: writer.total, truncated }
    }
}

/// The raw JSON-RPC exchange of one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTrace {
    /// The `tools/call` request as sent.
    pub request: BoundedJson,
    /// The response as received, once it arrived.
    pub response: Option<BoundedJson>,
}

impl CallTrace {
    /// Starts a trace with the request.
    pub fn new<T: Serialize + ?Sized>(request: &T, limits: &ResultLimits) -> Self {
        Self { request: BoundedJson::capture(request, limits.trace_bytes), response: None }
    }

    /// Records the response.
    pub fn record_response<T: Serialize + ?Sized>(&mut self, response: &T, limits: &ResultLimits) {
        self.response = Some(BoundedJson::capture(response, limits.trace_bytes));
    }
}

/// The text of a prompt's messages, a paragraph each: text, and the text of
/// embedded resources under their URI (as a tool result's are); messages
/// without text (images, audio, links) are left out.
pub fn prompt_text(result: &GetPromptResult) -> String {
    let texts: Vec<String> = result
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            ContentBlock::Text(t) => Some(t.text.clone()),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, .. }
                | ResourceContents::BlobResourceContents { uri, .. } => {
                    part_text(&embedded.resource).map(|text| format!("[resource {uri}]\n{text}"))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    texts.join("\n\n")
}

/// The text of a resource's contents, a paragraph each: text contents, and
/// blobs whose MIME type is text (`text/*`, JSON, XML) and whose bytes are
/// UTF-8. `None` when no part is text.
pub fn resource_text(result: &ReadResourceResult) -> Option<String> {
    let texts: Vec<String> = result.contents.iter().filter_map(part_text).collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// The text of one part of a resource, as [`resource_text`] reads it.
fn part_text(content: &ResourceContents) -> Option<String> {
    match content {
        ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
        ResourceContents::BlobResourceContents { blob, mime_type, .. } => {
            let mime = mime_type.as_deref().unwrap_or_default();
            let textual = mime.starts_with("text/") || mime.ends_with("json") || mime.ends_with("xml");
            let bytes = base64::engine::general_purpose::STANDARD.decode(blob).ok().filter(|_| textual)?;
            String::from_utf8(bytes).ok()
        }
        _ => None,
    }
}

/// One part of a resource as the server's page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ResourcePreview {
    pub uri: String,
    pub mime_type: Option<String>,
    /// Its text: text contents, or a blob of a text MIME type that is UTF-8.
    pub text: Option<String>,
    /// An image or audio blob, base64, when it fits.
    pub blob: Option<String>,
    /// Bytes of the part as the server sent it (text, or base64).
    pub size: usize,
    /// The text was cut, or the blob left out, to stay within the limit.
    pub truncated: bool,
}

/// A resource's parts for the server's page, within [`ResultLimits::ui_bytes`]
/// in all: text is cut at a character, and media that do not fit are left out.
pub fn resource_preview(result: &ReadResourceResult, limits: &ResultLimits) -> Vec<ResourcePreview> {
    let mut left = limits.ui_bytes;
    let mut out = Vec::new();
    for content in &result.contents {
        let (uri, mime_type, blob) = match content {
            ResourceContents::TextResourceContents { uri, mime_type, .. } => (uri, mime_type, None),
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => (uri, mime_type, Some(blob)),
            _ => continue,
        };
        let text = part_text(content);
        let size = blob.map_or_else(|| text.as_ref().map_or(0, String::len), String::len);
        let mut part = ResourcePreview {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            text: None,
            blob: None,
            size,
            truncated: false,
        };
        let media = mime_type.as_deref().is_some_and(|m| m.starts_with("image/") || m.starts_with("audio/"));
        if let Some(mut text) = text {
            let cut = floor_char_boundary(&text, left);
            part.truncated = cut < text.len();
            text.truncate(cut);
            left -= text.len();
            part.text = Some(text);
        } else if let Some(blob) = blob.filter(|_| media) {
            part.truncated = blob.len() > left;
            if !part.truncated {
                left -= blob.len();
                part.blob = Some(blob.clone());
            }
        }
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use rmcp::model::{AudioContent, EmbeddedResource, ImageContent, Resource};
    use serde_json::json;

    use super::*;

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::success(content)
    }

    fn small() -> ResultLimits {
        ResultLimits { model_chars: 10, model_media_bytes: 8, ui_bytes: 32, trace_bytes: 16 }
    }

    #[test]
    fn small_text_passes_through_unchanged() {
        let model = for_model(&result(vec![ContentBlock::text("hello"), ContentBlock::text("world")]), &small());
        assert_eq!(model.parts, vec![ContentPart::text("hello\nworld")]);
        assert_eq!(model.truncated, None);
        assert!(!model.is_error);
    }

    #[test]
    fn long_text_is_cut_at_a_character_with_a_note() {
        let model = for_model(&result(vec![ContentBlock::text("ééééé"), ContentBlock::text("0123456789")]), &small());
        let ContentPart::Text { text } = &model.parts[0] else { panic!("{:?}", model.parts) };
        assert_eq!(text, "ééééé\n01234");
        let ContentPart::Text { text: note } = model.parts.last().unwrap() else { panic!() };
        assert!(note.contains("first 10 of 15 characters"), "{note}");
        assert_eq!(model.truncated, Some(ModelTruncation { total_chars: 15, kept_chars: 10, media_dropped: 0 }));
    }

    #[test]
    fn media_links_and_resources_are_converted() {
        let image = ImageContent::new("aGk=", "image/png");
        let blocks = vec![
            ContentBlock::Image(image),
            ContentBlock::Audio(AudioContent::new("YWJjZGVmZ2hpams=", "audio/wav")),
            ContentBlock::ResourceLink(Resource::new("file:///a.txt", "a.txt")),
            ContentBlock::Resource(EmbeddedResource::new(ResourceContents::text("body", "mem://x"))),
        ];
        let model = for_model(&result(blocks), &ResultLimits { model_chars: 100, ..small() });
        assert_eq!(model.parts[0], ContentPart::Image { mime_type: "image/png".into(), data: "aGk=".into() });
        let ContentPart::Text { text } = &model.parts[1] else { panic!("{:?}", model.parts) };
        assert!(text.contains("audio (audio/wav, 16 bytes base64) left out"), "{text}");
        assert_eq!(
            model.parts[2],
            ContentPart::ResourceLink { uri: "file:///a.txt".into(), name: Some("a.txt".into()), mime_type: None }
        );
        assert_eq!(model.parts[3], ContentPart::text("[resource mem://x]\nbody"));
        assert_eq!(model.truncated.map(|t| t.media_dropped), Some(1));
    }

    #[test]
    fn structured_content_is_used_when_there_is_no_text_and_errors_are_flagged() {
        let mut r = CallToolResult::structured_error(json!({"code": 7}));
        r.content.clear();
        let model = for_model(&r, &ResultLimits::default());
        assert!(model.is_error);
        assert_eq!(model.parts, vec![ContentPart::text(r#"{"code":7}"#)]);
    }

    #[test]
    fn ui_copy_is_bounded_and_says_so() {
        let big = "x".repeat(100);
        let r = result(vec![
            ContentBlock::text("short"),
            ContentBlock::Image(ImageContent::new("A".repeat(50), "image/png")),
            ContentBlock::text(big),
        ]);
        let ui = for_ui(&r, &small());
        assert_eq!(ui.content.len(), 2);
        let ContentBlock::Text(cut) = &ui.content[1] else { panic!("{:?}", ui.content) };
        assert_eq!(cut.text.len(), 32 - 5);
        let t = ui.truncated.unwrap();
        assert_eq!((t.kept_bytes, t.blocks_dropped), (32, 1));
        assert!(t.total_bytes >= 155);
        let whole = for_ui(&result(vec![ContentBlock::text("short")]), &small());
        assert_eq!(whole.truncated, None);
    }

    #[test]
    fn bounded_json_keeps_a_prefix_and_the_full_size() {
        let value = json!({"text": "é".repeat(20)});
        let bounded = BoundedJson::capture(&value, 16);
        assert!(bounded.truncated);
        assert_eq!(bounded.total_bytes, value.to_string().len());
        assert!(bounded.text.len() <= 16 && value.to_string().starts_with(&bounded.text));
        let whole = BoundedJson::capture(&json!([1]), 16);
        assert_eq!((whole.text.as_str(), whole.truncated), ("[1]", false));
    }

    #[test]
    fn huge_results_stay_within_limits() {
        let r = result(vec![ContentBlock::text("y".repeat(5_000_000))]);
        let limits = ResultLimits { ui_bytes: 1_000_000, ..ResultLimits::default() };
        let model = for_model(&r, &limits);
        let chars: usize = model
            .parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => text.len(),
                _ => 0,
            })
            .sum();
        assert!(chars < limits.model_chars + 200, "{chars}");
        let mut trace = CallTrace::new(&json!({"method": "tools/call"}), &limits);
        trace.record_response(&r, &limits);
        let response = trace.response.unwrap();
        assert!(response.truncated && response.text.len() <= limits.trace_bytes);
        assert!(for_ui(&r, &limits).truncated.is_some());
    }

    #[test]
    fn resource_text_reads_text_and_textual_blobs_only() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let read = |contents: serde_json::Value| -> ReadResourceResult {
            serde_json::from_value(json!({ "contents": contents })).unwrap()
        };
        let mixed = read(json!([
            {"uri": "a://1", "mimeType": "text/plain", "text": "plain"},
            {"uri": "a://2", "mimeType": "text/plain", "blob": b64(b"from a blob")},
            {"uri": "a://3", "mimeType": "application/json", "blob": b64(b"{\"k\":1}")},
            {"uri": "a://4", "mimeType": "image/png", "blob": b64(b"\x89PNG")},
            {"uri": "a://5", "mimeType": "text/plain", "blob": b64(&[0xff, 0xfe])}
        ]));
        assert_eq!(resource_text(&mixed).as_deref(), Some("plain\n\nfrom a blob\n\n{\"k\":1}"));
        assert_eq!(resource_text(&read(json!([{"uri": "a://4", "mimeType": "image/png", "blob": b64(b"x")}]))), None);
    }

    #[test]
    fn a_resource_preview_keeps_text_and_media_within_the_limit() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let read: ReadResourceResult = serde_json::from_value(json!({"contents": [
            {"uri": "a://t", "mimeType": "text/plain", "text": "0123456789"},
            {"uri": "a://i", "mimeType": "image/png", "blob": b64(b"png!")},
            {"uri": "a://z", "mimeType": "application/zip", "blob": b64(b"PK")},
            {"uri": "a://j", "mimeType": "application/json", "blob": b64(b"[1, 2, 3, 4, 5, 6, 7, 8]")}
        ]}))
        .unwrap();
        let limits = ResultLimits { ui_bytes: 20, ..ResultLimits::default() };
        let parts = resource_preview(&read, &limits);
        let shown: Vec<(Option<&str>, Option<&str>, usize, bool)> =
            parts.iter().map(|p| (p.text.as_deref(), p.blob.as_deref(), p.size, p.truncated)).collect();
        assert_eq!(
            shown,
            [
                (Some("0123456789"), None, 10, false),
                (None, Some("cG5nIQ=="), 8, false),
                (None, None, 4, false),
                (Some("[1"), None, 32, true),
            ]
        );
        let all = resource_preview(&read, &ResultLimits::default());
        assert_eq!(all[3].text.as_deref(), Some("[1, 2, 3, 4, 5, 6, 7, 8]"));
    }
}
