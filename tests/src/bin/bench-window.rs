//! Window benchmarks of the installable app (issue 8), run by `scripts/bench-desktop.sh`
//! on release builds under Xvfb, after its start-up and idle-memory part:
//!
//! - **memory after a long conversation**: Patchbay (on data dirs started once before, as a
//!   user's are) showing a 200-message conversation with
//!   50 tool traces (scrolled through once, so every row has been rendered), against the empty
//!   Tauri window in the same run; both started through tauri-driver, PSS (and RSS) summed over
//!   the app's process and its WebKit processes;
//! - **opening a 10,000-message conversation**: from the click in the sidebar to the first
//!   painted frame that shows its messages, measured in the page, over several opens.
//!
//! `bench-window --patchbay BIN --floor BIN [--runs N] [--settle SECS]`

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use patchbay_core::conversations::{AssistantWriter, ConversationStore, MessageStatus, ToolCallStatus};
use patchbay_core::llm::types::ContentPart;
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_e2e::{App, AppOptions, Session};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

/// Patchbay as shipped: the test harness keeps WebKit's compositing on for its screenshots
/// (src-tauri/src/webview.rs); the benchmarks measure the app with it off, as users get it.
fn shipped(data_dir: Option<PathBuf>, binary: &Path) -> AppOptions {
    AppOptions {
        data_dir,
        binary: Some(binary.to_owned()),
        env: vec![("PATCHBAY_WEBKIT_COMPOSITING".into(), "off".into())],
        ..Default::default()
    }
}

struct Args {
    patchbay: PathBuf,
    floor: PathBuf,
    runs: usize,
    settle: Duration,
}

fn args() -> Result<Args> {
    let mut patchbay = None;
    let mut floor = None;
    let mut runs = 3;
    let mut settle = Duration::from_secs(3);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--patchbay" => patchbay = Some(PathBuf::from(value()?)),
            "--floor" => floor = Some(PathBuf::from(value()?)),
            "--runs" => runs = value()?.parse().context("--runs")?,
            "--settle" => settle = Duration::from_secs(value()?.parse().context("--settle")?),
            other => bail!(
                "unknown argument {other}; usage: bench-window --patchbay BIN --floor BIN [--runs N] [--settle SECS]"
            ),
        }
    }
    Ok(Args {
        patchbay: patchbay.context("--patchbay BIN is required")?,
        floor: floor.context("--floor BIN is required")?,
        runs,
        settle,
    })
}

/// Writes a conversation of `messages` messages (user and assistant in turn) where `traces`
/// assistant messages, spread evenly and the last among them, each carry one finished tool
/// call; returns its message id range.
fn seed(dir: &Path, title: &str, messages: usize, traces: usize) -> Result<(i64, i64)> {
    let store = ConversationStore::new(Store::open(&DataDir::new(dir))?);
    let conversation = store.create(title, None, None)?.id;
    let mut parent = None;
    let mut ids = Vec::with_capacity(messages);
    let mut traced = 0;
    let every = (messages / 2).checked_div(traces).unwrap_or(usize::MAX);
    for i in 0..messages / 2 {
        let question =
            format!("Question {i}: what does step {i} of the **deployment** do, and which files does it touch?");
        let user = store.add_user_message(conversation, parent, &question, &[])?;
        let mut answer = AssistantWriter::start(&store, conversation, user, "bench", "bench-model")?;
        if i % every == every - 1 && traced < traces {
            traced += 1;
            let row =
                answer.start_tool_call(0, &format!("call_{i}"), "files__read_file", Some(("files", "read_file")))?;
            answer.set_arguments(row, &json!({ "path": format!("/srv/app/step-{i}.yaml") }).to_string())?;
            let listing: String = (0..40).map(|l| format!("line {l}: key_{l}: value {i}-{l}\n")).collect();
            answer.finish_tool_call(row, ToolCallStatus::Done, &[ContentPart::Text { text: listing }], false, 12)?;
        }
        let text = format!(
            "Step {i} renders the templates, then restarts the service.\n\n```yaml\nstep: {i}\nrestart: true\n```\n\n\
             - it reads `config/step-{i}.yaml`\n- it writes `out/step-{i}.json`\n\nSee the runbook for the rollback path."
        );
        answer.push_text(1, &text);
        answer.finish(MessageStatus::Complete, None)?;
        ids.extend([user, answer.message_id()]);
        parent = Some(answer.message_id());
    }
    ensure!(traced == traces, "{messages} messages hold only {traced} traces, not {traces}");
    Ok((ids[0], ids[ids.len() - 1]))
}

/// Summed PSS and RSS (kB) of the process running `binary` in `group` and its WebKit children.
fn memory(group: u32, binary: &Path) -> Result<(u64, u64)> {
    let binary = binary.canonicalize()?;
    let procs: Vec<u32> =
        std::fs::read_dir("/proc")?.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    let field = |pid: u32, n: usize| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        stat.rsplit_once(')')?.1.split_whitespace().nth(n)?.parse().ok()
    };
    let app = procs
        .iter()
        .copied()
        .find(|&p| {
            field(p, 2) == Some(group) && std::fs::read_link(format!("/proc/{p}/exe")).ok().as_ref() == Some(&binary)
        })
        .with_context(|| format!("no process of {} in group {group}", binary.display()))?;
    let mut counted = vec![app];
    for &p in &procs {
        let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
        if field(p, 1) == Some(app) && comm.starts_with("WebKit") {
            counted.push(p);
        }
    }
    let (mut pss, mut rss) = (0, 0);
    for p in counted {
        let rollup = std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")).unwrap_or_default();
        for line in rollup.lines() {
            let kb = || line.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            if line.starts_with("Pss:") {
                pss += kb();
            } else if line.starts_with("Rss:") {
                rss += kb();
            }
        }
    }
    Ok((pss, rss))
}

/// Clicks the sidebar conversation titled `title`, once the sidebar lists it.
fn open(s: &Session, title: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + WAIT;
    while s.execute(
        "const b = [...document.querySelectorAll('button.conversation')].find((b) => b.textContent.includes(arguments[0]));\
         if (b) b.click(); return !!b;",
        json!([title]),
    )? != json!(true)
    {
        ensure!(std::time::Instant::now() < deadline, "no conversation titled {title:?} in the sidebar");
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Clicks `title` and measures, in the page, the milliseconds until the first frame painted
/// with one of its messages (ids `lo..=hi`): the frame after the one whose DOM holds them.
fn time_open(s: &Session, title: &str, (lo, hi): (i64, i64)) -> Result<f64> {
    let script = "const [title, lo, hi, done] = arguments;\
        const shown = () => [...document.querySelectorAll('[data-message-id]')]\
          .some((e) => { const id = Number(e.dataset.messageId); return id >= lo && id <= hi; });\
        const b = [...document.querySelectorAll('button.conversation')].find((b) => b.textContent.includes(title));\
        if (!b) { done(-1); return; }\
        const t0 = performance.now();\
        b.click();\
        const poll = () => shown() ? requestAnimationFrame(() => done(performance.now() - t0)) : requestAnimationFrame(poll);\
        requestAnimationFrame(poll);";
    let ms = s.execute_async(script, json!([title, lo, hi]))?.as_f64().context("no time from the page")?;
    ensure!(ms >= 0.0, "no conversation titled {title:?} in the sidebar");
    Ok(ms)
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<()> {
    let args = args()?;
    let work = tempfile::tempdir()?;
    let long_dir = work.path().join("long");
    let long = seed(&long_dir, "Long conversation", 200, 50)?;
    let huge_dir = work.path().join("huge");
    let huge = seed(&huge_dir, "Ten thousand messages", 10_000, 100)?;
    let short = seed(&huge_dir, "Short one", 2, 0)?;
    eprintln!("seeded: 200 messages with 50 traces (ids {long:?}); 10,000 messages (ids {huge:?})");

    // One uncounted launch per data dir first, as bench-desktop.sh does: the first start of a
    // data dir indexes the shipped knowledge-base samples, a cost paid once, not at every start.
    let start_dir = work.path().join("start");
    for dir in [&start_dir, &long_dir] {
        let opts = shipped(Some(dir.clone()), &args.patchbay);
        let app = App::start("bench-window-warm-up", opts)?;
        app.session.wait_for("#page-chat", WAIT)?;
        std::thread::sleep(args.settle);
    }

    // Memory: the floor, Patchbay just started, Patchbay showing the long conversation.
    let mut samples: [(Vec<u64>, Vec<u64>); 3] = Default::default();
    for run in 0..args.runs {
        for (i, (binary, data)) in
            [(&args.floor, None), (&args.patchbay, Some(&start_dir)), (&args.patchbay, Some(&long_dir))]
                .into_iter()
                .enumerate()
        {
            let opts = shipped(data.cloned(), binary);
            let app = App::start(&format!("bench-window-{run}-{i}"), opts)?;
            if i > 0 {
                app.session.wait_for("#page-chat", WAIT)?;
            } else {
                std::thread::sleep(Duration::from_secs(1));
            }
            if i == 2 {
                open(&app.session, "Long conversation")?;
                app.session.wait_for(&format!("[data-message-id='{}']", long.1), WAIT)?;
                // Scroll back through every row once (older pages load on the way), then to the end,
                // as a reader would.
                let scrolled = app.session.execute_async(
                    "const done = arguments[0]; const list = document.querySelector('[data-testid=message-list]');\
                     const deadline = performance.now() + 25000;\
                     const step = () => {\
                       if (list.scrollTop <= 0 && !document.querySelector('[data-testid=load-earlier]')) {\
                         list.scrollTop = list.scrollHeight; requestAnimationFrame(() => done(true)); return; }\
                       if (performance.now() > deadline) { done(false); return; }\
                       list.scrollTop = Math.max(0, list.scrollTop - list.clientHeight); setTimeout(step, 50); };\
                     step();",
                    json!([]),
                )?;
                ensure!(
                    scrolled == json!(true),
                    "scrolling back through the long conversation did not reach its start"
                );
                let traces = app.session.count("[data-testid=message-list] [data-testid=trace-card]")?;
                ensure!(traces > 0, "the long conversation shows no tool trace after scrolling");
            }
            std::thread::sleep(args.settle);
            let (pss, rss) = memory(app.driver_pid(), binary)?;
            eprintln!(
                "run {run}: {:<40} PSS {pss} kB, RSS {rss} kB",
                ["empty window", "Patchbay, started", "Patchbay, long conversation"][i]
            );
            samples[i].0.push(pss);
            samples[i].1.push(rss);
        }
    }

    // Opening 10,000 messages: alternate with a short conversation so each open is a real switch.
    let opts = shipped(Some(huge_dir.clone()), &args.patchbay);
    let app = App::start("bench-window-10k", opts)?;
    app.session.wait_for("button.conversation", WAIT)?;
    let mut opens = Vec::new();
    for _ in 0..(args.runs * 3).max(5) {
        open(&app.session, "Short one")?;
        app.session.wait_for(&format!("[data-message-id='{}']", short.0), WAIT)?;
        opens.push(time_open(&app.session, "Ten thousand messages", huge)?);
    }
    drop(app);

    let mb = |kb: u64| kb as f64 / 1024.0;
    let floor_pss = median(samples[0].0.clone());
    println!("\nMedians of {} runs (memory {} s after the window is ready):", args.runs, args.settle.as_secs());
    println!("{:<44} {:>10} {:>10} {:>7} goal", "", "PSS", "RSS", "ratio");
    let goals = ["", "<= 1.25", "<= 1.50"];
    for (i, label) in ["empty window", "Patchbay, started", "Patchbay, 200 messages + 50 traces"].iter().enumerate() {
        let (pss, rss) = (median(samples[i].0.clone()), median(samples[i].1.clone()));
        println!(
            "{label:<44} {:>7.1} MB {:>7.1} MB {:>7.2} {}",
            mb(pss),
            mb(rss),
            pss as f64 / floor_pss as f64,
            goals[i]
        );
    }
    println!(
        "open a 10,000-message conversation, click to first paint: p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms over {} opens (goal p50 <= 100 ms)",
        percentile(&opens, 0.5),
        percentile(&opens, 0.9),
        percentile(&opens, 1.0),
        opens.len()
    );
    Ok(())
}
