//! One app per data directory, and the window geometry remembered across launches.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use patchbay_core::config::{ConfigStore, McpServerConfig};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_e2e::app::app_binary;
use patchbay_e2e::{App, AppOptions, Spawned};
use patchbay_test_support::hostile::hostile_mcp;

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn a_second_launch_on_the_same_data_dir_hands_over_and_exits() -> Result<()> {
    let app = App::start("a_second_launch_on_the_same_data_dir_hands_over_and_exits", AppOptions::default())?;
    app.check(|s| s.wait_for("#page-chat", WAIT).map(drop))?;
    let bin = app_binary()?;

    // Without a display: the launch hands over before it starts GTK (or opens the database).
    let mut second = Spawned::spawn(
        Command::new(&bin).arg("--data-dir").arg(&app.data_dir).env_remove("DISPLAY").stdout(Stdio::null()),
    )?;
    let status = second.wait_timeout(WAIT).context("the second launch on the same data dir did not exit")?;
    ensure!(status.success(), "the second launch exited with {status}");

    // The first window goes on answering.
    app.check(|s| {
        s.click(&s.find("#nav-settings")?)?;
        s.wait_for_text("#app-version", WAIT, |t| t == env!("CARGO_PKG_VERSION")).map(drop)
    })?;

    // A launch on another data dir is another instance: it opens its window and answers IPC.
    let other = tempfile::tempdir()?;
    let _third = launch_and_wait_for_ipc(other.path())?;
    Ok(())
}

/// Starts the app at `data_dir` and waits until it answers `app_info`; the app
/// keeps running while the returned process lives.
fn launch_and_wait_for_ipc(data_dir: &std::path::Path) -> Result<Spawned> {
    let mut launched = Spawned::spawn(
        Command::new(app_binary()?)
            .arg("--data-dir")
            .arg(data_dir)
            .env("PATCHBAY_STARTUP_PROBE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    )?;
    let stderr = launched.child.stderr.take().context("stderr is piped")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with("patchbay-startup-probe answered") {
                let _ = tx.send(line);
            }
        }
    });
    rx.recv_timeout(WAIT).context("the launch never answered app_info")?;
    ensure!(launched.child.try_wait()?.is_none(), "the launch exited");
    Ok(launched)
}

/// Ending the app and launching it again at once opens a new window, also
/// while the ending app still stops its MCP servers (here one that ignores its
/// stdin closing, so stopping it takes the 2 s grace period): the ending app
/// gives up the data dir first. It once kept it until its very end, and the new
/// launch handed over to it and exited with nothing on screen. The app is
/// ended with SIGTERM, which it takes as closing its window (a WebDriver
/// session cannot close the last window without killing the app).
#[test]
fn a_launch_while_the_last_window_closes_opens_its_own() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let config = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?);
    config.save_server(&McpServerConfig::stdio(
        "stubborn",
        hostile_mcp().to_string_lossy(),
        &["ignore-stdin-close"],
    ))?;
    let mut first = launch_and_wait_for_ipc(&data_dir)?;
    // The server starts in milliseconds; give it time to be running when the app ends.
    std::thread::sleep(Duration::from_secs(1));
    let term = Command::new("kill").args(["-TERM", &first.child.id().to_string()]).status()?;
    ensure!(term.success(), "kill -TERM failed");
    std::thread::sleep(Duration::from_millis(500));
    ensure!(first.child.try_wait()?.is_none(), "the app ended at once; it did not stop its server first");
    let _second = launch_and_wait_for_ipc(&data_dir)?;
    let status = first.wait_timeout(WAIT).context("the first app never finished stopping")?;
    ensure!(status.success(), "the first app ended with {status} after SIGTERM");
    Ok(())
}

/// A window whose core could not open (here: a damaged database) still owns
/// its data dir: a launch on another such data dir is another instance (it
/// once took the first for its own, both keyed on the bare identifier, and
/// exited), and a launch on the same one hands over and exits.
#[test]
fn windows_without_a_core_are_keyed_on_their_data_dirs() -> Result<()> {
    let damaged = || -> Result<tempfile::TempDir> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("patchbay.db"), vec![0xA5u8; 4096])?;
        Ok(dir)
    };
    let first = damaged()?;
    let app = App::start(
        "windows_without_a_core_are_keyed_on_their_data_dirs",
        AppOptions { data_dir: Some(first.path().to_path_buf()), ..Default::default() },
    )?;
    app.check(|s| s.wait_for("#nav-settings", WAIT).map(drop))?;
    let bin = app_binary()?;
    let launch = |dir: &std::path::Path| {
        Spawned::spawn(Command::new(&bin).arg("--data-dir").arg(dir).stdout(Stdio::null()).stderr(Stdio::null()))
    };

    let other = damaged()?;
    let mut second = launch(other.path())?;
    // A hand-over takes well under a second; this launch must still be running after five.
    let ended = second.wait_timeout(Duration::from_secs(5));
    ensure!(
        ended.is_err(),
        "the launch on another damaged data dir exited ({ended:?}): it took the first window for its own"
    );

    let mut third = launch(first.path())?;
    let status = third.wait_timeout(WAIT).context("the second launch on the same damaged data dir did not exit")?;
    ensure!(status.success(), "the second launch exited with {status}");
    Ok(())
}

#[test]
fn the_window_size_is_remembered_in_the_data_dir() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let opts = AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() };
    {
        let app = App::start("the_window_size_is_remembered_in_the_data_dir-1", opts.clone())?;
        app.check(|s| {
            s.wait_for("#page-chat", WAIT)?;
            s.set_window_size(900, 640)?;
            let size = s.window_size()?;
            ensure!(size == (900, 640), "the window did not take the new size: {size:?}");
            Ok(())
        })?;
        // The geometry is written once the window has settled, before any exit.
        wait_for_saved_width(&data_dir.join("window-state.json"), 900)?;
        app.close()?;
    }
    // The bus frees the first instance's single-instance name when its connection
    // closes, a moment after the process is gone; a launch before that would hand
    // over to the leaving instance.
    std::thread::sleep(Duration::from_secs(1));
    let saved = std::fs::read_to_string(data_dir.join("window-state.json")).context("no window-state.json")?;
    let app = App::start("the_window_size_is_remembered_in_the_data_dir-2", opts)?;
    app.check(|s| {
        s.wait_for("#page-chat", WAIT)?;
        let size = s.window_size()?;
        ensure!(size == (900, 640), "the window opened at {size:?}, not at the saved 900x640: {saved}");
        Ok(())
    })
}

/// Waits until the saved window state says the main window is `width` wide.
fn wait_for_saved_width(file: &std::path::Path, width: u64) -> Result<()> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let saved = std::fs::read_to_string(file).unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(&saved).unwrap_or_default();
        if json["main"]["width"].as_u64() == Some(width) {
            return Ok(());
        }
        ensure!(std::time::Instant::now() < deadline, "{} never said width {width}: {saved:?}", file.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}
