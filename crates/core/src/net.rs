//! Outgoing HTTP: every client Patchbay builds (model providers, remote MCP
//! servers, OAuth, embedding endpoints) starts from [`client_builder`], which
//! applies the network proxy the user chose.
//!
//! It also says which links the window may hand to the user's browser
//! ([`browsable`]), and where a credential may be sent ([`is_secure_web`]).
//!
//! The choice is process-wide, like the system's proxy it may stand in for: a
//! process serves one data directory, whose setting [`set_proxy`] installs at
//! start-up and whenever it changes. Clients built before a change keep the
//! proxy they were built with.

use std::sync::{PoisonError, RwLock};

use serde::{Deserialize, Serialize};

/// Which proxy outgoing requests use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ProxyChoice {
    /// The environment's `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`.
    #[default]
    Environment,
    /// None, whatever the environment says.
    Off,
    /// This proxy for every request (`http://` or `https://`, with
    /// `user:password@` when it needs a login).
    Custom { url: String },
}

/// Errors of the network settings.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("proxy {url:?}: {reason}")]
    InvalidProxy { url: String, reason: String },
    #[error("the link {url:?} is not opened: {reason}")]
    NotBrowsable { url: String, reason: String },
}

/// The installed choice with the proxy built from it (`None`: the environment's).
struct Installed {
    choice: ProxyChoice,
    route: Route,
}

/// Where requests go.
enum Route {
    Environment,
    Direct,
    Through(Box<reqwest::Proxy>),
}

static INSTALLED: RwLock<Option<Installed>> = RwLock::new(None);

impl ProxyChoice {
    /// Checks a custom proxy's URL: an `http` or `https` URL with a host.
    pub fn check(&self) -> Result<(), NetError> {
        self.route().map(drop)
    }

    fn route(&self) -> Result<Route, NetError> {
        let url = match self {
            Self::Environment => return Ok(Route::Environment),
            Self::Off => return Ok(Route::Direct),
            Self::Custom { url } => url,
        };
        let invalid = |reason: &str| NetError::InvalidProxy { url: url.clone(), reason: reason.to_owned() };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid("only http:// and https:// proxies are supported"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("it names no host"));
        }
        reqwest::Proxy::all(url.trim()).map(|p| Route::Through(Box::new(p))).map_err(|e| invalid(&e.to_string()))
    }
}

/// Installs the proxy for clients built from now on.
pub fn set_proxy(choice: ProxyChoice) -> Result<(), NetError> {
    let route = choice.route()?;
    *INSTALLED.write().unwrap_or_else(PoisonError::into_inner) = Some(Installed { choice, route });
    Ok(())
}

/// The proxy clients are built with now.
pub fn proxy() -> ProxyChoice {
    let installed = INSTALLED.read().unwrap_or_else(PoisonError::into_inner);
    installed.as_ref().map_or(ProxyChoice::Environment, |i| i.choice.clone())
}

/// A client builder with the chosen proxy.
pub fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    let installed = INSTALLED.read().unwrap_or_else(PoisonError::into_inner);
    match installed.as_ref().map(|i| &i.route) {
        None | Some(Route::Environment) => builder,
        Some(Route::Direct) => builder.no_proxy(),
        Some(Route::Through(proxy)) => builder.proxy((**proxy).clone()),
    }
}

/// A client with the chosen proxy and nothing else set.
pub fn client() -> reqwest::Client {
    // Building fails only when the TLS backend cannot start, as `reqwest::Client::new` assumes too.
    client_builder().build().expect("the TLS backend starts")
}

/// `url` if it may go to the user's browser or mail program: an absolute
/// `http` or `https` URL with a host, or a `mailto:` address. Links in answers,
/// tool results and server details come from models and servers: a `file:`,
/// `javascript:` or custom-scheme link would run or open something on this
/// computer, so it is refused.
pub fn browsable(url: &str) -> Result<url::Url, NetError> {
    let refuse = |reason: &str| NetError::NotBrowsable { url: url.to_owned(), reason: reason.to_owned() };
    let parsed = url::Url::parse(url.trim()).map_err(|e| refuse(&e.to_string()))?;
    match parsed.scheme() {
        "http" | "https" if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(parsed),
        "http" | "https" => Err(refuse("it names no host")),
        "mailto" if !parsed.path().is_empty() => Ok(parsed),
        "mailto" => Err(refuse("it names no address")),
        other => Err(refuse(&format!("only http, https and mailto links are opened, not {other}:"))),
    }
}

/// Whether a credential may be sent to `url`, or a sign-in page opened at it:
/// an `https` URL with a host, or `http` to this computer (a loopback address
/// or `localhost`), which never crosses the network. Plain `http` elsewhere can
/// be read and changed on the way; any other scheme (`file:`, `smb:`, an app's
/// own) would open or run something on this computer.
pub fn is_secure_web(url: &url::Url) -> bool {
    match (url.scheme(), url.host()) {
        ("https", Some(_)) => true,
        ("http", Some(url::Host::Domain(domain))) => domain.eq_ignore_ascii_case("localhost"),
        ("http", Some(url::Host::Ipv4(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Ipv6(ip))) => ip.is_loopback(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_proxy_must_be_an_http_url_with_a_host() {
        let custom = |url: &str| ProxyChoice::Custom { url: url.to_owned() };
        assert!(custom("http://127.0.0.1:3128").check().is_ok());
        assert!(custom("https://user:secret@proxy.example.com:8443").check().is_ok());
        assert_eq!(
            custom("socks5://127.0.0.1:1080").check().unwrap_err().to_string(),
            "proxy \"socks5://127.0.0.1:1080\": only http:// and https:// proxies are supported"
        );
        assert!(custom("proxy.example.com:3128").check().is_err());
        assert!(custom("").check().unwrap_err().to_string().starts_with("proxy \"\": "));
        assert!(ProxyChoice::Off.check().is_ok() && ProxyChoice::Environment.check().is_ok());
    }

    #[test]
    fn only_web_and_mail_links_go_to_the_browser() {
        assert_eq!(browsable("https://example.com/a?b=c#d").unwrap().as_str(), "https://example.com/a?b=c#d");
        assert_eq!(browsable(" http://127.0.0.1:8080/ ").unwrap().as_str(), "http://127.0.0.1:8080/");
        assert_eq!(browsable("mailto:dev@example.com").unwrap().as_str(), "mailto:dev@example.com");
        let refused = |url: &str| browsable(url).unwrap_err().to_string();
        assert_eq!(
            refused("file:///etc/passwd"),
            "the link \"file:///etc/passwd\" is not opened: only http, https and mailto links are opened, not file:"
        );
        assert!(refused("javascript:alert(1)").ends_with("not javascript:"));
        assert!(refused("vscode://settings").ends_with("not vscode:"));
        assert!(refused("mailto:").ends_with("it names no address"));
        assert!(refused("/relative/path").contains("relative URL without a base"));
        assert!(refused("").starts_with("the link \"\" is not opened: "));
    }

    #[test]
    fn credentials_go_over_https_or_to_this_computer_only() {
        let secure = |url: &str| is_secure_web(&url::Url::parse(url).unwrap());
        for url in ["https://auth.example.com/authorize", "https://10.0.0.9/token", "https://[2001:db8::1]/"] {
            assert!(secure(url), "{url}");
        }
        for url in ["http://127.0.0.1:8080/token", "http://127.8.0.1/", "http://[::1]:9/", "http://LOCALHOST:3000/"] {
            assert!(secure(url), "{url}");
        }
        for url in [
            "http://example.com/authorize",
            "http://10.0.0.9/token",
            "http://localhost.example.com/",
            "file:///etc/passwd",
            "smb://host/x",
            "myapp://x",
            "javascript:alert(1)",
        ] {
            assert!(!secure(url), "{url}");
        }
    }

    #[test]
    fn the_choice_is_written_as_a_tagged_object() {
        let json = serde_json::to_value(ProxyChoice::Custom { url: "http://p:1".into() }).unwrap();
        assert_eq!(json, serde_json::json!({"mode": "custom", "url": "http://p:1"}));
        assert_eq!(
            serde_json::from_value::<ProxyChoice>(serde_json::json!({"mode": "off"})).unwrap(),
            ProxyChoice::Off
        );
    }
}
