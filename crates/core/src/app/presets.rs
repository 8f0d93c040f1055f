//! Assistant presets and the general settings, as the settings page edits them
//! (the network proxy among them: how it is kept is `host::proxy`).

use std::collections::BTreeSet;
use std::path::Path;

use super::views::{AssistantView, GeneralSettings, KbMode};
use super::{App, AppError};
use crate::agent::ToolSelection;
use crate::assistants::{Assistant, KnowledgeMode};
use crate::config::TransportConfig;
use crate::host::TOOL_SHARE_SETTING;
use crate::host::proxy::{save_proxy, saved_proxy};
use crate::net;
use crate::paths::DataDir;
use crate::store::{Backup, StoreError, restore_staged, stage_restore};

const THEME_KEY: &str = "ui.theme";
const LANGUAGE_KEY: &str = "ui.language";
/// Whether the model names new conversations (on unless turned off).
const AUTO_TITLE_KEY: &str = "chat.auto_title";
/// The client ID metadata document remote servers' sign-ins name Patchbay by (empty: none).
const CLIENT_METADATA_KEY: &str = "oauth.client_metadata_url";
const KEEP_IN_TRAY_KEY: &str = "ui.keep_in_tray";
const QUICK_ASK_SHORTCUT_KEY: &str = "ui.quick_ask_shortcut";
const CHECK_UPDATES_KEY: &str = "app.check_updates";

fn check_language(language: &str) -> Result<(), AppError> {
    match language {
        "en" | "zh" => Ok(()),
        _ => Err(AppError::Invalid(format!("language {language:?} is not en or zh"))),
    }
}

/// The window's language, `en` or `zh`: also what the CLI's scheduled runs tell the desktop in.
pub fn window_language(store: &crate::store::Store) -> Result<String, StoreError> {
    Ok(store.setting::<String>(LANGUAGE_KEY)?.unwrap_or_else(|| "en".into()))
}

/// A client ID metadata document is named by an https URL with a path (its URL is the
/// client id; an authorization server fetches it): empty, or such a URL.
fn check_client_metadata_url(url: &str) -> Result<(), AppError> {
    if url.is_empty() {
        return Ok(());
    }
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| AppError::Invalid(format!("client ID metadata document {url:?} is not a URL: {e}")))?;
    if parsed.scheme() != "https" || parsed.path().trim_matches('/').is_empty() || parsed.fragment().is_some() {
        return Err(AppError::Invalid(format!(
            "client ID metadata document {url:?} must be an https URL with a path and no fragment \
             (for example https://example.com/patchbay/client.json)"
        )));
    }
    Ok(())
}

impl From<&Assistant> for AssistantView {
    fn from(a: &Assistant) -> Self {
        let (servers, disabled_tools) = match &a.tools {
            ToolSelection::All => (None, Vec::new()),
            ToolSelection::None => (Some(Vec::new()), Vec::new()),
            ToolSelection::Only { servers, .. } => (Some(servers.iter().cloned().collect()), Vec::new()),
        };
        Self {
            id: a.name.clone(),
            name: a.name.clone(),
            system_prompt: a.system_prompt.clone(),
            provider: a.provider.clone(),
            model: a.model.clone(),
            sampling: a.sampling,
            servers,
            disabled_tools,
            kb_mode: match a.knowledge {
                KnowledgeMode::Off => KbMode::Off,
                KnowledgeMode::Tool => KbMode::Auto,
                KnowledgeMode::Context => KbMode::Always,
                KnowledgeMode::Both => KbMode::Both,
            },
            knowledge: a.knowledge_limits,
        }
    }
}

impl AssistantView {
    fn to_assistant(&self) -> Assistant {
        let tools = match &self.servers {
            None => ToolSelection::All,
            Some(servers) if servers.is_empty() => ToolSelection::None,
            Some(servers) => ToolSelection::Only { servers: servers.iter().cloned().collect(), tools: BTreeSet::new() },
        };
        Assistant {
            name: self.name.trim().to_owned(),
            system_prompt: self.system_prompt.clone(),
            provider: self.provider.clone().filter(|p| !p.is_empty()),
            model: self.model.clone().filter(|m| !m.is_empty()),
            sampling: self.sampling,
            tools,
            knowledge: match self.kb_mode {
                KbMode::Off => KnowledgeMode::Off,
                KbMode::Auto => KnowledgeMode::Tool,
                KbMode::Always => KnowledgeMode::Context,
                KbMode::Both => KnowledgeMode::Both,
            },
            knowledge_limits: self.knowledge,
        }
    }
}

impl App {
    /// Every assistant preset, the built-in default first.
    pub fn list_assistants(&self) -> Result<Vec<AssistantView>, AppError> {
        Ok(self.inner.assistants.list()?.iter().map(AssistantView::from).collect())
    }

    /// Saves a preset (`id` empty for a new one; a changed name renames it).
    pub fn save_assistant(&self, view: &AssistantView) -> Result<AssistantView, AppError> {
        let assistant = view.to_assistant();
        self.inner.assistants.save(&assistant)?;
        if !view.id.is_empty() && view.id != assistant.name {
            self.inner.assistants.delete(&view.id)?;
        }
        Ok(AssistantView::from(&assistant))
    }

    /// Deletes a preset.
    pub fn delete_assistant(&self, id: &str) -> Result<(), AppError> {
        Ok(self.inner.assistants.delete(id)?)
    }

    /// Writes a consistent copy of the database to `to`, replacing a file there
    /// only with `replace`. Secrets stay in the keyring and are not in it.
    pub fn backup(&self, to: &Path, replace: bool) -> Result<Backup, AppError> {
        self.inner.store.backup(to, replace).map_err(|e| match e {
            StoreError::Backup { .. } => AppError::Invalid(e.to_string()),
            other => AppError::Store(other),
        })
    }

    /// Whether the model names new conversations.
    pub(crate) fn auto_title(&self) -> Result<bool, AppError> {
        Ok(self.inner.store.setting::<bool>(AUTO_TITLE_KEY)?.unwrap_or(true))
    }

    /// The client ID metadata document's URL sign-ins offer, if one is set.
    pub(crate) fn client_metadata_url(&self) -> Result<Option<String>, AppError> {
        let url = self.inner.store.setting::<String>(CLIENT_METADATA_KEY)?.unwrap_or_default();
        Ok(Some(url).filter(|u| !u.is_empty()))
    }

    /// The window's language: `en` or `zh`.
    pub(crate) fn ui_language(&self) -> Result<String, AppError> {
        Ok(window_language(&self.inner.store)?)
    }

    /// Keeps the window's language (`en` or `zh`), as the window chose it, for what speaks
    /// while it is not open: the tray, a scheduled run's notification.
    pub fn set_ui_language(&self, language: &str) -> Result<(), AppError> {
        check_language(language)?;
        Ok(self.inner.store.set_setting(LANGUAGE_KEY, &language)?)
    }

    /// Theme, language, the data folder and whether the model names conversations.
    pub fn get_settings(&self) -> Result<GeneralSettings, AppError> {
        let store = &self.inner.store;
        Ok(GeneralSettings {
            theme: store.setting::<String>(THEME_KEY)?.unwrap_or_else(|| "system".into()),
            language: self.ui_language()?,
            data_dir: self.inner.dir.path().display().to_string(),
            auto_title: self.auto_title()?,
            restore_pending: restore_staged(&self.inner.dir),
            proxy: saved_proxy(store, self.inner.secrets.as_ref())?,
            tool_share_percent: self.inner.host.turn_limits()?.tool_budget.share_percent,
            client_metadata_url: self.client_metadata_url()?.unwrap_or_default(),
            keep_in_tray: store.setting::<bool>(KEEP_IN_TRAY_KEY)?.unwrap_or(false),
            quick_ask_shortcut: store
                .setting::<String>(QUICK_ASK_SHORTCUT_KEY)?
                .unwrap_or_else(|| super::views::DEFAULT_QUICK_ASK_SHORTCUT.to_owned()),
            check_updates: store.setting::<bool>(CHECK_UPDATES_KEY)?.unwrap_or(true),
        })
    }

    /// Stores theme, language, titling and the proxy (used at once: remote
    /// servers reconnect through it); a different data folder is used from the
    /// next start.
    pub fn save_settings(&self, settings: &GeneralSettings) -> Result<(), AppError> {
        if !["light", "dark", "system"].contains(&settings.theme.as_str()) {
            return Err(AppError::Invalid(format!("theme {:?} is not light, dark or system", settings.theme)));
        }
        check_language(&settings.language)?;
        settings.proxy.check().map_err(|e| AppError::Invalid(e.to_string()))?;
        if !(1..=100).contains(&settings.tool_share_percent) {
            return Err(AppError::Invalid(format!(
                "the tools' share of the context window is {}%: it must be between 1% and 100%",
                settings.tool_share_percent
            )));
        }
        let metadata_url = settings.client_metadata_url.trim();
        check_client_metadata_url(metadata_url)?;
        let store = &self.inner.store;
        store.set_setting(CLIENT_METADATA_KEY, &metadata_url)?;
        store.set_setting(THEME_KEY, &settings.theme)?;
        store.set_setting(LANGUAGE_KEY, &settings.language)?;
        store.set_setting(AUTO_TITLE_KEY, &settings.auto_title)?;
        store.set_setting(TOOL_SHARE_SETTING, &settings.tool_share_percent)?;
        store.set_setting(KEEP_IN_TRAY_KEY, &settings.keep_in_tray)?;
        store.set_setting(QUICK_ASK_SHORTCUT_KEY, &settings.quick_ask_shortcut.trim())?;
        store.set_setting(CHECK_UPDATES_KEY, &settings.check_updates)?;
        if settings.proxy != net::proxy() {
            save_proxy(store, self.inner.secrets.as_ref(), &settings.proxy)?;
            net::set_proxy(settings.proxy.clone()).map_err(|e| AppError::Invalid(e.to_string()))?;
            self.reconnect_remote_servers()?;
        }
        let wanted = DataDir::new(Path::new(settings.data_dir.trim()));
        if !settings.data_dir.trim().is_empty() && wanted != self.inner.dir {
            DataDir::choose_for_next_start(wanted.path())?;
        }
        Ok(())
    }

    /// Restarts the enabled remote servers in the background, so that they
    /// connect through the proxy now chosen.
    fn reconnect_remote_servers(&self) -> Result<(), AppError> {
        let Some(runtime) = self.inner.runtime.get() else { return Ok(()) };
        let remote: Vec<String> = self
            .inner
            .config
            .servers()?
            .into_iter()
            .filter(|s| s.enabled && !matches!(s.transport, TransportConfig::Stdio { .. }))
            .map(|s| s.name)
            .collect();
        let registry = self.inner.registry.clone();
        runtime.spawn(async move {
            for name in remote {
                if let Err(e) = registry.restart(&name).await {
                    tracing::warn!("{name} did not restart with the new proxy: {e}");
                }
            }
        });
        Ok(())
    }
}

/// Checks the backup `file` and stages it to replace the database of `dir` at
/// the next start (the replaced one is kept beside it). Needs no open [`App`]:
/// a window whose database is damaged restores from here.
pub fn restore_backup(dir: &DataDir, file: &Path) -> Result<(), AppError> {
    stage_restore(dir, file).map(drop).map_err(|e| match e {
        StoreError::Backup { .. } | StoreError::NotADatabase { .. } | StoreError::NewerSchema { .. } => {
            AppError::Invalid(e.to_string())
        }
        other => AppError::Store(other),
    })
}
