//! A line diff (longest common subsequence) for the import preview.

use super::views::DiffLine;

/// The lines of `before` and `after` marked same, removed or added, in order.
/// Quadratic in the line count, which is small for one server's JSON.
pub(crate) fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let line = |op: &'static str, text: &str| DiffLine { op, text: text.to_owned() };
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            out.push(line("same", a[i]));
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            out.push(line("remove", a[i]));
            i += 1;
        } else {
            out.push(line("add", b[j]));
            j += 1;
        }
    }
    out.extend(a[i..].iter().map(|t| line("remove", t)));
    out.extend(b[j..].iter().map(|t| line("add", t)));
    out
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn changed_lines_are_removed_then_added_and_the_rest_kept() {
        let diff = line_diff("{\n  \"a\": 1,\n  \"b\": 2\n}", "{\n  \"a\": 1,\n  \"b\": 3,\n  \"c\": 4\n}");
        let ops: Vec<(&str, &str)> = diff.iter().map(|d| (d.op, d.text.as_str())).collect();
        assert_eq!(
            ops,
            [
                ("same", "{"),
                ("same", "  \"a\": 1,"),
                ("remove", "  \"b\": 2"),
                ("add", "  \"b\": 3,"),
                ("add", "  \"c\": 4"),
                ("same", "}"),
            ]
        );
    }

    #[test]
    fn identical_text_is_all_same() {
        assert!(line_diff("x\ny", "x\ny").iter().all(|d| d.op == "same"));
    }
}
