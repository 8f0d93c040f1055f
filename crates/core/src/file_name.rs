//! The one rule for naming a file after text Patchbay did not choose: a view's
//! download, a resource, a conversation's title.
//!
//! The name must be one every file system takes, and it must read as it is:
//! bidirectional and other invisible format controls are dropped (U+202E
//! before `fdp.exe` shows it as `exe.pdf`), and a Windows device name (`CON`,
//! `nul.txt`, `COM1.log`) gets a `_` in front, since Windows opens the device
//! instead of a file by that name.

/// Characters no file name may hold on Windows, macOS or Linux.
const NOT_IN_FILE_NAMES: &str = "/\\:*?\"<>|";

/// Windows device names, reserved with any extension and in any case.
const DEVICE_NAMES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];

/// Whether `c` is an invisible character that changes how the text around it
/// is shown, or hides text a program still reads: bidirectional embeddings,
/// overrides, isolates and marks, zero-width characters, the byte-order mark,
/// the soft hyphen, and tag characters (invisible copies of ASCII).
pub fn is_format_control(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Whether `stem` (a name up to its first dot) names a Windows device:
/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9` (also with a
/// superscript digit), in any case, with or without trailing spaces.
fn is_device_name(stem: &str) -> bool {
    let stem = stem.trim_end_matches(' ').to_ascii_uppercase();
    if DEVICE_NAMES.contains(&stem.as_str()) {
        return true;
    }
    let mut chars = stem.chars();
    let prefix: String = chars.by_ref().take(3).collect();
    let digit: String = chars.collect();
    matches!(prefix.as_str(), "COM" | "LPT")
        && (digit.len() == 1 && digit.chars().all(|d| d.is_ascii_digit()) || matches!(digit.as_str(), "¹" | "²" | "³"))
}

/// `wanted` made into a file name: format controls dropped; control characters
/// and `/\:*?"<>|` replaced by `_`; no leading dots, no trailing dots or
/// spaces, no surrounding whitespace; a device name prefixed with `_`; and
/// `fallback` when nothing is left.
pub fn safe(wanted: &str, fallback: &str) -> String {
    let clean: String = wanted
        .chars()
        .filter(|c| !is_format_control(*c))
        .map(|c| if c.is_control() || NOT_IN_FILE_NAMES.contains(c) { '_' } else { c })
        .collect();
    let clean = clean.trim().trim_start_matches('.').trim_end_matches(['.', ' ']).trim();
    if clean.is_empty() {
        return fallback.to_owned();
    }
    let stem = clean.split('.').next().unwrap_or(clean);
    if is_device_name(stem) { format!("_{clean}") } else { clean.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_and_other_format_controls_are_dropped() {
        assert_eq!(safe("\u{202E}fdp.exe", "x"), "fdp.exe");
        assert_eq!(safe("report\u{2066}\u{202B}\u{2069}.\u{200F}csv\u{200E}", "x"), "report.csv");
        assert_eq!(safe("a\u{061C}b\u{200B}c\u{FEFF}.txt", "x"), "abc.txt");
        assert_eq!(safe("\u{202D}\u{202A}\u{202C}", "download"), "download");
    }

    #[test]
    fn windows_device_names_get_a_prefix_with_any_extension_and_case() {
        for name in
            ["CON", "con", "Prn.txt", "aux.tar.gz", "NUL", "com1", "COM9.log", "lpt1.txt", "LPT9", "com¹", "CON .txt"]
        {
            assert_eq!(safe(name, "x"), format!("_{name}"), "{name}");
        }
        for name in ["CONsole.txt", "com10", "lpt", "auxiliary", "nul-data", "my con.txt", "COMA"] {
            assert_eq!(safe(name, "x"), name, "{name}");
        }
    }

    #[test]
    fn separators_controls_and_edge_dots_and_spaces_go() {
        assert_eq!(safe("../../etc/passwd", "x"), "_.._etc_passwd");
        assert_eq!(safe("a:b*c?\u{7}.txt", "x"), "a_b_c__.txt");
        assert_eq!(safe("  .hidden. . ", "x"), "hidden");
        assert_eq!(safe("report.csv. ", "x"), "report.csv");
        assert_eq!(safe("...", "conversation"), "conversation");
    }
}
