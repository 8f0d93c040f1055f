//! `patchbay mcp install-link`: a Patchbay link carrying the real
//! server-everything is shown by `--dry-run` (what runs, its policy, the secret
//! it asks for) without writing anything, then added with the secret typed on
//! stdin (into the real keyring) and started; a VS Code link is read too; a
//! link with a secret value, a malformed one and one of another scheme are
//! refused, each saying where and why, and leave the servers as they were.

use patchbay_test_support::links::{escape, patchbay_link};
use patchbay_test_support::peers;
use serde_json::json;

use crate::common::{ok, patchbay, patchbay_stdin, stderr, stdout};

#[test]
fn a_link_is_shown_then_added_with_its_secret_typed_and_bad_links_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let everything = peers::npm_bin("mcp-server-everything");
    let server = json!({"command": everything, "args": ["stdio"], "env": {"EVERYTHING_API_KEY": "", "MODE": "demo"}});
    let link = patchbay_link("everything", &server);

    let shown = ok(&patchbay(dir, &["mcp", "install-link", &link, "--dry-run"]));
    let expected = format!(
        "everything (new), from a Patchbay install link\n  runs:     {} stdio\n  env:      EVERYTHING_API_KEY (a secret, \
         asked for below)\n  env:      MODE = \"demo\"\n  policy:   ",
        everything.display()
    );
    assert!(shown.starts_with(&expected), "{shown}");
    assert!(shown.ends_with("dry run: nothing was written\n"), "{shown}");
    assert_eq!(ok(&patchbay(dir, &["mcp", "list"])), "", "a dry run adds nothing");
    // A variable that changes what the program loads is pointed out.
    let steered =
        json!({"command": "npx", "args": ["-y", "some-server"], "env": {"NODE_OPTIONS": "--require /tmp/x.js"}});
    let shown = ok(&patchbay(dir, &["mcp", "install-link", &patchbay_link("steered", &steered), "--dry-run"]));
    assert!(
        shown.contains(
            "  env:      NODE_OPTIONS = \"--require /tmp/x.js\"  <- changes what the program runs or loads: check it\n"
        ),
        "{shown}"
    );

    // Without a terminal nothing is added unless --yes says so.
    let out = patchbay_stdin(dir, &["mcp", "install-link", &link], "typed-key-93\n");
    assert!(!out.status.success() && stderr(&out).contains("pass --yes to add everything"), "{}", stderr(&out));
    assert_eq!(ok(&patchbay(dir, &["mcp", "list"])), "", "not confirmed: nothing added");
    let out = patchbay_stdin(dir, &["mcp", "install-link", &link, "--yes"], "typed-key-93\n");
    let added = stdout(&out);
    assert!(out.status.success(), "{added}{}", stderr(&out));
    assert!(added.contains("added everything\n"), "{added}");
    let ready = added.lines().last().unwrap_or_default();
    assert!(ready.starts_with("everything  ready  ") && ready.ends_with(" tools"), "{added}");
    let secrets = ok(&patchbay(dir, &["secret", "list"]));
    assert!(secrets.contains("mcp/everything/EVERYTHING_API_KEY\tset"), "{secrets}");
    let exported = ok(&patchbay(dir, &["config", "export", "--format", "patchbay"]));
    assert!(!exported.contains("typed-key-93") && exported.contains("\"plain\": \"demo\""), "{exported}");

    // VS Code's link: the name inside the JSON.
    let vscode = json!({"name": "time", "command": "uvx", "args": ["mcp-server-time"]});
    let shown = ok(&patchbay(
        dir,
        &["mcp", "install-link", &format!("vscode:mcp/install?{}", escape(&vscode.to_string())), "--dry-run"],
    ));
    assert!(shown.starts_with("time (new), from a VS Code install link\n  runs:     uvx mcp-server-time\n"), "{shown}");

    let carrying =
        patchbay_link("leaky", &json!({"command": "npx", "args": ["leaky"], "env": {"OPENAI_API_KEY": "sk-live-1"}}));
    for (link, said) in [
        (carrying.as_str(), "error: (link).env.OPENAI_API_KEY: an install link may not carry a secret value"),
        ("patchbay://mcp/install?name=x&config=%25%25", "error: (link).config: not base64"),
        ("cursor://anysphere.cursor-deeplink/mcp/install?name=x&config=bm90IGpzb24", "error: (link).config: not JSON"),
        ("zoommtg://zoom.us/join?confno=1", "error: (link): a zoommtg: link is not an install link"),
    ] {
        let out = patchbay(dir, &["mcp", "install-link", link]);
        assert!(!out.status.success(), "{link}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(said) && err.ends_with("the link was refused; nothing was written\n"), "{link}: {err}");
        assert!(!err.contains("sk-live-1"), "the refusal does not repeat the secret: {err}");
    }
    let listed = ok(&patchbay(dir, &["mcp", "list"]));
    assert_eq!(listed.lines().count(), 1, "only the first server was added: {listed}");

    // The same link again changes nothing; one naming the server with another command is refused.
    let again = ok(&patchbay_stdin(dir, &["mcp", "install-link", &link], ""));
    assert!(again.ends_with("everything is already added with these settings; nothing to do\n"), "{again}");
    let other = patchbay_link("everything", &json!({"url": "https://evil.example/mcp"}));
    let out = patchbay(dir, &["mcp", "install-link", &other]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("a server named \"everything\" exists: an install link never changes a server you have"),
        "{}",
        stderr(&out)
    );
}
