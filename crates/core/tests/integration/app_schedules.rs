//! Adding and removing schedules through the app asks the system's scheduler (a recording
//! [`SystemTimer`] here; the real systemd units are the CLI tests'): the first schedule sets the
//! timer up with the CLI's path, each later one again (it may have been removed meanwhile), and
//! removing the last one takes it away. Why there is no timer reaches the window typed.

use crate::app_events::Recorder;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use patchbay_core::app::App;
use patchbay_core::app::views::{ScheduleInput, WhileClosed};
use patchbay_core::paths::DataDir;
use patchbay_core::schedules::When;
use patchbay_core::schedules::timer::{SystemTimer, TimerError};
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;

#[derive(Clone, Default)]
struct Recording {
    asked: Arc<Mutex<Vec<String>>>,
    refuse: bool,
}

impl SystemTimer for Recording {
    fn install(&self, cli: &Path, _dir: &DataDir) -> Result<String, TimerError> {
        self.asked.lock().unwrap().push(format!("install {}", cli.display()));
        if self.refuse {
            return Err(TimerError::Refused {
                path: "/u/p.timer".into(),
                tool: "systemctl --user".into(),
                error: "Failed to connect to bus".into(),
            });
        }
        Ok("p.timer".into())
    }

    fn uninstall(&self, _dir: &DataDir) -> Result<(), TimerError> {
        self.asked.lock().unwrap().push("uninstall".into());
        Ok(())
    }
}

fn open(dir: &Path, timer: Recording) -> App {
    let data = DataDir::new(dir.join("data"));
    let (sender, _events) = Recorder::new();
    App::open(data.clone(), Store::open(&data).unwrap(), Arc::new(MemoryStore::default()), sender)
        .unwrap()
        .with_timer(timer)
}

fn input(name: &str) -> ScheduleInput {
    ScheduleInput {
        name: name.into(),
        assistant: "Default".into(),
        prompt: "Summarise the day".into(),
        when: When::Daily { at: "18:00".into() },
        allowed_tools: Vec::new(),
    }
}

#[test]
fn schedules_set_the_system_timer_up_and_the_last_one_takes_it_away() {
    let dir = tempfile::tempdir().unwrap();
    let timer = Recording::default();
    let app = open(dir.path(), timer.clone());
    let cli = PathBuf::from("/usr/bin/patchbay");
    let added = app.add_schedule(input("evening"), &cli).unwrap();
    assert_eq!(added.while_closed, WhileClosed::Timer { unit: "p.timer".into() });
    app.add_schedule(input("late"), &cli).unwrap();
    app.remove_schedule("evening").unwrap();
    assert_eq!(*timer.asked.lock().unwrap(), ["install /usr/bin/patchbay", "install /usr/bin/patchbay"]);
    app.remove_schedule("late").unwrap();
    assert_eq!(timer.asked.lock().unwrap().last().map(String::as_str), Some("uninstall"));
}

#[test]
fn why_there_is_no_timer_reaches_the_window_typed_and_the_schedule_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path(), Recording { refuse: true, ..Recording::default() });
    let added = app.add_schedule(input("evening"), Path::new("/usr/bin/patchbay")).unwrap();
    let why = serde_json::to_value(added.while_closed).unwrap();
    assert_eq!(
        why,
        serde_json::json!({"kind": "no_timer", "why":
            {"kind": "refused", "path": "/u/p.timer", "tool": "systemctl --user", "error": "Failed to connect to bus"}}),
        "the window words it from the kind"
    );
    assert_eq!(app.schedules().unwrap().len(), 1);
}
