//! Outgoing HTTP: every client Patchbay builds (providers, remote MCP servers, OAuth, embedding
//! endpoints) starts from [`client_builder`], which applies the proxy the user chose. The choice is
//! process-wide (a process serves one data directory): [`set_proxy`] installs it at start-up and on
//! change; clients built before keep theirs.
//!
//! Redirects stay on their origin, because reqwest drops only `Authorization` and cookies when one
//! leaves it and a provider's `x-api-key` would follow: a redirect elsewhere fails with
//! [`NetError::RedirectRefused`]; only [`public_client`], for requests with no credentials, follows
//! one (never https to http). A proxy's login is a secret: errors and `Debug` show the URL
//! [`redacted`] and the app keeps the login in the keyring ([`ProxyChoice::split_login`]). Also here:
//! which links go to the browser ([`browsable`]) and where a credential may go ([`is_secure_web`]).

use std::fmt;
use std::sync::{PoisonError, RwLock};

use serde::{Deserialize, Serialize};

use crate::secrets::SecretValue;

/// How many redirects one request follows.
const MAX_REDIRECTS: usize = 10;

/// Which proxy outgoing requests use. Its `Debug` hides a custom proxy's login.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
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

impl fmt::Debug for ProxyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Environment => f.write_str("Environment"),
            Self::Off => f.write_str("Off"),
            Self::Custom { url } => f.debug_struct("Custom").field("url", &redacted(url)).finish(),
        }
    }
}

/// Errors of the network settings and of following redirects.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The proxy's URL (its login [`redacted`]) cannot be used.
    #[error("proxy {url:?}: {reason}")]
    InvalidProxy { url: String, reason: String },
    #[error("the link {url:?} is not opened: {reason}")]
    NotBrowsable { url: String, reason: String },
    /// A server redirected a request where it is not followed.
    #[error("{from} redirected to {to}, which is not followed: {reason}")]
    RedirectRefused { from: String, to: String, reason: &'static str },
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
        let invalid = |reason: &str| {
            let login = split_userinfo(url).1.unwrap_or_default();
            let reason = if login.is_empty() { reason.to_owned() } else { reason.replace(login, "***") };
            NetError::InvalidProxy { url: redacted(url), reason }
        };
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

impl ProxyChoice {
    /// The choice without a custom proxy's login, and the login
    /// (`user:password`, as written in the URL): SQLite keeps the first, the
    /// keyring the second.
    pub fn split_login(&self) -> (ProxyChoice, Option<SecretValue>) {
        match self {
            Self::Custom { url } => match split_userinfo(url.trim()) {
                (rest, Some(login)) => (Self::Custom { url: rest }, Some(SecretValue::new(login))),
                (_, None) => (self.clone(), None),
            },
            other => (other.clone(), None),
        }
    }

    /// The choice with `login` put back into a custom proxy's URL, for the
    /// client (and the settings page) only.
    pub fn with_login(self, login: &SecretValue) -> ProxyChoice {
        match self {
            Self::Custom { url } => Self::Custom {
                url: match url.split_once("://") {
                    Some((scheme, rest)) => format!("{scheme}://{}@{rest}", login.expose()),
                    None => format!("{}@{url}", login.expose()),
                },
            },
            other => other,
        }
    }
}

/// `url` without its userinfo, and the userinfo (between `//` and the last
/// `@` of the authority) when it has one.
fn split_userinfo(url: &str) -> (String, Option<&str>) {
    let (prefix, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => (format!("{prefix}{}", &rest[at + 1..]), Some(&rest[..at])),
        None => (url.to_owned(), None),
    }
}

/// `url` with its login, if any, shown as `***`: `http://***@proxy:3128`.
pub fn redacted(url: &str) -> String {
    match split_userinfo(url) {
        (rest, Some(_)) => match rest.split_once("://") {
            Some((scheme, host)) => format!("{scheme}://***@{host}"),
            None => format!("***@{rest}"),
        },
        (_, None) => url.to_owned(),
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

/// A client builder with the chosen proxy that follows redirects only within
/// a request's origin.
pub fn client_builder() -> reqwest::ClientBuilder {
    proxied().redirect(redirects(false))
}

/// A client for requests that carry no credentials (a public registry, a
/// download checked by its hash): it follows redirects to other hosts too,
/// but never from https to plain http.
pub fn public_client() -> reqwest::Client {
    proxied().redirect(redirects(true)).build().expect("the TLS backend starts")
}

/// Follows up to [`MAX_REDIRECTS`] redirects: within the origin, or anywhere
/// but from https to http when `leave_origin`.
fn redirects(leave_origin: bool) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let Some(from) = attempt.previous().last() else { return attempt.follow() };
        let reason = if attempt.previous().len() >= MAX_REDIRECTS {
            "too many redirects"
        } else if from.scheme() == "https" && attempt.url().scheme() != "https" {
            "it leaves https for plain http"
        } else if !leave_origin && attempt.url().origin() != from.origin() {
            "it is another origin (scheme, host or port), where the request's keys and headers must not go; \
             use that address instead if you trust it"
        } else {
            return attempt.follow();
        };
        let error =
            NetError::RedirectRefused { from: redacted(from.as_str()), to: redacted(attempt.url().as_str()), reason };
        attempt.error(error)
    })
}

/// A client builder with the chosen proxy.
fn proxied() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    let installed = INSTALLED.read().unwrap_or_else(PoisonError::into_inner);
    match installed.as_ref().map(|i| &i.route) {
        None | Some(Route::Environment) => builder,
        Some(Route::Direct) => builder.no_proxy(),
        Some(Route::Through(proxy)) => builder.proxy((**proxy).clone()),
    }
}

/// A client from [`client_builder`] with nothing else set.
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
    fn a_proxy_login_is_split_off_redacted_and_joined_back() {
        let custom = |url: &str| ProxyChoice::Custom { url: url.to_owned() };
        let (stored, login) = custom(" http://al%40ice:p%3Ass@proxy.example.com:3128 ").split_login();
        assert_eq!(stored, custom("http://proxy.example.com:3128"));
        assert_eq!(login.as_ref().map(SecretValue::expose), Some("al%40ice:p%3Ass"));
        assert_eq!(stored.with_login(&login.unwrap()), custom("http://al%40ice:p%3Ass@proxy.example.com:3128"));
        assert_eq!(custom("http://p:1/a@b").split_login(), (custom("http://p:1/a@b"), None));
        assert_eq!(ProxyChoice::Off.split_login(), (ProxyChoice::Off, None));

        assert_eq!(redacted("https://user:secret@proxy:8443/x"), "https://***@proxy:8443/x");
        assert_eq!(redacted("user:secret@proxy:3128"), "***@proxy:3128");
        assert_eq!(redacted("http://proxy:3128"), "http://proxy:3128");
        let shown = format!("{:?}", custom("http://user:secret@proxy:3128"));
        assert_eq!(shown, "Custom { url: \"http://***@proxy:3128\" }");
        let error = custom("ftp://user:secret@proxy:21").check().unwrap_err().to_string();
        assert_eq!(error, "proxy \"ftp://***@proxy:21\": only http:// and https:// proxies are supported");
        let error = custom("http://user:secret@[::1").check().unwrap_err().to_string();
        assert!(!error.contains("secret") && !error.contains("user"), "{error}");
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
