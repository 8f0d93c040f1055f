//! The real window: navigation and the app_info IPC round trip, and start-up errors shown in the UI.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use patchbay_e2e::{App, AppOptions, RecordingOpener};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// Presses Ctrl with the key given as the script's argument, as the keyboard would.
const ZOOM_KEY: &str = "window.dispatchEvent(new KeyboardEvent('keydown', { key: arguments[0], ctrlKey: true, bubbles: true, cancelable: true }))";

fn wait_until(mut done: impl FnMut() -> Result<bool>, what: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + WAIT;
    while !done()? {
        if std::time::Instant::now() > deadline {
            bail!("{what} within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

#[test]
fn navigates_and_reads_app_info_over_ipc() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let files = RecordingOpener::new(tmp.path())?;
    let options = AppOptions { env: files.env.clone(), ..Default::default() };
    let app = App::start("navigates_and_reads_app_info_over_ipc", options)?;
    let data_dir = app.data_dir.display().to_string();
    let log = app.data_dir.join("logs").join("patchbay.log");
    app.check(|s| {
        s.wait_for("#page-chat", WAIT)?;
        s.click(&s.find("#nav-settings")?)?;
        let version = s.wait_for_text("#app-version", WAIT, |t| !t.is_empty())?;
        ensure!(version == env!("CARGO_PKG_VERSION"), "version over IPC: {version}");
        let shown = s.text(&s.find("#app-data-dir")?)?;
        ensure!(shown == data_dir, "data dir over IPC: {shown} (expected {data_dir})");
        // The app keeps a log in its data dir; its folder opens in the file manager.
        let shown = s.text(&s.find("#app-log-file")?)?;
        ensure!(shown.starts_with(&log.display().to_string()), "log file over IPC: {shown}");
        let kept =
            std::fs::read_to_string(&log).with_context(|| format!("the app keeps no log at {}", log.display()))?;
        ensure!(kept.contains("Patchbay starts") && kept.contains(&data_dir), "the log: {kept}");
        s.click(&s.find("#open-log-folder")?)?;
        let opened = files.opened(1, WAIT);
        ensure!(opened == [log.parent().unwrap().display().to_string()], "the file manager was asked for {opened:?}");
        s.click(&s.find("#nav-chat")?)?;
        s.wait_for("#page-chat", WAIT)?;
        s.click(&s.find("#nav-settings")?)?;
        s.wait_for_text("#app-version", WAIT, |t| t == version)?;

        // Ctrl+= zooms the page as a browser does (its CSS viewport narrows), the
        // setting follows, and Ctrl+0 goes back.
        let width =
            || -> Result<f64> { s.execute("return window.innerWidth", json!([]))?.as_f64().context("innerWidth") };
        let chosen = || -> Result<Value> { s.execute("return document.querySelector('#zoom').value", json!([])) };
        let before = width()?;
        s.execute(ZOOM_KEY, json!(["="]))?;
        wait_until(|| Ok((width()? - before / 1.1).abs() < 2.0), "the page did not zoom to 110%")?;
        ensure!(chosen()? == json!("1.1"), "the zoom setting shows {}", chosen()?);
        s.execute(ZOOM_KEY, json!(["0"]))?;
        wait_until(|| Ok(width()? == before), "Ctrl+0 did not restore the zoom")?;
        ensure!(chosen()? == json!("1"), "the zoom setting shows {}", chosen()?);
        Ok(())
    })?;
    ensure!(app.data_dir.join("patchbay.db").is_file(), "the app created no database");
    app.screenshot("settings")?;
    Ok(())
}

#[test]
fn an_unusable_data_dir_is_shown_not_fatal() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let file = tmp.path().join("occupied");
    std::fs::write(&file, b"not a folder")?;
    let app = App::start(
        "an_unusable_data_dir_is_shown_not_fatal",
        AppOptions { data_dir: Some(file.clone()), ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        let alert = s.wait_for_text("[role=alert]", WAIT, |t| !t.is_empty())?;
        ensure!(alert.contains("data folder cannot be used"), "alert: {alert}");
        ensure!(alert.contains("occupied"), "alert names no path: {alert}");
        Ok(())
    })?;
    ensure!(std::fs::read(&file)? == b"not a folder", "the file in the way was changed");
    Ok(())
}

#[test]
fn a_damaged_database_is_shown_and_kept() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let db = tmp.path().join("patchbay.db");
    std::fs::write(&db, vec![0xA5u8; 4096])?;
    let app = App::start(
        "a_damaged_database_is_shown_and_kept",
        AppOptions { data_dir: Some(tmp.path().to_path_buf()), ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        let alert = s.wait_for_text("[role=alert]", WAIT, |t| !t.is_empty())?;
        ensure!(alert.contains("database cannot be opened"), "alert: {alert}");
        Ok(())
    })?;
    ensure!(std::fs::read(&db)? == vec![0xA5u8; 4096], "the damaged database was modified");
    Ok(())
}

#[test]
fn a_database_from_a_newer_version_is_shown_and_kept() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let db = tmp.path().join("patchbay.db");
    // A valid SQLite file whose schema version is from the future.
    rusqlite::Connection::open(&db)?.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 9999;")?;
    let before = std::fs::read(&db)?;
    let app = App::start(
        "a_database_from_a_newer_version_is_shown_and_kept",
        AppOptions { data_dir: Some(tmp.path().to_path_buf()), ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        let alert = s.wait_for_text("[role=alert]", WAIT, |t| !t.is_empty())?;
        ensure!(alert.contains("newer Patchbay"), "alert: {alert}");
        Ok(())
    })?;
    ensure!(std::fs::read(&db)? == before, "the newer database was modified");
    Ok(())
}

#[test]
fn a_missing_keyring_is_reported_in_settings() -> Result<()> {
    let app = App::start(
        "a_missing_keyring_is_reported_in_settings",
        AppOptions {
            env: vec![("DBUS_SESSION_BUS_ADDRESS".into(), "unix:path=/nonexistent/patchbay-e2e-bus".into())],
            ..Default::default()
        },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        let keyring = s.wait_for_text("#app-keyring", WAIT, |t| !t.is_empty())?;
        ensure!(keyring.starts_with("unavailable"), "keyring row: {keyring}");
        ensure!(keyring.contains("keyring is unavailable"), "keyring row gives no reason: {keyring}");
        Ok(())
    })
}
