//! Results sized to the model.
//!
//! A round's tool results may take half of what is left of the model's window, and at least an
//! eighth of the window's room for the request where the results already in it can give way (as
//! [`super::budget`] says), each call an equal share less its note ([`ResultRoom`]). A result larger than its share is cut for the model (at a line end when
//! one is near) with a note that says how much was left out and how to read on; its whole text,
//! bounded by the MCP host's 10 MB cap, is kept with the conversation. [`READ_TOOL`], a tool the
//! turn answers itself (it reads only what a call of this conversation already returned), reads a
//! range of it by characters or lines, within the same share. Without a known window a result
//! gets [`UNKNOWN_WINDOW_CHARS`] characters.

use serde_json::{Value, json};

use super::budget::{PER_IMAGE, TokenCounter};
use super::tools::ToolOutput;
use crate::conversations::{KeptResult, KeptText, line_count};
use crate::llm::{ContentPart, ToolSpec};
use crate::text::{byte_index_of_char, floor_char_boundary};

/// The model-facing name of the tool that reads a kept result.
pub const READ_TOOL: &str = "read_result";
/// Characters of one result the model gets when its window is not known.
pub const UNKNOWN_WINDOW_CHARS: usize = 100_000;

/// The room for a request in the model's window (its context window less the room kept for
/// the answer), how much of it is left, and how much of it tool results take (which later
/// requests may leave out to make room).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Left {
    pub room: u32,
    pub left: u32,
    pub results: u32,
}

/// Tokens a cut result's note, its message's framing and a read's header and trailer take.
const NOTE_TOKENS: u32 = 160;
/// Tokens the read tool's definition takes once it is offered.
const READ_SPEC_TOKENS: u32 = 250;
/// Every kept result is cut to this many bytes (the UI's cap on a result).
pub(crate) const MAX_KEPT_BYTES: usize = 10 << 20;

/// How much of one result the model may be sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResultRoom {
    /// Tokens; `None` when the window is not known.
    tokens: Option<u32>,
    counter: &'static dyn TokenCounter,
}

impl ResultRoom {
    /// The share of each of a round's `calls` results, given the request's `room` in the window
    /// and the tokens `left` of it (`None`: the window is not known).
    pub(crate) fn for_round(window: Option<Left>, calls: usize, counter: &'static dyn TokenCounter) -> Self {
        let calls = u32::try_from(calls.max(1)).unwrap_or(u32::MAX);
        let share = |w: Left| {
            let round = (w.left / 2).max((w.room / 8).min(w.left.saturating_add(w.results)));
            (round.saturating_sub(READ_SPEC_TOKENS) / calls).saturating_sub(NOTE_TOKENS)
        };
        Self { tokens: window.map(share), counter }
    }

    /// The byte length of the longest start of `text` that fits beside `media` pictures or
    /// sounds, ending at a line end when one is near.
    fn fitting(&self, text: &str, media: usize) -> usize {
        let Some(tokens) = self.tokens else {
            return at_line_end(text, byte_index_of_char(text, UNKNOWN_WINDOW_CHARS));
        };
        // Pictures and sounds take their flat cost, but leave the text a quarter of the share.
        let media = u32::try_from(media).unwrap_or(u32::MAX).saturating_mul(PER_IMAGE);
        let tokens = tokens.saturating_sub(media).max(tokens / 4);
        // A token rarely spans more than four characters, so a start that long is enough to try;
        // it shrinks in proportion (by a tenth at least) until it fits.
        let mut chars = usize::try_from(tokens).unwrap_or(usize::MAX).saturating_mul(4);
        loop {
            let end = byte_index_of_char(text, chars);
            let count = self.counter.count(&text[..end]);
            if count <= tokens {
                return at_line_end(text, end);
            }
            let scaled = (chars as u64).saturating_mul(u64::from(tokens)) / u64::from(count);
            chars = usize::try_from(scaled).unwrap_or(usize::MAX).min(chars.saturating_sub(1 + chars / 10));
        }
    }
}

/// `end`, or the end of the last whole line before it when that keeps four fifths of it.
fn at_line_end(text: &str, end: usize) -> usize {
    if end == text.len() {
        return end;
    }
    match text[..end].rfind('\n') {
        Some(newline) if (newline + 1) * 5 >= end * 4 => newline + 1,
        _ => end,
    }
}

/// A result too large for its share: its whole text and how much of it the model is sent.
#[derive(Debug)]
pub(crate) struct Cut {
    /// The result's text parts, joined.
    pub whole: String,
    /// Bytes of `whole` the model is sent.
    sent: usize,
    /// Its pictures, sounds and links, sent as they are.
    others: Vec<ContentPart>,
}

impl Cut {
    /// Cuts `output` to `room`; `None` when it fits.
    pub(crate) fn of(output: &ToolOutput, room: ResultRoom) -> Option<Self> {
        let (texts, others): (Vec<&ContentPart>, Vec<&ContentPart>) =
            output.content.iter().partition(|p| matches!(p, ContentPart::Text { .. }));
        let mut whole = texts
            .iter()
            .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
            .collect::<Vec<_>>()
            .join("\n");
        whole.truncate(floor_char_boundary(&whole, MAX_KEPT_BYTES));
        let media =
            others.iter().filter(|p| matches!(p, ContentPart::Image { .. } | ContentPart::Audio { .. })).count();
        let sent = room.fitting(&whole, media);
        (sent < whole.len()).then(|| Self { sent, others: others.into_iter().cloned().collect(), whole })
    }

    /// Characters the model is sent.
    pub(crate) fn sent_chars(&self) -> u64 {
        self.whole[..self.sent].chars().count() as u64
    }

    /// What the model is sent: the start, a note naming `kept`, then the other parts.
    pub(crate) fn for_model(self, kept: &KeptResult, is_error: bool) -> ToolOutput {
        let shown = &self.whole[..self.sent];
        let lines = line_count(shown);
        let n = kept.result;
        let note = format!(
            "[Result {n} was cut to fit the context window: this is characters 1-{sent} (lines 1-{lines}) of {chars} \
             ({all} lines); {left} characters were left out. The whole result is kept: read on with {READ_TOOL} \
             {{\"result\": {n}, \"offset\": {sent}}}, or read other lines with {{\"result\": {n}, \"line\": L, \
             \"lines\": K}}.]",
            sent = kept.sent_chars,
            chars = kept.chars,
            all = kept.lines,
            left = kept.chars - kept.sent_chars,
        );
        let mut content = vec![ContentPart::text(format!("{shown}\n\n{note}"))];
        content.extend(self.others);
        ToolOutput { content, is_error }
    }
}

/// The read tool's definition.
pub(crate) fn read_spec() -> ToolSpec {
    ToolSpec {
        name: READ_TOOL.to_owned(),
        description: "Reads more of a tool result that was cut to fit the context window (its note names the \
                      result's number). Say where to start with `offset` (characters from the start) or `line` \
                      (1-based), and how much with `length` (characters) or `lines`; what does not fit is left \
                      for the next call, which the answer's last line names."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "result": {"type": "integer", "minimum": 1, "description": "The result's number, from its note."},
                "offset": {"type": "integer", "minimum": 0, "description": "Characters to skip from the start (default 0)."},
                "length": {"type": "integer", "minimum": 1, "description": "Characters to read from the offset."},
                "line": {"type": "integer", "minimum": 1, "description": "The first line to read, instead of an offset."},
                "lines": {"type": "integer", "minimum": 1, "description": "Lines to read from `line`."}
            },
            "required": ["result"]
        }),
        origin: None,
    }
}

/// Where a read starts and how much it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Range {
    Chars { offset: u64, length: Option<u64> },
    Lines { line: u64, lines: Option<u64> },
}

/// A read call's arguments: the result's number and the range. The error is for the model.
pub(crate) fn parse_read(arguments: &str) -> Result<(u32, Range), String> {
    let args: Value = serde_json::from_str(if arguments.trim().is_empty() { "{}" } else { arguments })
        .map_err(|e| format!("The arguments are not valid JSON ({e}). Call {READ_TOOL} with {{\"result\": N}}."))?;
    let number = |key: &str| -> Result<Option<u64>, String> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("\"{key}\" must be a whole number, not {v}.")),
        }
    };
    let result = number("result")?
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("{READ_TOOL} needs \"result\": the number in the cut result's note."))?;
    let range = match (number("line")?, number("offset")?) {
        (Some(_), Some(_)) => return Err("Give \"offset\" or \"line\", not both.".to_owned()),
        (Some(0), None) => return Err("Lines are counted from 1.".to_owned()),
        (Some(line), None) => Range::Lines { line, lines: number("lines")?.filter(|&n| n > 0) },
        (None, _) if args.get("lines").is_some_and(|v| !v.is_null()) => {
            return Err("\"lines\" goes with \"line\"; with \"offset\", give \"length\" in characters.".to_owned());
        }
        (None, offset) => Range::Chars { offset: offset.unwrap_or(0), length: number("length")?.filter(|&n| n > 0) },
    };
    Ok((result, range))
}

/// The byte where line `line` (1-based) of `text` starts; `None` past the last line.
fn line_start(text: &str, line: u64) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    let skip = usize::try_from(line - 2).ok()?;
    text.match_indices('\n').nth(skip).map(|(i, _)| i + 1).filter(|&i| i < text.len())
}

/// The part of `kept` that `range` asks for, as much as fits `room`, with where it is and how to
/// read on. The error is for the model.
pub(crate) fn read(kept: &KeptText, range: Range, room: ResultRoom) -> Result<String, String> {
    let (text, n, chars) = (&kept.text, kept.kept.result, kept.kept.chars);
    let (start, end) = match range {
        Range::Chars { offset, length } => {
            if offset >= chars {
                return Err(format!("Result {n} has {chars} characters: offset {offset} is past its end."));
            }
            let start = byte_index_of_char(text, usize::try_from(offset).unwrap_or(usize::MAX));
            let end = length.map_or(text.len(), |l| {
                start + byte_index_of_char(&text[start..], usize::try_from(l).unwrap_or(usize::MAX))
            });
            (start, end)
        }
        Range::Lines { line, lines } => {
            let all = kept.kept.lines;
            let start = line_start(text, line)
                .ok_or_else(|| format!("Result {n} has {all} lines: line {line} is past its end."))?;
            let end = lines.and_then(|k| line_start(text, line.saturating_add(k))).unwrap_or(text.len());
            (start, end)
        }
    };
    let wanted = &text[start..end];
    let shown = &wanted[..room.fitting(wanted, 0)];
    if shown.is_empty() {
        return Err(format!(
            "The context window has no room left to read result {n}; answer with what you have read so far."
        ));
    }
    let first_char = text[..start].chars().count() as u64;
    let last_char = first_char + shown.chars().count() as u64;
    let first_line = text[..start].bytes().filter(|&b| b == b'\n').count() as u64 + 1;
    let last_line = first_line + line_count(shown) - 1;
    let mut out = format!(
        "[Result {n}, characters {from}-{last_char} of {chars}, lines {first_line}-{last_line} of {all}]\n{shown}",
        from = first_char + 1,
        all = kept.kept.lines,
    );
    if last_char < chars {
        out.push_str(&format!(
            "\n[{} characters follow: read on with {READ_TOOL} {{\"result\": {n}, \"offset\": {last_char}}}.]",
            chars - last_char
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::budget::Estimate;

    fn numbered(lines: u64) -> String {
        (1..=lines).map(|i| format!("line {i:05}\n")).collect()
    }

    fn kept(text: &str, sent_chars: u64) -> KeptText {
        let kept = KeptResult { result: 1, chars: text.chars().count() as u64, lines: line_count(text), sent_chars };
        KeptText { kept, text: text.to_owned() }
    }

    #[test]
    fn a_result_that_fits_is_not_cut() {
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 4_000 }), 1, &Estimate);
        assert!(Cut::of(&ToolOutput::text(numbered(100)), room).is_none());
        // Half of what is left, less the read tool's definition, shared, less each note.
        let halved = ResultRoom::for_round(Some(Left { room: 8_000, results: 0, left: 6_000 }), 2, &Estimate);
        assert_eq!(halved.tokens, Some((3_000 - 250) / 2 - 160));
        // An eighth of the room at least, where results already sent can give way; no more than that.
        let crowded = ResultRoom::for_round(Some(Left { room: 8_000, results: 5_000, left: 100 }), 2, &Estimate);
        assert_eq!(crowded.tokens, Some((1_000 - 250) / 2 - 160));
        let full = ResultRoom::for_round(Some(Left { room: 8_000, results: 300, left: 100 }), 1, &Estimate);
        assert_eq!(full.tokens, Some(0), "nothing to give way: only what is left");
        let unknown = ResultRoom::for_round(None, 1, &Estimate);
        assert!(Cut::of(&ToolOutput::text("x".repeat(UNKNOWN_WINDOW_CHARS)), unknown).is_none());
        assert!(Cut::of(&ToolOutput::text("x".repeat(UNKNOWN_WINDOW_CHARS + 1)), unknown).is_some());
    }

    #[test]
    fn a_large_result_is_cut_at_a_line_end_within_its_share_with_a_note() {
        let text = numbered(20_000);
        // 4,000 tokens left, two calls: 715 tokens each.
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 4_000 }), 2, &Estimate);
        let cut = Cut::of(&ToolOutput::text(text.clone()), room).expect("cut");
        assert_eq!(cut.whole, text);
        let sent = cut.sent_chars();
        assert!(text[..usize::try_from(sent).unwrap()].ends_with('\n'));
        assert!(Estimate.count(&text[..usize::try_from(sent).unwrap()]) <= 715);
        assert!(sent > 1_700, "most of the share is used: {sent}");
        let kept = KeptResult { result: 7, chars: text.len() as u64, lines: 20_000, sent_chars: sent };
        let out = cut.for_model(&kept, false);
        let ContentPart::Text { text: shown } = &out.content[0] else { panic!() };
        assert!(shown.starts_with("line 00001\n"));
        assert!(shown.contains(&format!("read_result {{\"result\": 7, \"offset\": {sent}}}")), "{shown}");
        assert!(shown.contains(&format!("of {} (20000 lines)", text.len())), "{shown}");
    }

    #[test]
    fn pictures_keep_their_place_and_take_their_share() {
        let output = ToolOutput {
            content: vec![
                ContentPart::text("a".repeat(30_000)),
                ContentPart::Image { mime_type: "image/png".into(), data: "AAAA".into() },
            ],
            is_error: true,
        };
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 6_000 }), 1, &Estimate);
        let cut = Cut::of(&output, room).expect("cut");
        // 2,590 tokens, 1,000 of them the picture's: 1,590 of text, about 4,770 ASCII characters.
        assert!((4_700..=4_770).contains(&cut.sent_chars()), "{}", cut.sent_chars());
        // Pictures that would take the whole share leave the text a quarter of it.
        let crowded = ToolOutput {
            content: [ContentPart::text("a".repeat(30_000))]
                .into_iter()
                .chain(std::iter::repeat_n(
                    ContentPart::Image { mime_type: "image/png".into(), data: "AAAA".into() },
                    5,
                ))
                .collect(),
            is_error: false,
        };
        assert!((1_900..=1_942).contains(&Cut::of(&crowded, room).expect("cut").sent_chars()));
        let kept = KeptResult { result: 1, chars: 30_000, lines: 1, sent_chars: 6_000 };
        let out = cut.for_model(&kept, true);
        assert!(out.is_error);
        assert!(matches!(out.content[1], ContentPart::Image { .. }));
    }

    #[test]
    fn a_kept_result_is_at_most_10_mb() {
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 4_000 }), 1, &Estimate);
        let huge = format!("é{}", "x".repeat(MAX_KEPT_BYTES));
        let cut = Cut::of(&ToolOutput::text(huge), room).expect("cut");
        assert_eq!(cut.whole.len(), MAX_KEPT_BYTES, "cut at a character boundary");
    }

    #[test]
    fn reads_pick_up_where_the_cut_ended_and_by_line() {
        let text = numbered(1_000);
        let kept = kept(&text, 110);
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 2_000 }), 1, &Estimate);
        let page = read(&kept, parse_read(r#"{"result": 1, "offset": 110}"#).unwrap().1, room).unwrap();
        assert!(page.starts_with("[Result 1, characters 111-"), "{page}");
        assert!(page.contains("\nline 00011\n"), "{page}");
        assert!(page.contains("read on with read_result {\"result\": 1, \"offset\": "), "{page}");

        let lines = read(&kept, parse_read(r#"{"result": 1, "line": 998, "lines": 2}"#).unwrap().1, room).unwrap();
        assert_eq!(
            lines,
            "[Result 1, characters 10968-10989 of 11000, lines 998-999 of 1000]\nline 00998\nline 00999\n\n[11 \
             characters follow: read on with read_result {\"result\": 1, \"offset\": 10989}.]"
        );
        let last = read(&kept, parse_read(r#"{"result": 1, "line": 1000}"#).unwrap().1, room).unwrap();
        assert_eq!(last, "[Result 1, characters 10990-11000 of 11000, lines 1000-1000 of 1000]\nline 01000\n");
    }

    #[test]
    fn bad_reads_say_why() {
        let kept = kept(&numbered(10), 0);
        let room = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 400 }), 1, &Estimate);
        assert!(parse_read("{}").unwrap_err().contains("needs \"result\""));
        assert!(parse_read(r#"{"result": 1, "line": 2, "offset": 3}"#).unwrap_err().contains("not both"));
        assert!(parse_read(r#"{"result": "one"}"#).unwrap_err().contains("whole number"));
        assert!(parse_read("[").unwrap_err().contains("not valid JSON"));
        assert!(parse_read(r#"{"result": 1, "offset": 3, "lines": 2}"#).unwrap_err().contains("\"lines\" goes with"));
        let past = read(&kept, Range::Lines { line: 11, lines: None }, room).unwrap_err();
        assert_eq!(past, "Result 1 has 10 lines: line 11 is past its end.");
        let past = read(&kept, Range::Chars { offset: 110, length: None }, room).unwrap_err();
        assert_eq!(past, "Result 1 has 110 characters: offset 110 is past its end.");
        let full = ResultRoom::for_round(Some(Left { room: 0, results: 0, left: 0 }), 1, &Estimate);
        assert!(read(&kept, Range::Chars { offset: 0, length: None }, full).unwrap_err().contains("no room left"));
    }
}
