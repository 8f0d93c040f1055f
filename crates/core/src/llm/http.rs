//! What every HTTP provider shares: connection settings, mapping HTTP
//! statuses and transport failures to [`LlmError`], and [`decode_stream`],
//! which turns a source of wire items into [`StreamEvent`]s under an idle
//! timeout and a cancellation token.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::{LlmError, StreamEvent};
use crate::secrets::SecretValue;

/// How long a stream may stay silent (and how long the server may take to
/// answer) before the call fails with [`LlmError::Timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(180);

/// How long establishing a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Where and how to reach one provider. Its `Debug` shows neither the key nor
/// the headers' values ([`SecretValue`]).
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Name used in errors (the profile name).
    pub name: String,
    /// Base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The API key, if any.
    pub api_key: Option<SecretValue>,
    /// Extra headers sent with every request (values already resolved; any may be a secret).
    pub headers: BTreeMap<String, SecretValue>,
    /// Silence allowed before the response starts and between chunks.
    pub idle_timeout: Duration,
}

impl HttpSettings {
    /// Settings for `base_url` with no key, no extra headers and the default timeout.
    pub fn new(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            api_key: None,
            headers: BTreeMap::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// The base URL without a trailing slash.
    pub(crate) fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }

    /// The extra headers as a [`HeaderMap`]; a bad name or value is a [`LlmError::Request`].
    pub(crate) fn header_map(&self) -> Result<HeaderMap, LlmError> {
        let mut map = HeaderMap::new();
        for (name, value) in &self.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| self.request_error(format!("header name {name:?}: {e}")))?;
            let mut value = HeaderValue::from_str(value.expose())
                .map_err(|e| self.request_error(format!("value of header {name:?}: {e}")))?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        Ok(map)
    }

    /// Adds the API key, when there is one, to `headers` as `name`, marked
    /// sensitive; a key no header can carry is a [`LlmError::Request`].
    pub(crate) fn insert_key(&self, headers: &mut HeaderMap, name: &'static str) -> Result<(), LlmError> {
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(key.expose())
                .map_err(|_| self.request_error("the API key contains characters not allowed in a header".into()))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        Ok(())
    }

    /// A reqwest client with the connect timeout and the extra headers (which
    /// stay on the base URL's origin: see [`crate::net`]).
    pub(crate) fn client(&self) -> Result<reqwest::Client, LlmError> {
        crate::net::client_builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .default_headers(self.header_map()?)
            .build()
            .map_err(|e| self.request_error(format!("HTTP client: {e}")))
    }

    pub(crate) fn request_error(&self, message: String) -> LlmError {
        LlmError::Request { provider: self.name.clone(), message }
    }

    pub(crate) fn invalid(&self, message: String) -> LlmError {
        LlmError::InvalidStream { provider: self.name.clone(), message }
    }

    /// Maps an error status to the variant a caller can act on.
    pub(crate) fn status_error(&self, status: u16, retry_after: Option<Duration>, message: String) -> LlmError {
        let provider = self.name.clone();
        match status {
            401 | 403 => LlmError::Auth { provider, status, message },
            404 => LlmError::NotFound { provider, message },
            429 => LlmError::RateLimited { provider, retry_after, message },
            _ => LlmError::Http { provider, status, message },
        }
    }

    /// Maps a transport failure.
    pub(crate) fn transport_error(&self, url: &str, e: &reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout { provider: self.name.clone(), after: self.idle_timeout }
        } else if e.is_connect() || e.is_request() || e.is_redirect() {
            LlmError::Connect { provider: self.name.clone(), url: url.to_owned(), message: error_chain(e) }
        } else {
            self.invalid(error_chain(e))
        }
    }

    /// Sends `body` as JSON to `url` and returns the response once its status
    /// is a success; an error status becomes the matching [`LlmError`].
    pub(crate) async fn post_json(
        &self,
        client: &reqwest::Client,
        url: &str,
        headers: HeaderMap,
        body: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlmError> {
        let send = client.post(url).headers(headers).json(body).send();
        let response = tokio::select! {
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            r = tokio::time::timeout(self.idle_timeout, send) => match r {
                Err(_) => return Err(LlmError::Timeout { provider: self.name.clone(), after: self.idle_timeout }),
                Ok(r) => r.map_err(|e| self.transport_error(url, &e))?,
            },
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let body = tokio::select! {
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            r = tokio::time::timeout(self.idle_timeout, response.text()) => r.ok().and_then(Result::ok).unwrap_or_default(),
        };
        Err(self.status_error(status.as_u16(), retry_after, error_message(&body)))
    }
}

/// The delay a `Retry-After` header asks for (seconds form only).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The human message inside an error body: `error.message`, `message`, or the text itself.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        let v = if let Some(list) = v.as_array() { list.first()? } else { v };
        v.pointer("/error/message").or_else(|| v.get("message")).and_then(|m| m.as_str()).map(str::to_owned)
    });
    from_json.unwrap_or_else(|| body.chars().take(500).collect())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    message
}

/// Turns one provider's wire items into [`StreamEvent`]s.
pub(crate) trait Decode: Send + 'static {
    /// One item of the wire stream (a parsed chunk or an SSE event).
    type Item: Send + 'static;
    /// Handles one item, pushing the events it yields.
    fn feed(&mut self, item: Self::Item, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;
    /// The source ended: pushes what was held back, or fails when the
    /// response was incomplete.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;
}

struct DecodeState<D: Decode> {
    source: BoxStream<'static, Result<D::Item, LlmError>>,
    decoder: D,
    pending: VecDeque<Result<StreamEvent, LlmError>>,
    done: bool,
    provider: String,
    idle: Duration,
    cancel: CancellationToken,
}

/// Runs `decoder` over `source`: every wait for the next item is bounded by
/// `idle` and ends early when `cancel` fires; the first error ends the stream.
pub(crate) fn decode_stream<D: Decode>(
    provider: String,
    source: BoxStream<'static, Result<D::Item, LlmError>>,
    decoder: D,
    idle: Duration,
    cancel: CancellationToken,
) -> BoxStream<'static, Result<StreamEvent, LlmError>> {
    let state = DecodeState { source, decoder, pending: VecDeque::new(), done: false, provider, idle, cancel };
    futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(next) = s.pending.pop_front() {
                return Some((next, s));
            }
            if s.done {
                return None;
            }
            let next = tokio::select! {
                _ = s.cancel.cancelled() => Some(Err(LlmError::Cancelled)),
                r = tokio::time::timeout(s.idle, s.source.next()) => match r {
                    Err(_) => Some(Err(LlmError::Timeout { provider: s.provider.clone(), after: s.idle })),
                    Ok(item) => item,
                },
            };
            let mut out = Vec::new();
            let result = match next {
                Some(Ok(item)) => s.decoder.feed(item, &mut out),
                Some(Err(e)) => Err(e),
                None => {
                    s.done = true;
                    s.decoder.end(&mut out)
                }
            };
            s.pending.extend(out.into_iter().map(Ok));
            if let Err(e) = result {
                s.pending.push_back(Err(e));
                s.done = true;
            }
        }
    })
    .boxed()
}

/// Server-sent events of a successful response, as a stream of items.
pub(crate) fn sse_events(
    settings: &HttpSettings,
    response: reqwest::Response,
) -> BoxStream<'static, Result<eventsource_stream::Event, LlmError>> {
    use eventsource_stream::Eventsource;
    let name = settings.name.clone();
    response
        .bytes_stream()
        .eventsource()
        .map(move |r| r.map_err(|e| LlmError::InvalidStream { provider: name.clone(), message: error_chain(&e) }))
        .boxed()
}

/// Parses an SSE data payload as JSON of type `T`.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    provider: &str,
    what: &str,
    data: &str,
) -> Result<T, LlmError> {
    serde_json::from_str(data).map_err(|e| LlmError::InvalidStream {
        provider: provider.to_owned(),
        message: format!("{what} is not valid: {e}: {}", data.chars().take(200).collect::<String>()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_reads_common_shapes() {
        assert_eq!(error_message(r#"{"error":{"message":"bad key"}}"#), "bad key");
        assert_eq!(error_message(r#"[{"error":{"message":"quota"}}]"#), "quota");
        assert_eq!(error_message(r#"{"message":"nope"}"#), "nope");
        assert_eq!(error_message("plain text"), "plain text");
    }

    #[test]
    fn debug_shows_neither_the_key_nor_the_headers() {
        let mut settings = HttpSettings::new("p", "http://x");
        settings.api_key = Some(SecretValue::new("sk-live-key"));
        settings.headers.insert("x-team-token".into(), SecretValue::new("team-secret"));
        let providers = (
            crate::llm::OpenAiProvider::new(settings.clone()).unwrap(),
            crate::llm::AnthropicProvider::new(settings.clone()).unwrap(),
            crate::llm::GeminiProvider::new(settings.clone()).unwrap(),
        );
        for shown in [format!("{settings:?}"), format!("{providers:?}")] {
            assert!(!shown.contains("sk-live-key") && !shown.contains("team-secret"), "{shown}");
            assert!(shown.contains("x-team-token"), "{shown}");
        }
    }

    #[test]
    fn statuses_map_to_variants() {
        let s = HttpSettings::new("p", "http://x");
        assert!(matches!(s.status_error(401, None, String::new()), LlmError::Auth { status: 401, .. }));
        assert!(matches!(s.status_error(403, None, String::new()), LlmError::Auth { status: 403, .. }));
        assert!(matches!(s.status_error(404, None, String::new()), LlmError::NotFound { .. }));
        assert!(matches!(s.status_error(429, None, String::new()), LlmError::RateLimited { .. }));
        assert!(matches!(s.status_error(503, None, String::new()), LlmError::Http { status: 503, .. }));
    }
}
