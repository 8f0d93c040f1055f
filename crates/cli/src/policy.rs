//! `patchbay mcp policy SERVER`: shows a server's security policy, or changes
//! it (level, folders, network, rates per server and per tool), then shows the result in one line.
//! Folders must exist and are kept as their canonical paths; the policy is
//! checked by core (`Policy::problems`) before it is saved.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, ValueEnum};
use patchbay_core::config::policy::DEFAULTS_SETTING;
use patchbay_core::config::{ConfigStore, Network, Policy, PolicyDefaults, SecurityLevel};
use patchbay_core::folder;
use patchbay_core::paths::DataDir;

#[derive(Debug, Args)]
pub struct PolicyArgs {
    server: String,
    /// The level its policy starts from.
    #[arg(long, value_enum)]
    level: Option<Level>,
    /// A folder it may read (added); once per folder.
    #[arg(long = "read", value_name = "DIR")]
    read: Vec<PathBuf>,
    /// A folder it may write (added); once per folder.
    #[arg(long = "write", value_name = "DIR")]
    write: Vec<PathBuf>,
    /// A domain it may reach (added; `*.example.org` for every name below it); the network becomes these domains only.
    #[arg(long = "allow-domain", value_name = "DOMAIN", conflicts_with = "network")]
    allow_domain: Vec<String>,
    /// Network off or any.
    #[arg(long, value_enum)]
    network: Option<Net>,
    /// Calls per minute it accepts, for all its tools together.
    #[arg(long, value_name = "N/min")]
    rate: Option<String>,
    /// Calls per minute it accepts for each of its tools.
    #[arg(long, value_name = "N/min")]
    tool_rate: Option<String>,
    /// Print the policy (also what any change leads to).
    #[arg(long)]
    show: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Level {
    Strict,
    Normal,
    Permissive,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Net {
    Off,
    Any,
}

pub fn run(dir: &DataDir, args: &PolicyArgs) -> anyhow::Result<ExitCode> {
    let store = crate::open_store(dir)?;
    let config = ConfigStore::new(store.clone());
    let mut server = config.server(&args.server)?;
    let before = server.policy.clone();
    change(&mut server.policy, args)?;
    let problems = server.policy.problems();
    if !problems.is_empty() {
        let lines: Vec<String> = problems.iter().map(|(field, reason)| format!("  {field}: {reason}")).collect();
        bail!("the policy of {} was not changed:\n{}", args.server, lines.join("\n"));
    }
    if server.policy != before {
        config.save_server(&server)?;
    }
    let defaults: PolicyDefaults = store.setting(DEFAULTS_SETTING)?.unwrap_or_default();
    let resolved = Policy::resolve(&server, &defaults, &[]);
    println!("{}", resolved.summary());
    if resolved.level.sandboxed() && !matches!(server.transport, patchbay_core::config::TransportConfig::Stdio { .. }) {
        println!("(a remote server: only the rate limits apply)");
    }
    Ok(ExitCode::SUCCESS)
}

fn change(policy: &mut Policy, args: &PolicyArgs) -> anyhow::Result<()> {
    if let Some(level) = args.level {
        policy.level = Some(match level {
            Level::Strict => SecurityLevel::Strict,
            Level::Normal => SecurityLevel::Normal,
            Level::Permissive => SecurityLevel::Permissive,
        });
    }
    for (paths, added) in [(&mut policy.read, &args.read), (&mut policy.write, &args.write)] {
        for path in added {
            let path = folder::canonical(path)?;
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    if !args.allow_domain.is_empty() {
        let mut domains = match policy.network.take() {
            Some(Network::Domains(domains)) => domains,
            _ => Vec::new(),
        };
        for domain in &args.allow_domain {
            if !domains.contains(domain) {
                domains.push(domain.clone());
            }
        }
        policy.network = Some(Network::Domains(domains));
    }
    if let Some(net) = args.network {
        policy.network = Some(match net {
            Net::Off => Network::Off,
            Net::Any => Network::Any,
        });
    }
    if let Some(rate) = &args.rate {
        policy.rate.per_server_per_min = Some(per_minute("--rate", rate)?);
    }
    if let Some(rate) = &args.tool_rate {
        policy.rate.per_tool_per_min = Some(per_minute("--tool-rate", rate)?);
    }
    Ok(())
}

/// `30/min` or `30` as calls per minute.
fn per_minute(flag: &str, rate: &str) -> anyhow::Result<u32> {
    let number = rate.strip_suffix("/min").unwrap_or(rate);
    match number.trim().parse::<u32>() {
        Ok(n) => Ok(n),
        Err(_) => bail!("{flag} {rate:?}: expected calls per minute, like 30/min"),
    }
}
