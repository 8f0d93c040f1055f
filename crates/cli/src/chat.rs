//! `patchbay chat`: the same turns as `ask`, in a loop keeping one conversation.
//!
//! Each line is a message. `/attach FILE` attaches a file to the next
//! message, `/new` starts a new conversation, `/quit` (or end of input) leaves.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clap::Args;
use patchbay_core::attach;
use patchbay_core::paths::DataDir;

use crate::ask::{Session, TurnArgs};

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    turn: TurnArgs,
}

pub fn run(dir: &DataDir, args: &ChatArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let mut session = Session::open(dir, &args.turn).await?;
        eprintln!("Type a message; /attach FILE attaches a file to the next one, /new starts a new conversation, /quit leaves.");
        let stdin = std::io::stdin();
        let mut attachments = Vec::new();
        loop {
            eprint!("> ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 {
                break;
            }
            match line.trim() {
                "" => continue,
                "/quit" | "/exit" => break,
                "/new" => {
                    session.conversation = None;
                    eprintln!("(new conversation)");
                }
                command if command.starts_with("/attach ") => {
                    let path = std::path::Path::new(command["/attach ".len()..].trim());
                    match attach::file(path) {
                        Ok(a) => {
                            eprintln!("(attached {})", a.title);
                            attachments.push(a);
                        }
                        Err(e) => eprintln!("error: {e}"),
                    }
                }
                message => {
                    session.turn(message, std::mem::take(&mut attachments)).await?;
                }
            }
        }
        if let Some(id) = session.conversation {
            eprintln!("conversation {id}");
        }
        Ok(ExitCode::SUCCESS)
    })
}
