//! Runs a stdio server inside its policy: on Linux under bubblewrap (`bwrap`), as Flatpak does:
//! unprivileged, and the whole filesystem view built from arguments, plain data computed here that
//! tests can read.
//!
//! The view (`View`): system folders read-only; home read-only at normal, absent at strict; the
//! command, its install folder and declared read folders read-only; write folders, the launcher's
//! cache and a private `/tmp` writable; last, the secret places ([`NEVER`], Patchbay's data folder)
//! masked. No capabilities, its own PID namespace, dies with Patchbay; network off or a list of
//! domains is its own network namespace, domains through [`super::egress`]. The environment is
//! filtered ([`KEPT_ENV`]). A `docker`/`podman` server is not wrapped (the container is its sandbox).
//! Where the sandbox cannot run, a level that needs it fails with [`McpError::SandboxUnavailable`],
//! which says how to choose permissive; permissive runs the server unconfined.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio::sync::OnceCell;

use super::LoginEnv;
use super::egress::{BlockListener, Egress};
use super::stdio::Launch;
use crate::config::{Network, Resolved, SecurityLevel};
use crate::mcp::error::McpError;

/// Places under home no server sees below permissive: credentials, keyrings,
/// browser profiles and shell histories.
pub const NEVER: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/gh/hosts.yml",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials.toml",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".viminfo",
    ".histfile",
    ".local/share/zsh/history",
    ".local/share/atuin",
    ".docker",
    ".1password",
    ".bitwarden-ssh-agent.sock",
    ".config/containers/auth.json",
    ".pgpass",
    ".config/rclone",
    ".terraform.d",
    ".vault-token",
    ".config/sops",
    ".local/share/kwalletd",
    ".thunderbird",
    ".var/app",
    "snap",
    ".config/Claude",
    ".Xauthority",
    ".ICEauthority",
    ".dbus",
];

/// Where bubblewrap may be taken from: root-owned system folders only, never
/// the login `PATH` (a server that planted `~/.local/bin/bwrap` would run
/// unconfined at its next start).
const BWRAP: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// Variables of Patchbay's environment a sandboxed server keeps, besides `LC_*`,
/// its configured ones and its policy's extra names.
const KEPT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "NVM_DIR",
    "VOLTA_HOME",
    "UV_CACHE_DIR",
    "UV_PYTHON_INSTALL_DIR",
    "npm_config_cache",
    "NPM_CONFIG_REGISTRY",
    "PIP_INDEX_URL",
    "UV_INDEX_URL",
];

/// The environment's proxy variables: none is kept where the network is off
/// or a list of domains ...
const PROXY_VARS: &[&str] =
    &["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"];
/// ... and these name the filtering proxy for a list. Not `ALL_PROXY`: every
/// HTTP client that reads it reads these too, and httpx builds a transport,
/// each with its own TLS context, per variable it finds (three contexts a
/// client instead of four for mcp-server-fetch, docs/BENCHMARKS.md).
const SET_PROXY_VARS: &[&str] = &["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];

/// The loopback port inside the sandbox that `patchbay-sandbox-init` listens
/// on and hands over to the proxy.
const PROXY_PORT: u16 = 3128;
/// Patchbay's own first process in a sandbox (crates/sandbox-init), installed
/// beside Patchbay's programs ...
const INIT_NAME: &str = "patchbay-sandbox-init";
/// ... and where it appears inside the sandbox.
const INIT: &str = "/run/patchbay-sandbox-init";
/// Where the proxy's socket folder appears inside the sandbox.
const PROXY_DIR: &str = "/run/patchbay-egress";

/// The system's folders, read-only (a link, such as `/bin` → `usr/bin`, stays a link).
const SYSTEM: &[&str] = &["/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix"];

/// Everything a sandboxed start needs besides the server's configuration.
pub(crate) struct SandboxContext<'a> {
    pub(crate) env: &'a LoginEnv,
    /// Folders no server may see (Patchbay's data folder).
    pub(crate) protected: &'a [PathBuf],
    pub(crate) on_block: BlockListener,
}

/// A launch inside its policy, with the proxy it needs while it runs.
#[derive(Debug)]
pub(crate) struct Confined {
    pub(crate) launch: Launch,
    pub(crate) egress: Option<Egress>,
}

/// Wraps `launch` in `policy`. `configured` names the server's own variables.
pub(crate) async fn confine(
    server: &str,
    launch: Launch,
    configured: &[String],
    policy: &Resolved,
    cx: SandboxContext<'_>,
) -> Result<Confined, McpError> {
    if policy.level == SecurityLevel::Permissive {
        return Ok(Confined { launch, egress: None });
    }
    let unavailable = |reason: String| McpError::SandboxUnavailable {
        server: server.to_owned(),
        level: policy.level.to_string(),
        reason,
    };
    let mut launch = launch;
    launch.env = filtered_env(launch.env, configured, &policy.env);
    if is_container(&launch.program, &launch.args) {
        launch.args = with_mounts(std::mem::take(&mut launch.args), policy);
        return Ok(Confined { launch, egress: None });
    }
    let bwrap = bubblewrap().await.map_err(unavailable)?;
    // The user's home as Patchbay's login environment has it (not as the
    // server's own configuration may set it), through its links: the masks
    // are laid where the files really are.
    let given_home = lookup(&cx.env.with(&[]), "HOME").map(PathBuf::from).or_else(dirs::home_dir);
    let home = given_home.as_ref().map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()));
    if let (Some(given), Some(real)) = (&given_home, &home)
        && given != real
        && lookup(&launch.env, "HOME").is_some_and(|h| Path::new(h) == given)
    {
        launch.env.retain(|(k, _)| k != "HOME");
        launch.env.push(("HOME".into(), real.clone().into_os_string()));
    }
    let mut view = View::new(policy.level, home.clone(), cx.protected);
    view.dns = policy.network == Network::Any;
    for folder in launcher_caches(&launch.program, home.as_deref()) {
        view.writable(folder);
    }
    // Its own install folder (a venv, a `node_modules`, a bundle) is read,
    // never written: it may be shared (nvm, `~/.local`) and is what runs next.
    for folder in command_folders(&launch.program, cx.env, home.as_deref()) {
        view.readable(folder);
    }
    policy.read.iter().for_each(|p| view.readable(p.clone()));
    policy.write.iter().for_each(|p| view.writable(p.clone()));
    let mut args =
        dotdot_dirs(launch.args.iter().map(String::as_str).chain(launch.cwd.iter().filter_map(|c| c.to_str())));
    args.extend(view.arguments());
    if let Some(cwd) = &launch.cwd {
        args.extend(["--chdir".into(), cwd.clone().into()]);
    }
    // Patchbay's own first process (crates/sandbox-init) scopes the server and,
    // for a list of domains, hands the proxy its listener; then it becomes the server.
    let init = sandbox_init().map_err(unavailable)?;
    args.extend(["--ro-bind".into(), init.into_os_string(), INIT.into()]);
    let mut command: Vec<OsString> = vec![INIT.into()];
    let mut egress = None;
    match &policy.network {
        Network::Any => {}
        Network::Off => {
            args.push("--unshare-net".into());
            launch.env.retain(|(k, _)| !PROXY_VARS.iter().any(|p| k == p));
        }
        Network::Domains(_) => {
            // Under Patchbay's data folder, which every sandbox masks.
            let under = cx.protected.first().cloned().unwrap_or_else(std::env::temp_dir);
            let proxy = Egress::start(policy.network.clone(), cx.on_block, &under)
                .map_err(|e| unavailable(format!("the filtering proxy could not start: {e}")))?;
            args.push("--unshare-net".into());
            args.extend(["--ro-bind".into(), proxy.dir().into(), PROXY_DIR.into()]);
            command.extend([
                "--proxy".into(),
                PROXY_PORT.to_string().into(),
                format!("{PROXY_DIR}/{}", proxy.socket_name()).into(),
            ]);
            set_proxy_env(&mut launch.env);
            egress = Some(proxy);
        }
    }
    command.extend(["--".into(), launch.program.clone().into_os_string()]);
    command.extend(launch.args.iter().map(OsString::from));
    args.push("--".into());
    args.extend(command);
    let launch = Launch {
        program: bwrap,
        args: args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        env: launch.env,
        cwd: launch.cwd,
    };
    Ok(Confined { launch, egress })
}

/// The folders a sandboxed server sees, and how, in mount order.
struct View {
    level: SecurityLevel,
    /// Whether the system's resolver (`/run/systemd/resolve`) is reachable: only with the whole network.
    dns: bool,
    home: Option<PathBuf>,
    protected: Vec<PathBuf>,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
}

impl View {
    fn new(level: SecurityLevel, home: Option<PathBuf>, protected: &[PathBuf]) -> Self {
        Self { level, dns: false, home, protected: protected.to_vec(), read: Vec::new(), write: Vec::new() }
    }

    fn readable(&mut self, path: PathBuf) {
        if path.exists() && !self.read.contains(&path) {
            self.read.push(path);
        }
    }

    fn writable(&mut self, path: PathBuf) {
        if path.exists() && !self.write.contains(&path) {
            self.write.push(path);
        }
    }

    /// bubblewrap's arguments: each later mount lies over the earlier ones.
    fn arguments(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> =
            // Its own session: no controlling terminal to push keystrokes into (TIOCSTI).
            ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
                .into_iter()
                .map(OsString::from)
                .collect();
        args.extend(["--cap-drop", "ALL"].map(OsString::from));
        let mut push = |flag: &str, from: &Path, to: &Path| {
            args.extend([flag.into(), from.as_os_str().to_owned(), to.as_os_str().to_owned()]);
        };
        for dir in SYSTEM.iter().map(Path::new) {
            match std::fs::read_link(dir) {
                Ok(target) => push("--symlink", &target, dir),
                Err(_) if dir.is_dir() => push("--ro-bind", dir, dir),
                Err(_) => {}
            }
        }
        // DNS where /etc/resolv.conf points into /run (systemd-resolved); with
        // the network off or behind the proxy the server needs none (and its
        // resolver would be a way out by DNS queries).
        let resolved = Path::new("/run/systemd/resolve");
        if self.dns && resolved.is_dir() {
            push("--ro-bind", resolved, resolved);
        }
        let mut visible: Vec<&Path> = Vec::new();
        let mut rest: Vec<OsString> = ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
            .into_iter()
            .map(OsString::from)
            .collect();
        if let Some(home) = &self.home {
            let flag = if self.level == SecurityLevel::Normal { "--ro-bind" } else { "--tmpfs" };
            rest.push(flag.into());
            if self.level == SecurityLevel::Normal {
                rest.push(home.clone().into());
                visible.push(home);
            }
            rest.push(home.clone().into());
        }
        args.append(&mut rest);
        let mut push = |flag: &str, path: &Path| {
            args.extend([flag.into(), path.as_os_str().to_owned(), path.as_os_str().to_owned()]);
        };
        for path in &self.read {
            push("--ro-bind", path);
            visible.push(path);
        }
        for path in &self.write {
            push("--bind", path);
            visible.push(path);
        }
        // Strict's empty home takes no writes (its mount points are made by now).
        if let (Some(home), SecurityLevel::Strict) = (&self.home, self.level) {
            args.extend(["--remount-ro".into(), home.clone().into_os_string()]);
        }
        // A secret place is masked wherever it shows: inside a visible folder,
        // or holding one (a folder granted inside `~/.ssh` stays hidden).
        for secret in self.secrets() {
            if !visible.iter().any(|v| secret.starts_with(v) || v.starts_with(&secret)) {
                continue;
            }
            if secret.is_dir() {
                args.extend(["--tmpfs".into(), secret.into_os_string()]);
            } else if secret.exists() {
                args.extend(["--ro-bind".into(), "/dev/null".into(), secret.into_os_string()]);
            }
        }
        // The server's own folders inside Patchbay's data folder (an installed
        // bundle) show again, read-only, over its mask.
        for path in self.read.iter().chain(&self.write) {
            if self.protected.iter().any(|p| path.starts_with(p)) {
                args.extend(["--ro-bind".into(), path.clone().into_os_string(), path.clone().into_os_string()]);
            }
        }
        args
    }

    /// The never-list under home and Patchbay's own folders.
    fn secrets(&self) -> Vec<PathBuf> {
        let mut secrets: Vec<PathBuf> = self.protected.clone();
        if let Some(home) = &self.home {
            secrets.extend(NEVER.iter().map(|p| home.join(p)));
        }
        secrets
    }
}

/// `--dir` for each folder a path in the arguments climbs out of with `..`
/// (`/a/b/../x` needs `/a/b` to exist before the kernel can go up from it),
/// so that such a path reaches the file the sandbox shows at its real place.
fn dotdot_dirs<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<OsString> {
    let mut dirs: Vec<OsString> = Vec::new();
    for text in texts {
        let value = text.split_once('=').filter(|(flag, _)| flag.starts_with('-')).map_or(text, |(_, v)| v);
        let path = Path::new(value);
        if !path.is_absolute() {
            continue;
        }
        let mut prefix = PathBuf::new();
        for part in path.components() {
            let climbs_from_a_name =
                prefix.components().next_back().is_some_and(|c| c != std::path::Component::ParentDir);
            if part == std::path::Component::ParentDir
                && climbs_from_a_name
                && !dirs.contains(&prefix.clone().into_os_string())
            {
                dirs.push(prefix.clone().into_os_string());
            }
            prefix.push(part);
        }
    }
    dirs.into_iter().flat_map(|d| [OsString::from("--dir"), d]).collect()
}

/// The environment without what the server was not given.
fn filtered_env(env: Vec<(OsString, OsString)>, configured: &[String], extra: &[String]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = env
        .into_iter()
        .filter(|(k, _)| {
            let name = k.to_string_lossy();
            KEPT_ENV.contains(&name.as_ref())
                || name.starts_with("LC_")
                || configured.iter().any(|c| *c == name)
                || extra.iter().any(|c| *c == name)
        })
        .collect();
    env.retain(|(k, _)| k != "TMPDIR");
    env.push(("TMPDIR".into(), "/tmp".into()));
    env
}

fn lookup<'e>(env: &'e [(OsString, OsString)], name: &str) -> Option<&'e OsString> {
    env.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// The HTTP and HTTPS proxy variables name the proxy's port; nothing is exempt from it.
fn set_proxy_env(env: &mut Vec<(OsString, OsString)>) {
    env.retain(|(k, _)| !PROXY_VARS.iter().any(|p| k == p) && k != "NODE_USE_ENV_PROXY");
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    env.extend(SET_PROXY_VARS.iter().map(|k| (OsString::from(k), OsString::from(&url))));
    // Node's own fetch reads the proxy variables only when asked to (Node 24+).
    env.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
}

/// The folders a command needs to run ([`install_folders`]), for the link
/// and its target, and those of the interpreter its `#!` line names.
fn command_folders(program: &Path, env: &LoginEnv, home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = vec![program.to_path_buf()];
    if let Ok(real) = program.canonicalize() {
        paths.push(real);
    }
    if let Some(interpreter) = shebang(program, env) {
        paths.push(interpreter.clone());
        paths.extend(interpreter.canonicalize().ok());
    }
    let mut folders: Vec<PathBuf> = Vec::new();
    for folder in paths.iter().flat_map(|p| install_folders(p, home)) {
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    folders
}

/// Where a command is installed: a venv (and the Python it was made from),
/// the folder above the top `node_modules`, the prefix above a `bin` folder
/// (pyenv, nvm), else its own folder; nothing for the system's folders.
fn install_folders(path: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    if let Some(venv) = path.ancestors().skip(1).find(|a| a.join("pyvenv.cfg").is_file()) {
        let mut folders = vec![venv.to_path_buf()];
        let config = std::fs::read_to_string(venv.join("pyvenv.cfg")).unwrap_or_default();
        let base = config.lines().find_map(|l| Some(l.split_once('=')?).filter(|(k, _)| k.trim() == "home"));
        if let Some((_, bin)) = base {
            folders.extend(install_folders(&Path::new(bin.trim()).join("python"), home));
        }
        return folders;
    }
    if let Some(modules) = path.ancestors().filter(|a| a.file_name().is_some_and(|n| n == "node_modules")).last() {
        return modules.parent().map(Path::to_path_buf).into_iter().collect();
    }
    let Some(parent) = path.parent() else { return Vec::new() };
    let prefix = parent.parent().filter(|prefix| {
        parent.file_name().is_some_and(|n| n == "bin")
            && home.is_none_or(|home| *prefix != home && *prefix != home.join(".local").as_path())
    });
    let folder = prefix.unwrap_or(parent);
    let system = SYSTEM.iter().any(|s| folder.starts_with(s)) || folder == Path::new("/") || folder.starts_with("/usr");
    if system { Vec::new() } else { vec![folder.to_path_buf()] }
}

/// The interpreter of a script: `#!/path/x` or `#!/usr/bin/env x` (found on the login `PATH`).
fn shebang(program: &Path, env: &LoginEnv) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).and_then(|mut f| f.read(&mut head)).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = std::str::from_utf8(line.split(|b| *b == b'\n').next()?).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if Path::new(first).file_name().is_some_and(|n| n == "env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        env.resolve(name, None).ok()
    } else {
        Some(PathBuf::from(first))
    }
}

/// The cache of the server's launcher, and only that one, created when
/// missing (so `npx` works in a read-only home). Installed tools and
/// Pythons (`~/.local/share/uv`) stay read-only: they are what runs next.
fn launcher_caches(program: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(home) = home else { return Vec::new() };
    let name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let needed: &[&str] = match name.as_str() {
        "npx" | "npm" | "pnpm" => &[".npm"],
        "uvx" | "uv" => &[".cache/uv"],
        "pipx" => &[".cache/pip"],
        "bunx" | "bun" => &[".bun/install/cache"],
        "deno" => &[".cache/deno"],
        _ => &[],
    };
    needed
        .iter()
        .map(|cache| home.join(cache))
        .inspect(|cache| {
            let _ = std::fs::create_dir_all(cache);
        })
        .collect()
}

/// A program the system installed: owned by root and writable by no one else.
fn system_program(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.uid() == 0 && m.mode() & 0o022 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// `docker run` or `podman run` of the system's own docker or podman (a file
/// merely named `docker` elsewhere, such as in a bundle, is not a container).
fn is_container(program: &Path, args: &[String]) -> bool {
    let named = program.file_name().is_some_and(|n| n == "docker" || n == "podman");
    let real = program.canonicalize().unwrap_or_else(|_| program.to_path_buf());
    named && real.starts_with("/usr") && system_program(&real) && args.iter().any(|a| a == "run")
}

/// `docker run …` with the policy's folders as its mounts, unless it names its own.
fn with_mounts(args: Vec<String>, policy: &Resolved) -> Vec<String> {
    let names_mounts =
        args.iter().any(|a| a == "-v" || a.starts_with("--volume") || a.starts_with("--mount") || a.starts_with("-v="));
    let Some(run) = args.iter().position(|a| a == "run") else { return args };
    if names_mounts {
        return args;
    }
    let mounts = policy
        .read
        .iter()
        .map(|p| format!("{0}:{0}:ro", p.display()))
        .chain(policy.write.iter().map(|p| format!("{0}:{0}", p.display())))
        .flat_map(|m| ["-v".to_owned(), m]);
    let mut out: Vec<String> = args[..=run].to_vec();
    out.extend(mounts);
    if policy.network == Network::Off && !args.iter().any(|a| a.starts_with("--network") || a.starts_with("--net")) {
        out.push("--network=none".to_owned());
    }
    out.extend_from_slice(&args[run + 1..]);
    out
}

/// bubblewrap where the login environment finds it, once found to work here
/// (the kernel lets it create its namespaces: probed once per process).
/// [`INIT_NAME`] beside the running program, or one folder up (a test
/// harness runs from `target/*/deps`, the programs are built one above).
fn sandbox_init() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("Patchbay cannot tell where it runs from: {e}"))?;
    let dir = exe.parent();
    [dir, dir.and_then(Path::parent)]
        .into_iter()
        .flatten()
        .map(|d| d.join(INIT_NAME))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{INIT_NAME} is not installed beside {}", exe.display()))
}

async fn bubblewrap() -> Result<PathBuf, String> {
    found_bubblewrap(BWRAP).await
}

/// [`bubblewrap`] from the first of `candidates` that is a root-owned program no one else may change.
async fn found_bubblewrap(candidates: &[&str]) -> Result<PathBuf, String> {
    static PROBE: OnceCell<Result<(), String>> = OnceCell::const_new();
    if !cfg!(target_os = "linux") {
        return Err("the sandbox is only available on Linux".to_owned());
    }
    let bwrap = candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| system_program(p))
        .ok_or_else(|| format!("bubblewrap (bwrap) is not installed in {}", candidates.join(", ")))?;
    PROBE
        .get_or_init(|| async {
            let probe = tokio::process::Command::new(&bwrap)
                .args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--unshare-net"])
                .args(["--die-with-parent", "--cap-drop", "ALL", "--", "true"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .output();
            match tokio::time::timeout(std::time::Duration::from_secs(10), probe).await {
                Ok(Ok(out)) if out.status.success() => Ok(()),
                Ok(Ok(out)) => Err(format!(
                    "bubblewrap cannot create its namespaces here ({}): unprivileged user namespaces may be off",
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                Ok(Err(e)) => Err(format!("bubblewrap could not run: {e}")),
                Err(_) => Err("bubblewrap did not answer within 10 s".to_owned()),
            }
        })
        .await
        .clone()
        .map(|()| bwrap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_bubblewrap_the_sandbox_is_unavailable_and_says_how_to_choose_permissive() {
        let reason = found_bubblewrap(&["/nonexistent/bwrap"]).await.unwrap_err();
        assert_eq!(reason, "bubblewrap (bwrap) is not installed in /nonexistent/bwrap");
        let error = McpError::SandboxUnavailable { server: "files".into(), level: "strict".into(), reason };
        let text = error.to_string();
        assert!(text.contains("bubblewrap (bwrap) is not installed in /nonexistent/bwrap"), "{text}");
        assert!(text.contains("`patchbay mcp policy files --level permissive`"), "{text}");
        #[cfg(target_os = "linux")]
        assert!(found_bubblewrap(BWRAP).await.is_ok(), "bubblewrap works on the machines Patchbay is tested on");
    }

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn normal_reads_home_and_masks_its_secrets_last() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        std::fs::write(h.join(".netrc"), "machine x").unwrap();
        let data = h.join(".local/share/patchbay");
        std::fs::create_dir_all(&data).unwrap();
        let work = h.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mut view = View::new(SecurityLevel::Normal, Some(h.to_path_buf()), std::slice::from_ref(&data));
        view.writable(work.clone());
        view.writable(h.join("missing"));
        let args = strings(&view.arguments());
        let joined = args.join(" ");
        let at = |needle: String| joined.find(&needle).unwrap_or_else(|| panic!("{needle} not in {joined}"));
        let home_ro = at(format!("--ro-bind {0} {0}", h.display()));
        let work_rw = at(format!("--bind {0} {0}", work.display()));
        let ssh = at(format!("--tmpfs {}", h.join(".ssh").display()));
        let netrc = at(format!("--ro-bind /dev/null {}", h.join(".netrc").display()));
        let db = at(format!("--tmpfs {}", data.display()));
        assert!(home_ro < work_rw && work_rw < ssh.min(netrc).min(db), "the masks come after every bind");
        assert!(!joined.contains("missing"));
        assert!(args.contains(&"--die-with-parent".to_owned()) && args.contains(&"ALL".to_owned()));
    }

    #[test]
    fn strict_hides_home_behind_an_empty_folder() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        let view = View::new(SecurityLevel::Strict, Some(home.path().to_path_buf()), &[]);
        let joined = strings(&view.arguments()).join(" ");
        assert!(joined.contains(&format!("--tmpfs {}", home.path().display())));
        assert!(!joined.contains("--ro-bind /dev/null") && !joined.contains(".ssh"), "{joined}");
    }

    #[test]
    fn the_environment_keeps_only_what_the_server_was_given() {
        let env: Vec<(OsString, OsString)> =
            [("PATH", "/bin"), ("GITHUB_TOKEN", "t"), ("API", "k"), ("LC_ALL", "C"), ("X", "1")]
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
        let kept = filtered_env(env, &["API".into()], &["X".into()]);
        let names: Vec<String> = kept.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["PATH", "API", "LC_ALL", "X", "TMPDIR"]);
    }

    #[test]
    fn behind_the_proxy_only_the_http_and_https_variables_name_it() {
        let mut env: Vec<(OsString, OsString)> = [
            ("HTTP_PROXY", "http://corp:8080"),
            ("ALL_PROXY", "socks5://corp:1080"),
            ("no_proxy", "localhost"),
            ("NODE_USE_ENV_PROXY", "0"),
            ("PATH", "/bin"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        set_proxy_env(&mut env);
        let set: Vec<String> = env.iter().map(|(k, v)| format!("{}={}", k.display(), v.display())).collect();
        let proxy = "http://127.0.0.1:3128";
        let expected = [
            "PATH=/bin".to_owned(),
            format!("HTTP_PROXY={proxy}"),
            format!("HTTPS_PROXY={proxy}"),
            format!("http_proxy={proxy}"),
            format!("https_proxy={proxy}"),
            "NODE_USE_ENV_PROXY=1".to_owned(),
        ];
        assert_eq!(set, expected);
    }

    #[test]
    fn a_container_gets_the_folders_as_mounts_unless_it_names_its_own() {
        let policy = Resolved {
            level: SecurityLevel::Normal,
            read: vec!["/r".into()],
            write: vec!["/w".into()],
            network: Network::Any,
            env: vec![],
            rate: Default::default(),
        };
        let args: Vec<String> = ["run", "-i", "--rm", "img"].map(String::from).to_vec();
        assert_eq!(with_mounts(args, &policy), ["run", "-v", "/r:/r:ro", "-v", "/w:/w", "-i", "--rm", "img"]);
        let own: Vec<String> = ["run", "-v", "/x:/x", "img"].map(String::from).to_vec();
        assert_eq!(with_mounts(own.clone(), &policy), own);
        let off = Resolved { network: Network::Off, ..policy };
        let args: Vec<String> = ["run", "img"].map(String::from).to_vec();
        assert_eq!(with_mounts(args, &off), ["run", "-v", "/r:/r:ro", "-v", "/w:/w", "--network=none", "img"]);
    }

    #[cfg(unix)]
    #[test]
    fn only_a_root_owned_program_no_one_else_can_change_is_taken_for_bubblewrap_or_docker() {
        use std::os::unix::fs::{PermissionsExt, chown};
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("docker");
        patchbay_test_support::processes::write_program(&fake, "#!/bin/sh\n").unwrap();
        // A program named docker in a bundle's folder is no container, whoever owns it.
        assert!(!is_container(&fake, &["run".to_owned(), "img".to_owned()]));
        if nix_is_root() {
            assert!(system_program(&fake), "root-owned and 0755");
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o775)).unwrap();
            assert!(!system_program(&fake), "writable by its group");
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
            chown(&fake, Some(65534), None).unwrap();
        }
        assert!(!system_program(&fake), "owned by another user");
    }

    #[cfg(unix)]
    fn nix_is_root() -> bool {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }

    #[test]
    fn a_secret_place_stays_masked_around_a_folder_granted_inside_it_and_a_bundle_shows_over_the_data_mask() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let key = h.join(".ssh/keys");
        std::fs::create_dir_all(&key).unwrap();
        let data = h.join(".local/share/patchbay");
        let bundle = data.join("extensions/notes");
        std::fs::create_dir_all(&bundle).unwrap();
        for level in [SecurityLevel::Strict, SecurityLevel::Normal] {
            let mut view = View::new(level, Some(h.to_path_buf()), std::slice::from_ref(&data));
            view.writable(key.clone());
            view.readable(bundle.clone());
            let joined = strings(&view.arguments()).join(" ");
            let at =
                |needle: String| joined.find(&needle).unwrap_or_else(|| panic!("{level}: {needle} not in {joined}"));
            assert!(at(format!("--bind {0} {0}", key.display())) < at(format!("--tmpfs {}", h.join(".ssh").display())));
            let mask = at(format!("--tmpfs {}", data.display()));
            assert!(mask < joined.rfind(&format!("--ro-bind {0} {0}", bundle.display())).unwrap(), "{level}: {joined}");
            assert!(joined.contains("--new-session"), "no controlling terminal");
            assert!(!joined.contains("/run/systemd/resolve"), "the resolver only with the whole network");
        }
    }

    #[test]
    fn a_path_that_climbs_out_with_dotdot_gets_the_folders_it_climbs_out_of() {
        let args = ["/w/main/crates/core/../../tests/app.py", "--db=/a/b/../c", "relative/../x", "/plain/path"];
        let dirs = strings(&dotdot_dirs(args.into_iter()));
        assert_eq!(dirs, ["--dir", "/w/main/crates/core", "--dir", "/a/b"]);
    }

    #[test]
    fn a_server_writes_only_its_own_launchers_cache() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        assert_eq!(launcher_caches(Path::new("/usr/bin/npx"), Some(h)), [h.join(".npm")]);
        assert_eq!(launcher_caches(Path::new("/home/u/.local/bin/uvx"), Some(h)), [h.join(".cache/uv")]);
        assert!(launcher_caches(Path::new("/usr/bin/python3"), Some(h)).is_empty());
        assert!(h.join(".npm").is_dir() && !h.join(".local/share/uv").exists());
    }
}
