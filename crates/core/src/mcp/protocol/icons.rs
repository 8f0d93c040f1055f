//! The icons a server gives itself and its tools (MCP `icons`): which one is shown for each theme,
//! and how it reaches the window.
//!
//! Icons are untrusted. A `data:` icon is shown when it is an image the window draws (PNG, JPEG, GIF,
//! WebP, or SVG, which runs no script in an `<img>`) of at most [`MAX_ICON_BYTES`]. A URL is fetched
//! by Patchbay, never by the window (which loads no remote content), and only where it cannot follow
//! the user: `https` for a local server, the server's own origin for a remote one; with no cookies,
//! headers or tokens and no redirect. It becomes a `data:` URL. One icon is chosen per theme before
//! anything is fetched, the one nearest [`PREFERRED_PX`] pixels first.

use std::time::Duration;

use base64::Engine;
use futures::StreamExt;
use rmcp::model::{Icon, IconTheme};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::mcp::error::McpError;

/// The most bytes an icon may hold, inline or fetched.
pub const MAX_ICON_BYTES: usize = 256 * 1024;

/// How long fetching one icon may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The size the window draws icons at (twice its 16 CSS pixels).
pub const PREFERRED_PX: u32 = 32;

/// The image types the window draws.
const IMAGE_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"];

/// Where an icon's picture comes from, once it passed the rules above.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IconSource {
    /// A `data:` URL the window can show as it is.
    Inline(String),
    /// A URL Patchbay fetches.
    Fetch(Url),
}

/// Where a server runs, which decides where its icons may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// A local (stdio or built-in) server: its URL icons must be `https`.
    Local,
    /// A remote server at this URL: its URL icons must come from its origin.
    Remote(&'a Url),
    /// A server whose URL does not parse: only its `data:` icons are shown.
    Unknown,
}

/// An icon chosen to show: for one theme (`"light"` or `"dark"`), or for both (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub source: IconSource,
    pub theme: Option<&'static str>,
}

/// The icon to show for each theme, from the icons an item offers, for a
/// server at `origin`. Empty when none may be shown.
pub fn choose(icons: &[Icon], origin: Origin<'_>) -> Vec<Chosen> {
    let usable: Vec<(&Icon, IconSource)> = icons.iter().filter_map(|i| Some((i, source(i, origin)?))).collect();
    let best = |theme: IconTheme| {
        usable
            .iter()
            .filter(|(icon, _)| icon.theme.as_ref().is_none_or(|t| *t == theme))
            .min_by_key(|(icon, _)| (icon.theme.is_none(), size_rank(icon)))
            .map(|(_, source)| source.clone())
    };
    match (best(IconTheme::Light), best(IconTheme::Dark)) {
        (Some(light), Some(dark)) if light == dark => vec![Chosen { source: light, theme: None }],
        (light, dark) => [(light, "light"), (dark, "dark")]
            .into_iter()
            .filter_map(|(source, theme)| Some(Chosen { source: source?, theme: Some(theme) }))
            .collect(),
    }
}

/// How far an icon's declared sizes are from [`PREFERRED_PX`]: scalable and
/// unsized icons first, then the nearest size, a larger one before a smaller one.
fn size_rank(icon: &Icon) -> u32 {
    let Some(sizes) = icon.sizes.as_ref().filter(|s| !s.is_empty()) else { return 0 };
    sizes
        .iter()
        .map(|s| match s.split_once(['x', 'X']).and_then(|(w, _)| w.parse::<u32>().ok()) {
            _ if s.eq_ignore_ascii_case("any") => 0,
            Some(w) if w >= PREFERRED_PX => w - PREFERRED_PX,
            Some(w) => 2 * (PREFERRED_PX - w),
            None => u32::MAX,
        })
        .min()
        .unwrap_or(u32::MAX)
}

/// Where `icon`'s picture comes from, or `None` when it may not be shown.
pub fn source(icon: &Icon, origin: Origin<'_>) -> Option<IconSource> {
    let src = icon.src.trim();
    if src.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("data:")) {
        return inline(src).then(|| IconSource::Inline(src.to_owned()));
    }
    let url = Url::parse(src).ok()?;
    let allowed = match origin {
        Origin::Local => url.scheme() == "https",
        Origin::Remote(server) => matches!(url.scheme(), "https" | "http") && url.origin() == server.origin(),
        Origin::Unknown => false,
    };
    allowed.then_some(IconSource::Fetch(url))
}

/// Whether a `data:` URL is an image the window draws, of at most [`MAX_ICON_BYTES`].
fn inline(src: &str) -> bool {
    let Some((head, data)) = src[5..].split_once(',') else { return false };
    let mut params = head.split(';');
    let mime = params.next().unwrap_or_default().trim().to_ascii_lowercase();
    if !IMAGE_TYPES.contains(&mime.as_str()) {
        return false;
    }
    if params.any(|p| p.trim().eq_ignore_ascii_case("base64")) {
        base64::engine::general_purpose::STANDARD.decode(data.trim()).is_ok_and(|bytes| bytes.len() <= MAX_ICON_BYTES)
    } else {
        data.len() <= MAX_ICON_BYTES
    }
}

/// Fetches an icon as a `data:` URL: an image of a type the window draws, of
/// at most [`MAX_ICON_BYTES`], answered with 200. The request goes through the
/// chosen proxy with no cookies, follows no redirect and gives up after
/// [`FETCH_TIMEOUT`].
pub async fn fetch(url: &Url, cancel: &CancellationToken) -> Result<String, McpError> {
    let fail = |reason: String| McpError::Icon { url: url.to_string(), reason };
    let work = async {
        let client = crate::net::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let response = client.get(url.clone()).send().await.map_err(|e| fail(e.to_string()))?;
        let status = response.status();
        if status != reqwest::StatusCode::OK {
            return Err(fail(format!("the server answered {status}")));
        }
        let header = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let mime = header.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        if !IMAGE_TYPES.contains(&mime.as_str()) {
            return Err(fail(format!("{mime:?} is not an image type Patchbay shows")));
        }
        let too_large = || fail(format!("larger than {MAX_ICON_BYTES} bytes"));
        if response.content_length().is_some_and(|n| n > MAX_ICON_BYTES as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            body.extend_from_slice(&chunk.map_err(|e| fail(e.to_string()))?);
            if body.len() > MAX_ICON_BYTES {
                return Err(too_large());
            }
        }
        Ok(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(&body)))
    };
    tokio::select! {
        () = cancel.cancelled() => Err(fail("cancelled".into())),
        fetched = work => fetched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

    fn icon(src: &str) -> Icon {
        Icon::new(src)
    }

    fn themed(src: &str, theme: IconTheme, sizes: &[&str]) -> Icon {
        let mut icon = Icon::new(src);
        icon.theme = Some(theme);
        icon.sizes = Some(sizes.iter().map(|s| (*s).to_owned()).collect());
        icon
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn data_icons_are_shown_only_as_images_of_a_bounded_size() {
        assert_eq!(source(&icon(PNG), Origin::Local), Some(IconSource::Inline(PNG.into())));
        let svg = "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg'/>";
        assert_eq!(source(&icon(svg), Origin::Local), Some(IconSource::Inline(svg.into())));
        for refused in [
            "data:text/html;base64,PHNjcmlwdD4=",
            "data:image/png;base64,not base64!",
            "data:image/png",
            "data:;base64,iVBORw0KGgo=",
        ] {
            assert_eq!(source(&icon(refused), Origin::Local), None, "{refused}");
        }
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_ICON_BYTES + 1]);
        assert_eq!(source(&icon(&format!("data:image/png;base64,{big}")), Origin::Local), None);
        let fits = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_ICON_BYTES]);
        assert!(source(&icon(&format!("data:image/png;base64,{fits}")), Origin::Local).is_some());
    }

    #[test]
    fn a_local_servers_icon_is_fetched_over_https_and_a_remote_servers_only_from_its_origin() {
        let https = "https://cdn.example.com/icon.png";
        assert_eq!(source(&icon(https), Origin::Local), Some(IconSource::Fetch(url(https))));
        assert_eq!(source(&icon("http://cdn.example.com/icon.png"), Origin::Local), None);
        let server = url("https://mcp.example.com/mcp");
        assert_eq!(source(&icon(https), Origin::Remote(&server)), None, "another origin could follow the user");
        let own = "https://mcp.example.com/static/icon.png";
        assert_eq!(source(&icon(own), Origin::Remote(&server)), Some(IconSource::Fetch(url(own))));
        let local = url("http://127.0.0.1:8123/mcp");
        let same = "http://127.0.0.1:8123/icon.png";
        assert_eq!(source(&icon(same), Origin::Remote(&local)), Some(IconSource::Fetch(url(same))));
        assert_eq!(source(&icon("http://127.0.0.1:9999/icon.png"), Origin::Remote(&local)), None, "another port");
        assert_eq!(source(&icon(same), Origin::Unknown), None);
        assert!(source(&icon(PNG), Origin::Unknown).is_some());
        for refused in ["javascript:alert(1)", "file:///etc/passwd", "icon.png", ""] {
            assert_eq!(source(&icon(refused), Origin::Local), None, "{refused}");
            assert_eq!(source(&icon(refused), Origin::Remote(&local)), None, "{refused}");
        }
    }

    #[test]
    fn one_icon_is_chosen_per_theme_nearest_the_drawn_size() {
        let small = "data:image/png;base64,AAAA";
        let right = "data:image/png;base64,AQID";
        let dark = "data:image/png;base64,BAUG";
        let offered = [
            themed(small, IconTheme::Light, &["16x16"]),
            themed(right, IconTheme::Light, &["48x48"]),
            themed(dark, IconTheme::Dark, &["48x48"]),
        ];
        let chosen = choose(&offered, Origin::Local);
        assert_eq!(
            chosen,
            [
                Chosen { source: IconSource::Inline(right.into()), theme: Some("light") },
                Chosen { source: IconSource::Inline(dark.into()), theme: Some("dark") },
            ]
        );
        // One for any theme serves both, once; one that may not be shown is passed over.
        let any = [icon("javascript:alert(1)"), icon(PNG)];
        assert_eq!(choose(&any, Origin::Local), [Chosen { source: IconSource::Inline(PNG.into()), theme: None }]);
        // Only a light one: the dark theme has none.
        let light_only = [themed(PNG, IconTheme::Light, &["any"])];
        assert_eq!(
            choose(&light_only, Origin::Local),
            [Chosen { source: IconSource::Inline(PNG.into()), theme: Some("light") }]
        );
        assert!(choose(&[], Origin::Local).is_empty());
    }
}
