//! `provider test`: one real, cheap request (list models) with a profile's URL
//! and key, so the user learns at once whether they work, with a clear error
//! for a rejected key (401/403), a wrong URL (404), a timeout or an unknown host.
//! Where the list states a model's context window (OpenRouter, Groq, Mistral, vLLM, Gemini, …),
//! the report carries it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::LlmError;
use crate::config::{ProviderKind, ProviderProfile, ValueSource};
use crate::secrets::SecretStore;

/// The result of a successful [`probe`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeReport {
    /// The provider's name.
    pub provider: String,
    /// Model ids the provider lists.
    pub models: Vec<String>,
    /// Whether the default model is among them.
    pub default_model_listed: bool,
    /// The context windows the list states, by model id.
    pub windows: BTreeMap<String, u32>,
}

/// The fields a model list states a model's input window in: OpenRouter, Together and Fireworks
/// (`context_length`), Groq (`context_window`), Mistral and LM Studio (`max_context_length`), vLLM
/// (`max_model_len`), Anthropic (`max_input_tokens`), Gemini (`inputTokenLimit`).
const WINDOW_FIELDS: &[&str] =
    &["context_length", "context_window", "max_context_length", "max_model_len", "max_input_tokens", "inputTokenLimit"];

/// A listed model's id (less `prefix`) and the window it states, if any.
fn listed(model: &serde_json::Value, id_field: &str, prefix: &str) -> Option<(String, Option<u32>)> {
    let id = model.get(id_field)?.as_str()?;
    let window = WINDOW_FIELDS
        .iter()
        .find_map(|f| model.get(*f)?.as_u64())
        .and_then(|w| u32::try_from(w).ok())
        .filter(|&w| w > 0);
    Some((id.strip_prefix(prefix).unwrap_or(id).to_owned(), window))
}

/// The default time limit of [`probe`].
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Lists the provider's models with its URL and key: one real request.
pub async fn probe(
    profile: &ProviderProfile,
    secrets: &dyn SecretStore,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<ProbeReport, LlmError> {
    let provider = profile.name.clone();
    let key = match &profile.api_key {
        Some(name) => Some(
            secrets
                .get(name)
                .map_err(|e| LlmError::Request { provider: provider.clone(), message: e.to_string() })?
                .ok_or_else(|| LlmError::Request {
                    provider: provider.clone(),
                    message: format!("its API key {name} is not set; run `patchbay secret set {name}`"),
                })?,
        ),
        None => None,
    };
    let http = crate::net::client_builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| LlmError::Request { provider: provider.clone(), message: chain(&e) })?;
    let mut headers = Vec::new();
    for (name, value) in &profile.headers {
        let value = match value {
            ValueSource::Plain(v) => Some(v.clone()),
            ValueSource::Secret(n) => {
                secrets.get(n).map_err(|e| LlmError::Request { provider: provider.clone(), message: e.to_string() })?
            }
            ValueSource::Env(_) => return Err(super::env_header(&provider, name)),
        };
        headers.extend(value.map(|v| (name.clone(), v)));
    }
    let call = Call { profile, key: key.as_deref(), headers: &headers, timeout };
    let work = list(&call, &http);
    let listed = tokio::select! {
        () = cancel.cancelled() => return Err(LlmError::Cancelled),
        // The client's own timeout bounds each phase; this bounds the whole exchange.
        r = tokio::time::timeout(timeout, work) => r.map_err(|_| LlmError::Timeout { provider: provider.clone(), after: timeout })??,
    };
    let windows = listed.iter().filter_map(|(id, w)| Some((id.clone(), (*w)?))).collect();
    let models: Vec<String> = listed.into_iter().map(|(id, _)| id).collect();
    let default_model_listed = models.iter().any(|m| m == &profile.default_model);
    Ok(ProbeReport { provider, models, default_model_listed, windows })
}

/// One probe request's inputs.
struct Call<'a> {
    profile: &'a ProviderProfile,
    key: Option<&'a str>,
    headers: &'a [(String, String)],
    timeout: Duration,
}

/// Lists the models: `GET {base}/models` with the key where each API wants it
/// (OpenAI-compatible: `Authorization: Bearer`; Anthropic: `x-api-key`; Gemini:
/// `x-goog-api-key`), read as leniently as servers answer ([`read_list`]).
async fn list(call: &Call<'_>, http: &reqwest::Client) -> Result<Vec<(String, Option<u32>)>, LlmError> {
    let (profile, key) = (call.profile, call.key);
    let base = profile.base_url.trim_end_matches('/');
    let (url, request) = match profile.kind {
        ProviderKind::OpenAi => {
            let url = format!("{base}/models");
            let request = http.get(&url);
            (url.clone(), if let Some(key) = key { request.bearer_auth(key) } else { request })
        }
        ProviderKind::Anthropic => {
            let url = if base.ends_with("/v1") { format!("{base}/models") } else { format!("{base}/v1/models") };
            let request =
                http.get(&url).header("anthropic-version", "2023-06-01").header("x-api-key", key.unwrap_or_default());
            (url, request)
        }
        ProviderKind::Gemini => {
            let url =
                if base.ends_with("/v1beta") { format!("{base}/models") } else { format!("{base}/v1beta/models") };
            let request = http.get(&url).header("x-goog-api-key", key.unwrap_or_default());
            (url, request)
        }
    };
    let mut request = request;
    for (name, value) in call.headers {
        let bad = |e: &dyn std::fmt::Display| LlmError::Request {
            provider: profile.name.clone(),
            message: format!("header {name}: {e}"),
        };
        let header = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|e| bad(&e))?;
        request = request.header(header, value);
    }
    let response = request.send().await.map_err(|e| transport_error(call, &e))?;
    let status = response.status();
    let body = response.text().await.map_err(|e| transport_error(call, &e))?;
    if !status.is_success() {
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                let error = v.get("error")?;
                error.get("message").or(Some(error))?.as_str().map(str::to_owned)
            })
            .unwrap_or_else(|| body.chars().take(200).collect());
        return Err(status_error(profile, status.as_u16(), message));
    }
    read_list(profile.kind, &body).map_err(|why| LlmError::Unreadable {
        provider: profile.name.clone(),
        url,
        what: "a model list",
        why: match profile.kind {
            ProviderKind::OpenAi => format!("{why} (is the base URL right? It usually ends in /v1)"),
            _ => why,
        },
    })
}

/// The models a list names, with the windows it states. Only a model's id is
/// needed: `created`, `object` and `owned_by` are often missing (LM Studio,
/// DeepSeek), and servers put the list under `data` (OpenAI), `models`
/// (Gemini, llama.cpp's second list) or nowhere (a bare array).
fn read_list(kind: ProviderKind, body: &str) -> Result<Vec<(String, Option<u32>)>, String> {
    let start: String = body.trim().chars().take(120).collect();
    let value: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("it is not JSON ({e}); it begins: {start}"))?;
    let (fields, prefix): (&[&str], &str) = match kind {
        ProviderKind::Gemini => (&["name"], "models/"),
        _ => (&["id", "name", "model"], ""),
    };
    let entries = [value.get("data"), value.get("models"), Some(&value)]
        .into_iter()
        .flatten()
        .find_map(|v| v.as_array())
        .ok_or_else(|| format!("it holds no list of models; it begins: {start}"))?;
    let models: Vec<_> = entries.iter().filter_map(|m| fields.iter().find_map(|f| listed(m, f, prefix))).collect();
    if models.is_empty() && !entries.is_empty() {
        return Err(format!("no entry of its list has a model id ({}); it begins: {start}", fields.join(" or ")));
    }
    Ok(models)
}

fn status_error(profile: &ProviderProfile, status: u16, message: String) -> LlmError {
    let provider = profile.name.clone();
    match status {
        401 | 403 => LlmError::Auth { provider, status, message },
        404 => LlmError::NotFound {
            provider,
            message: format!("{} has no model list here (check the base URL): {message}", profile.base_url),
        },
        429 => LlmError::RateLimited { provider, retry_after: None, message },
        _ => LlmError::Http { provider, status, message },
    }
}

fn transport_error(call: &Call<'_>, e: &reqwest::Error) -> LlmError {
    let provider = call.profile.name.clone();
    if e.is_timeout() {
        return LlmError::Timeout { provider, after: call.timeout };
    }
    LlmError::Connect { provider, url: call.profile.base_url.clone(), message: chain(e) }
}

/// An error and its causes, for messages such as "dns error: failed to lookup address".
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}
