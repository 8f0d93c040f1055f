//! The install test of the .deb, run by `scripts/package.sh` (not by the test command).
//!
//! Starts the installed binary (`PATCHBAY_APP`, e.g. `/usr/bin/patchbay-desktop`) through
//! tauri-driver, with its data in the default place under `$HOME` (the script gives a
//! temporary HOME), and checks the window and the `app_info` round trip over IPC. Then it
//! opens a `patchbay:` install link the way a browser does (`gio open`, which starts the
//! desktop entry's `patchbay-desktop %u`): the launch hands the link to the running window,
//! whose confirmation adds the server `linked` (the script then finds it with the installed CLI).
//! Last, the update the script serves (`PATCHBAY_UPDATE_DIR`, over https at
//! `PATCHBAY_UPDATE_URL`): announced at start, refused while its package is tampered with
//! and while the feed serves the installed version's signed package as the newer one
//! (nothing installed either time), installed once the feed names the signed package
//! (`PATCHBAY_UPDATE_VERSION` is then the installed version).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use base64::Engine;

use anyhow::{Context, Result, ensure};
use patchbay_e2e::{App, AppOptions};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

/// The version of the installed package, as dpkg knows it.
fn installed_version() -> Result<String> {
    let out = Command::new("dpkg-query").args(["-W", "-f=${Version}", "patchbay"]).output()?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn main() -> Result<()> {
    let installed = std::env::var_os("PATCHBAY_APP").context("set PATCHBAY_APP to the installed binary")?;
    let feed = PathBuf::from(std::env::var_os("PATCHBAY_UPDATE_DIR").context("set PATCHBAY_UPDATE_DIR")?);
    let newer = std::env::var("PATCHBAY_UPDATE_VERSION").context("set PATCHBAY_UPDATE_VERSION")?;
    let home = PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?);
    // Where the app puts its data by default on Linux.
    let data_dir = home.join(".local/share/patchbay");
    let app = App::start("install-check", AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() })?;
    app.check(|s| {
        s.wait_for("#page-chat", WAIT)?;
        let size = s.execute("return [window.innerWidth, window.innerHeight, document.title]", json!([]))?;
        let (w, h) = (size[0].as_u64().unwrap_or(0), size[1].as_u64().unwrap_or(0));
        ensure!(w >= 720 && h >= 480, "the window is {w}x{h}, under its minimum size 720x480");
        ensure!(size[2] == "Patchbay", "page title: {}", size[2]);
        s.click(&s.find("#nav-settings")?)?;
        let version = s.wait_for_text("#app-version", WAIT, |t| !t.is_empty())?;
        ensure!(version == env!("CARGO_PKG_VERSION"), "version over IPC: {version}");
        let shown = s.text(&s.find("#app-data-dir")?)?;
        ensure!(shown == data_dir.display().to_string(), "data dir over IPC: {shown}");

        // The knowledge base served by the installed CLI, as a link would add it.
        let server = json!({"command": "patchbay", "args": ["kb", "serve", "--stdio"]}).to_string();
        let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(server);
        let opened = Command::new("gio")
            .arg("open")
            .arg(format!("patchbay://mcp/install?name=linked&config={config}"))
            .status()?;
        ensure!(opened.success(), "gio open of a patchbay: link failed: {opened}");
        let title = s.wait_for_text("[data-testid=install-link] h2", WAIT, |t| t.contains("linked"))?;
        ensure!(title == "Add the MCP server linked?", "{title}");
        let command = s.wait_for_text("[data-testid=link-command]", WAIT, |t| !t.is_empty())?;
        ensure!(command == "patchbay kb serve --stdio", "{command}");
        s.click(&s.wait_for("#link-confirm:not([disabled])", WAIT)?)?;
        s.wait_for("[data-testid=link-installed]", WAIT)?;
        s.click(&s.find("#link-close")?)?;

        // The update: announced at start; its tampered package is refused, nothing installed.
        let title = s.wait_for_text(".update-banner [data-testid=update] h2", WAIT, |t| !t.is_empty())?;
        ensure!(title.starts_with(&format!("Patchbay {newer} is available")), "{title}");
        let before = installed_version()?;
        s.click(&s.wait_for("#update-install:not([disabled])", WAIT)?)?;
        let refused = s.wait_for_text("[data-testid=update-error]", WAIT, |t| !t.is_empty())?;
        ensure!(refused.contains("was not installed") && refused.contains("nothing was changed"), "{refused}");
        ensure!(installed_version()? == before, "a tampered package changed the install");
        // A signed package, but an older one announced as the update: refused by its own version.
        std::fs::copy(feed.join("older.json"), feed.join("latest.json"))?;
        s.click(&s.wait_for("#update-install:not([disabled])", WAIT)?)?;
        let refused =
            s.wait_for_text("[data-testid=update-error]", WAIT, |t| t.contains("not the one it announced"))?;
        ensure!(refused.contains(&format!("version \"{before}\"")), "{refused}");
        ensure!(installed_version()? == before, "an older signed package changed the install");
        // The feed now names the signed package: installed, with dpkg.
        std::fs::copy(feed.join("good.json"), feed.join("latest.json"))?;
        s.click(&s.wait_for("#update-install:not([disabled])", WAIT)?)?;
        s.wait_for("[data-testid=update-installed]", Duration::from_secs(180))?;
        let after = installed_version()?;
        ensure!(after == newer, "dpkg has {after} installed after the update, not {newer}");
        Ok(())
    })?;
    let shot = app.screenshot("window")?;
    drop(app);
    ensure!(data_dir.join("patchbay.db").is_file(), "the installed app created no database in {}", data_dir.display());
    println!(
        "install check passed: {} opened its window, answered app_info (version {}), took an install link from \
         the desktop, refused a tampered update and an older signed one, and installed the signed one; screenshot {}",
        PathBuf::from(installed).display(),
        env!("CARGO_PKG_VERSION"),
        shot.display()
    );
    Ok(())
}
