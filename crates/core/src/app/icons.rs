//! Servers' and tools' icons for the window, as `data:` URLs.
//!
//! [`crate::mcp::protocol::icons`] chooses one icon per theme and says where it may come
//! from. A `data:` icon is shown at once. An icon at a URL is fetched once, in
//! the background; it is left out until it arrives, and then the server's
//! status is sent again, so that the window reads the lists again and finds
//! it. A fetch that failed is not tried again until Patchbay restarts. At most
//! [`MAX_FETCHED`] URLs are fetched.

use rmcp::model::Icon;
use url::Url;

use super::views::IconView;
use super::{App, AppEvent, lock};
use crate::config::{McpServerConfig, TransportConfig};
use crate::mcp::protocol::icons::{self, IconSource, Origin};

/// The most icon URLs fetched while Patchbay runs.
pub(crate) const MAX_FETCHED: usize = 512;

/// An icon URL's fetch.
pub(crate) enum Fetched {
    Pending,
    Ready(String),
    Failed,
}

/// A server, and where it runs, which decides where its icons may come from.
pub(crate) struct IconPlace {
    server: String,
    /// Its URL for a remote server (`Err` when the URL does not parse); `None` for a local one.
    remote: Option<Result<Url, url::ParseError>>,
}

impl IconPlace {
    fn origin(&self) -> Origin<'_> {
        match &self.remote {
            None => Origin::Local,
            Some(Ok(url)) => Origin::Remote(url),
            Some(Err(_)) => Origin::Unknown,
        }
    }
}

impl App {
    /// Where `config`'s server runs.
    pub(crate) fn icon_place(config: &McpServerConfig) -> IconPlace {
        let remote = match &config.transport {
            TransportConfig::StreamableHttp { url, .. }
            | TransportConfig::Sse { url, .. }
            | TransportConfig::Auto { url, .. } => Some(Url::parse(url)),
            _ => None,
        };
        IconPlace { server: config.name.clone(), remote }
    }

    /// Where the server called `name` runs (a built-in server, which has no config, is local).
    pub(crate) fn icon_place_of(&self, name: &str) -> IconPlace {
        match self.inner.config.server(name) {
            Ok(config) => Self::icon_place(&config),
            Err(_) => IconPlace { server: name.to_owned(), remote: None },
        }
    }

    /// The icons of the server at `place` (its own, or one of its tools', prompts' or resources') that can be shown now.
    pub(crate) fn icon_views(&self, place: &IconPlace, offered: Option<&[Icon]>) -> Vec<IconView> {
        let Some(offered) = offered.filter(|o| !o.is_empty()) else { return Vec::new() };
        icons::choose(offered, place.origin())
            .into_iter()
            .filter_map(|chosen| {
                let src = match chosen.source {
                    IconSource::Inline(src) => src,
                    IconSource::Fetch(url) => self.fetched_icon(&place.server, url)?,
                };
                Some(IconView { src, theme: chosen.theme.map(str::to_owned) })
            })
            .collect()
    }

    /// The fetched icon at `url`, or `None` while it is fetched (which this
    /// starts) or when it could not be.
    fn fetched_icon(&self, server: &str, url: Url) -> Option<String> {
        {
            let mut fetched = lock(&self.inner.icons);
            match fetched.get(&url) {
                Some(Fetched::Ready(src)) => return Some(src.clone()),
                Some(Fetched::Pending | Fetched::Failed) => return None,
                None if fetched.len() >= MAX_FETCHED => return None,
                None => fetched.insert(url.clone(), Fetched::Pending),
            };
        }
        let app = self.clone();
        let server = server.to_owned();
        let key = url.clone();
        let task = async move {
            let state = match icons::fetch(&url, &app.inner.shutdown).await {
                Ok(src) => Fetched::Ready(src),
                Err(e) => {
                    tracing::warn!(server, error = %e, "an icon is not shown");
                    Fetched::Failed
                }
            };
            let arrived = matches!(state, Fetched::Ready(_));
            lock(&app.inner.icons).insert(url, state);
            if arrived && let Some(status) = app.server_status(&server) {
                app.inner.events.report(AppEvent::ServerStatus(status));
            }
        };
        if self.spawn(task).is_err() {
            lock(&self.inner.icons).remove(&key);
        }
        None
    }
}
