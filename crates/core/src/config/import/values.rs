//! How an env or header value is stored: plain text, a reference to a secret
//! already stored (`${keyring:…}`, Patchbay's `{"secret": …}`), a VS Code
//! `${input:…}` prompt, a reference to the environment (`${env:NAME}`,
//! `${NAME}`, kept as written), or a secret to store. A reference may name only
//! the importing server's own entries.

use std::collections::BTreeSet;

use super::entry::{Parsed, SecretSource, SecretUse, issue};
use super::names::{is_secret_name, oauth_secret_name, secret_from_placeholder, secret_name};
use crate::config::model::ValueSource;
use crate::secrets::SecretValue;

pub(super) const KEYRING_PREFIX: &str = "${keyring:";
pub(super) const INPUT_PREFIX: &str = "${input:";

/// The reference inside an exact `${keyring:NAME}` placeholder.
pub(super) fn keyring_reference(value: &str) -> Option<&str> {
    value.strip_prefix(KEYRING_PREFIX)?.strip_suffix('}').filter(|n| !n.is_empty() && !n.contains('}'))
}

/// Every `${input:ID}` id in `value`.
fn input_ids(value: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find(INPUT_PREFIX) {
        rest = &rest[at + INPUT_PREFIX.len()..];
        if let Some(end) = rest.find('}') {
            ids.push(rest[..end].to_owned());
            rest = &rest[end + 1..];
        } else {
            break;
        }
    }
    ids
}

/// Context for turning one env/header value into a [`ValueSource`].
pub(super) struct FieldCtx<'a> {
    pub server: &'a str,
    pub key: &'a str,
    /// `env.KEY` or `headers.Name`, as shown in the preview.
    pub field: String,
    pub marked: Option<&'a BTreeSet<String>>,
}

/// Whether `secret` is an entry under `scope` (`mcp/github/`, `provider/ark/`).
pub(super) fn in_scope(scope: &str, secret: &str) -> bool {
    secret.strip_prefix(scope).is_some_and(|key| !key.is_empty())
}

/// Why the imported server `server` may not use the stored secret `secret`, if
/// it may not. A server uses only its own entries (`mcp/<server>/…`, as
/// Patchbay names them) and never its OAuth sign-in, which only the sign-in
/// reads: otherwise a file could send a provider's key or another server's
/// token to a server of its choosing.
fn foreign_secret(server: &str, secret: &str) -> Option<String> {
    if !in_scope(&secret_name(server, ""), secret) {
        Some(format!(
            "names the secret {secret:?}, which is not this server's own; an imported server may use only its own \
             secrets (mcp/{server}/…)"
        ))
    } else if secret == oauth_secret_name(server) {
        Some(format!("names the secret {secret:?}, the server's OAuth sign-in, which no configuration may use"))
    } else {
        None
    }
}

/// A value that names the stored secret `secret`: noted for the preview, and
/// refused at `path` when the secret is not the server's own.
fn secret_reference(
    ctx: &FieldCtx<'_>,
    secret: String,
    source: SecretSource,
    path: &str,
    parsed: &mut Parsed,
) -> ValueSource {
    if let Some(reason) = foreign_secret(ctx.server, &secret) {
        parsed.issues.push(issue(path, reason));
    }
    parsed.secrets.push(SecretUse { field: ctx.field.clone(), secret: secret.clone(), source });
    ValueSource::Secret(secret)
}

/// A value of Patchbay's form as it is stored: a named secret is a reference
/// (checked like a placeholder), plain text is read as in any other form.
pub(super) fn stored_form(ctx: &FieldCtx<'_>, value: &ValueSource, path: &str, parsed: &mut Parsed) -> ValueSource {
    match value {
        ValueSource::Secret(name) => secret_reference(ctx, name.clone(), SecretSource::Reference, path, parsed),
        // Patchbay's own form says `env` where it means it: its plain text stays text.
        ValueSource::Plain(text) => match secret_field(ctx, text, path, parsed) {
            ValueSource::Env(_) => ValueSource::Plain(text.clone()),
            other => other,
        },
        ValueSource::Env(text) => ValueSource::Env(text.clone()),
    }
}

/// Decides whether a value is a reference, a prompt, a secret to store or plain text.
pub(super) fn secret_field(ctx: &FieldCtx<'_>, value: &str, path: &str, parsed: &mut Parsed) -> ValueSource {
    if let Some(reference) = keyring_reference(value) {
        return secret_reference(ctx, secret_from_placeholder(reference), SecretSource::Reference, path, parsed);
    }
    if value.contains(KEYRING_PREFIX) {
        parsed.issues.push(issue(path, "a ${keyring:…} placeholder must be the whole value"));
        return ValueSource::Plain(String::new());
    }
    let ids = input_ids(value);
    if let Some(first) = ids.first() {
        // Our own VS Code export names inputs after the secret (`mcp/github/TOKEN`).
        let secret = if ids.len() == 1 && first.contains('/') && value == format!("{INPUT_PREFIX}{first}}}") {
            first.clone()
        } else {
            secret_name(ctx.server, ctx.key)
        };
        if ids.len() > 1 {
            parsed.issues.push(issue(path, "only one ${input:…} placeholder per value is supported"));
        }
        let source = SecretSource::Prompt { input: first.clone(), template: value.to_owned() };
        return secret_reference(ctx, secret, source, path, parsed);
    }
    // A reference to the environment is read when the server starts, never stored as a
    // value; the preview lists the variables it reads (`McpServerConfig::environment_reads`).
    if !crate::config::env_refs::variables(value).is_empty() {
        return ValueSource::Env(value.to_owned());
    }
    let marked = ctx.marked.is_some_and(|m| m.contains(ctx.key));
    if (marked || is_secret_name(ctx.key)) && !value.is_empty() {
        let source = SecretSource::Value(SecretValue::new(value));
        return secret_reference(ctx, secret_name(ctx.server, ctx.key), source, path, parsed);
    }
    ValueSource::Plain(value.to_owned())
}
