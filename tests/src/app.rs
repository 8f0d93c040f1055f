//! Starting the built app under tauri-driver for one test.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::webdriver::Session;

/// One window at a time: WebKitWebDriver and the app's single data dir are not
/// meant to be shared, and parallel windows on 2 cores only make each slower.
static ONE_WINDOW: Mutex<()> = Mutex::new(());

/// How to start the app.
#[derive(Debug, Default, Clone)]
pub struct AppOptions {
    /// Data directory; a fresh temporary one when `None`.
    pub data_dir: Option<PathBuf>,
    /// Extra environment for the app.
    pub env: Vec<(String, String)>,
    /// The binary to start; [`app_binary`] when `None`.
    pub binary: Option<PathBuf>,
    /// Command-line arguments after `--data-dir DIR` (a bundle file to open).
    pub args: Vec<String>,
}

/// A running app with its WebDriver session. Dropping it closes the session,
/// stops tauri-driver and removes its temporary directories (the data directory too, unless given).
pub struct App {
    pub session: Session,
    pub data_dir: PathBuf,
    driver: Child,
    binary: PathBuf,
    _tmp: tempfile::TempDir,
    name: String,
    _turn: MutexGuard<'static, ()>,
}

/// The built desktop binary, next to this test executable's target directory.
pub fn app_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("PATCHBAY_APP") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    // target/<profile>/deps/<test-binary>
    let profile_dir = exe.parent().and_then(Path::parent).context("test binary has no target dir")?;
    let app = profile_dir.join("patchbay-desktop");
    if !app.is_file() {
        bail!(
            "{} is missing: build it first with `cargo build -p patchbay-desktop` (scripts/test.sh does)",
            app.display()
        );
    }
    Ok(app)
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts tauri-driver with `env` on free ports and opens a WebDriver session
/// with `caps` (which starts the app); the driver is stopped when that fails.
fn open_session(env: &[(String, String)], caps: &serde_json::Value) -> Result<(Child, Session)> {
    let port = free_port()?;
    let native_port = free_port()?;
    let driver_bin = std::env::var("TAURI_DRIVER").unwrap_or_else(|_| "tauri-driver".to_owned());
    let mut cmd = Command::new(&driver_bin);
    cmd.args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // Its own process group, so that Drop can stop WebKitWebDriver and the app with it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut driver = cmd
        .spawn()
        .with_context(|| format!("starting {driver_bin} (install it with `cargo install tauri-driver --locked`)"))?;
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            kill_group(&mut driver);
            bail!("tauri-driver did not listen on port {port} within 20 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // tauri-driver listens before its WebKitWebDriver does: retry until both answer.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Session::new(&base, caps.clone()) {
            Ok(session) => return Ok((driver, session)),
            Err(e) if Instant::now() > deadline => {
                kill_group(&mut driver);
                return Err(e.context("creating the WebDriver session"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

fn artifacts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts")
}

impl App {
    /// Starts the app for the test called `name`.
    pub fn start(name: &str, opts: AppOptions) -> Result<Self> {
        if std::env::var_os("DISPLAY").is_none() {
            bail!("no DISPLAY: run the end-to-end tests under Xvfb (scripts/test.sh does)");
        }
        let app = match opts.binary {
            Some(binary) => binary,
            None => app_binary()?,
        };
        // A test that failed while holding the lock has already reported its failure.
        let turn = ONE_WINDOW.lock().unwrap_or_else(|p| p.into_inner());
        let tmp = tempfile::tempdir()?;
        let data_dir = opts.data_dir.unwrap_or_else(|| tmp.path().join("data"));
        let mut args = vec!["--data-dir".to_owned(), data_dir.display().to_string()];
        args.extend(opts.args);
        let caps = json!({
            "browserName": "wry",
            "tauri:options": { "application": app, "args": args }
        });
        let mut env: Vec<(String, String)> = vec![
            ("PATCHBAY_DATA_DIR".into(), data_dir.display().to_string()),
            // The webview keeps its own storage (the UI's language, theme) per user:
            // give every window a fresh one, so no test sees another's choices.
            ("XDG_DATA_HOME".into(), tmp.path().join("xdg-data").display().to_string()),
            ("XDG_CONFIG_HOME".into(), tmp.path().join("xdg-config").display().to_string()),
            ("XDG_CACHE_HOME".into(), tmp.path().join("xdg-cache").display().to_string()),
            // WebKitWebDriver's screenshots never answer when the app turns compositing off
            // (src-tauri/src/webview.rs); `opts.env` may set it back to "off" (the benchmarks do).
            ("PATCHBAY_WEBKIT_COMPOSITING".into(), "on".into()),
        ];
        env.extend(opts.env);
        // A port found free can be taken again before WebKitWebDriver listens on it
        // ("Unable to listen for HTTP server"): then start over on other ports, once.
        let (driver, session) = match open_session(&env, &caps) {
            Ok(opened) => opened,
            Err(first) => {
                eprintln!("starting the window failed ({first:#}); trying again on other ports");
                open_session(&env, &caps)?
            }
        };
        Ok(Self { session, data_dir, driver, binary: app, _tmp: tmp, name: name.to_owned(), _turn: turn })
    }

    /// Ends the session and waits up to 10 s for the app to exit by itself, so that its
    /// exit handlers run (the window state is saved on exit), before the driver is stopped.
    pub fn close(self) -> Result<()> {
        self.session.close()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while app_running(self.driver.id(), &self.binary)? {
            if Instant::now() > deadline {
                bail!("the app did not exit within 10 s of the session's end");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// The process group of tauri-driver and everything it started (the app among them).
    pub fn driver_pid(&self) -> u32 {
        self.driver.id()
    }

    /// The app's own process id (its windows carry it as `_NET_WM_PID`, which tells them from
    /// the windows of any other Patchbay on the display).
    #[cfg(unix)]
    pub fn pid(&self) -> Result<u32> {
        let out = Command::new("pgrep")
            .args(["-g", &self.driver.id().to_string(), "-f", "--"])
            .arg(&self.binary)
            .output()
            .context("running pgrep")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let pid = text.lines().next().with_context(|| format!("{} is not running", self.binary.display()))?;
        pid.parse().with_context(|| format!("pgrep gave {pid:?}"))
    }

    /// Saves a screenshot under `tests/artifacts/<test>-<label>.png` and returns its path.
    pub fn screenshot(&self, label: &str) -> Result<PathBuf> {
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{}-{label}.png", self.name));
        std::fs::write(&path, self.session.screenshot()?)?;
        Ok(path)
    }

    /// Runs `body`; on failure saves a screenshot and prints the window's text
    /// (a CI clone, and its screenshots, may be gone by the time anyone reads the log).
    pub fn check(&self, body: impl FnOnce(&Session) -> Result<()>) -> Result<()> {
        let result = body(&self.session);
        if let Err(e) = &result {
            match self.screenshot("failure") {
                Ok(p) => eprintln!("test failed ({e:#}); screenshot saved to {}", p.display()),
                Err(s) => eprintln!("test failed ({e:#}); the screenshot failed too: {s:#}"),
            }
            match self.session.execute("return document.body.innerText", json!([])) {
                Ok(text) => eprintln!("the window's text then:\n{}", text.as_str().unwrap_or_default()),
                Err(t) => eprintln!("the window's text could not be read: {t:#}"),
            }
        }
        result
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.session.close();
        kill_group(&mut self.driver);
    }
}

/// Opens the quick-ask window as a second launch with `--quick-ask` does (the launch hands
/// over to the running app on `data_dir` and exits), and returns its WebDriver handle; the
/// session stays on the window it was on.
pub fn quick_ask_by_launch(s: &Session, data_dir: &Path, wait: Duration) -> Result<String> {
    let main = s.window_handle()?;
    let mut launch = Spawned::spawn(
        Command::new(app_binary()?).arg("--data-dir").arg(data_dir).arg("--quick-ask").stdout(Stdio::null()),
    )?;
    let status = launch.wait_timeout(wait).context("the launch with --quick-ask did not hand over and exit")?;
    anyhow::ensure!(status.success(), "the launch with --quick-ask exited with {status}");
    let deadline = Instant::now() + wait;
    loop {
        if let Some(handle) = s.window_handles()?.into_iter().find(|h| *h != main) {
            return Ok(handle);
        }
        anyhow::ensure!(Instant::now() < deadline, "the quick-ask window never came");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A process started directly, not through tauri-driver (e.g. a second app instance),
/// in its own process group. Dropping it stops the process and everything it started.
pub struct Spawned {
    pub child: Child,
}

impl Spawned {
    /// Spawns `cmd` in a new process group.
    pub fn spawn(cmd: &mut Command) -> Result<Self> {
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        let child = cmd.spawn().with_context(|| format!("starting {:?}", cmd.get_program()))?;
        Ok(Self { child })
    }

    /// Waits up to `timeout` for the process to exit and returns its status.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                bail!("process {} still running after {timeout:?}", self.child.id());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

/// Whether `app` runs in the process group of `driver` (the group a test's driver and app share).
#[cfg(unix)]
fn app_running(driver: u32, app: &Path) -> Result<bool> {
    let status = Command::new("pgrep")
        .args(["-g", &driver.to_string(), "-f", "--"])
        .arg(app)
        .stdout(Stdio::null())
        .status()
        .context("running pgrep")?;
    Ok(status.success())
}

/// Without process groups the app cannot be told apart: it is taken as gone.
#[cfg(not(unix))]
fn app_running(_driver: u32, _app: &Path) -> Result<bool> {
    Ok(false)
}

/// Stops tauri-driver and everything it started (WebKitWebDriver, the app).
#[cfg(not(unix))]
fn kill_group(driver: &mut Child) {
    // No process groups: tauri-driver closes its native driver when it ends.
    let _ = driver.kill();
    let _ = driver.wait();
}

/// Stops tauri-driver and everything it started (WebKitWebDriver, the app).
#[cfg(unix)]
fn kill_group(driver: &mut Child) {
    let group = format!("-{}", driver.id());
    let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = driver.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = driver.wait();
    // Killed is not yet gone: wait until the group is empty, so that a launch
    // right after (a restart) never meets the old app's single-instance lock.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline
        && Command::new("pgrep")
            .args(["-g", &driver.id().to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    {
        std::thread::sleep(Duration::from_millis(50));
    }
}
