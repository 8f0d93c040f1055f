//! `patchbay-sandbox-init` as it runs: a Python child in its scope cannot reach an
//! abstract Unix socket of this test nor signal it (the same child outside can).
//! The proxy's hand-over is tested with the proxy, in the core's sandbox tests.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::process::{Command, Output};

use anyhow::Result;

fn init() -> Command {
    Command::new(env!("CARGO_BIN_EXE_patchbay-sandbox-init"))
}

fn python(script: &str) -> [String; 3] {
    ["python3".into(), "-c".into(), script.into()]
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn the_scope_keeps_abstract_sockets_and_signals_of_the_host_out_of_reach() -> Result<()> {
    let name = format!("patchbay-init-test-{}", std::process::id());
    let listener = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes())?)?;
    let script = format!(
        "import os, socket\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect('\\0{name}'); print('socket: connected')\n\
         except OSError as e: print('socket:', e.strerror)\n\
         try:\n    os.kill({pid}, 0); print('signal: sent')\n\
         except OSError as e: print('signal:', e.strerror)\n",
        pid = std::process::id()
    );
    let outside = Command::new("python3").args(&python(&script)[1..]).output()?;
    assert_eq!(String::from_utf8_lossy(&outside.stdout), "socket: connected\nsignal: sent\n", "{}", text(&outside));
    drop(listener.accept()?);
    let inside = init().arg("--").args(python(&script)).output()?;
    assert!(inside.status.success(), "{}", text(&inside));
    assert_eq!(
        String::from_utf8_lossy(&inside.stdout),
        "socket: Operation not permitted\nsignal: Operation not permitted\n",
        "{}",
        text(&inside)
    );
    Ok(())
}

#[test]
fn a_missing_server_is_an_error_that_names_it() -> Result<()> {
    let output = init().args(["--", "/nonexistent/server"]).output()?;
    assert_eq!(output.status.code(), Some(127));
    assert!(text(&output).contains("cannot run \"/nonexistent/server\""), "{}", text(&output));
    Ok(())
}
