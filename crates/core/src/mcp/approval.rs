//! Tool-call approval policy.
//!
//! Whether a tool call runs, asks the user, or is refused is decided here, as
//! pure logic over the server's configuration ([`ApprovalMode`] default plus
//! per-tool overrides), the tool's definition and annotations, and the grants
//! the user made for one conversation.
//!
//! Every approval is pinned twice:
//! - to a [`ToolFingerprint`] of the tool's definition (name, description,
//!   input and output schema, annotations), so a server that changes what a
//!   tool claims to do after it was approved is asked about again;
//! - for a single call, to the [`ArgumentsHash`] of the exact arguments shown
//!   to the user, checked by [`ApprovedCall::verify`] just before the call.
//!
//! `readOnlyHint` tools may default to allow ([`ApprovalPolicy::read_only_auto_allow`]);
//! a tool that is also hinted destructive never does.

use std::collections::BTreeMap;

use rmcp::model::{JsonObject, Tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{ApprovalMode, McpServerConfig};

/// Why a call that was approved may not run as it is.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The approval was for another server or tool.
    #[error("the approval was given for {approved_server}/{approved_tool}, not {server}/{tool}")]
    WrongTool { approved_server: String, approved_tool: String, server: String, tool: String },
    /// The tool's definition changed since the user approved it.
    #[error("tool {server}/{tool} changed its definition after it was approved; ask again")]
    ToolChanged { server: String, tool: String },
    /// The arguments about to be sent are not the ones the user approved.
    #[error("the arguments for {server}/{tool} differ from the ones that were approved")]
    ArgumentsChanged { server: String, tool: String },
}

/// Writes `value` as JSON with object keys sorted, so equal values hash equally.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push(b'{');
            for (i, (key, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(&Value::String(key.clone()), out);
                out.push(b':');
                write_canonical(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => out.extend_from_slice(scalar.to_string().as_bytes()),
    }
}

fn canonical_sha256(value: &Value) -> String {
    let mut bytes = Vec::new();
    write_canonical(value, &mut bytes);
    hex::encode(Sha256::digest(&bytes))
}

/// The sha256 of a tool's definition as the model and the user see it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolFingerprint(String);

impl ToolFingerprint {
    /// Fingerprints name, description, input and output schema and annotations.
    pub fn of(tool: &Tool) -> Self {
        let definition = serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema.as_ref(),
            "outputSchema": tool.output_schema.as_deref(),
            "annotations": tool.annotations,
        });
        Self(canonical_sha256(&definition))
    }

    /// The hex digest.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The sha256 of a call's arguments (key order does not matter).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArgumentsHash(String);

impl ArgumentsHash {
    /// Hashes the arguments; no arguments hash like an empty object.
    pub fn of(arguments: Option<&JsonObject>) -> Self {
        let value = Value::Object(arguments.cloned().unwrap_or_default());
        Self(canonical_sha256(&value))
    }

    /// The hex digest.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What to do with a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", content = "reason", rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Allow(AllowReason),
    /// Ask the user first.
    Ask(AskReason),
    /// Refuse it.
    Deny(DenyReason),
}

impl Decision {
    /// The approval mode this decision amounts to.
    pub fn mode(&self) -> crate::config::ApprovalMode {
        match self {
            Self::Allow(_) => crate::config::ApprovalMode::Allow,
            Self::Ask(_) => crate::config::ApprovalMode::Ask,
            Self::Deny(_) => crate::config::ApprovalMode::Deny,
        }
    }
}

/// Why a call may run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowReason {
    /// The tool's own setting is "allow".
    ToolSetting,
    /// The server's default is "allow".
    ServerDefault,
    /// The user allowed this tool, as it is now, for the conversation.
    ConversationGrant,
    /// The tool says it only reads, and read-only tools are allowed.
    ReadOnly,
}

/// Why the user must be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AskReason {
    /// The tool's own setting is "ask".
    ToolSetting,
    /// The server's default is "ask".
    ServerDefault,
    /// The tool was allowed for the conversation, but its definition changed since.
    DefinitionChanged,
}

/// Why a call is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenyReason {
    /// The tool's own setting is "deny".
    ToolSetting,
    /// The server's default is "deny".
    ServerDefault,
}

/// One server's approval settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPolicy {
    /// The mode for tools without an override.
    pub default: ApprovalMode,
    /// Per-tool modes, by the server's own tool name.
    pub overrides: BTreeMap<String, ApprovalMode>,
    /// Whether tools hinted `readOnlyHint` (and not destructive) run without
    /// asking when the server's default is "ask".
    pub read_only_auto_allow: bool,
}

impl ApprovalPolicy {
    /// The policy a server's configuration describes.
    pub fn from_config(config: &McpServerConfig, read_only_auto_allow: bool) -> Self {
        Self { default: config.approval, overrides: config.tool_approval.clone(), read_only_auto_allow }
    }

    /// Decides a call of `tool` on `server` in a conversation holding `grants`.
    ///
    /// A per-tool setting wins over the server default; "deny" is never
    /// overridden by a grant; a grant only counts while the tool's definition
    /// is the one that was granted.
    pub fn decide(&self, server: &str, tool: &Tool, grants: &ConversationGrants) -> Decision {
        let grant = grants.check(server, tool);
        match self.overrides.get(tool.name.as_ref()) {
            Some(ApprovalMode::Deny) => Decision::Deny(DenyReason::ToolSetting),
            Some(ApprovalMode::Allow) => Decision::Allow(AllowReason::ToolSetting),
            Some(ApprovalMode::Ask) => grant.unwrap_or(Decision::Ask(AskReason::ToolSetting)),
            None => match self.default {
                ApprovalMode::Deny => Decision::Deny(DenyReason::ServerDefault),
                ApprovalMode::Allow => Decision::Allow(AllowReason::ServerDefault),
                ApprovalMode::Ask => grant.unwrap_or_else(|| {
                    if self.read_only_auto_allow && is_read_only(tool) {
                        Decision::Allow(AllowReason::ReadOnly)
                    } else {
                        Decision::Ask(AskReason::ServerDefault)
                    }
                }),
            },
        }
    }
}

/// Whether a tool says it only reads and does not also claim to be destructive.
pub fn is_read_only(tool: &Tool) -> bool {
    tool.annotations.as_ref().is_some_and(|a| a.read_only_hint == Some(true) && a.destructive_hint != Some(true))
}

/// The tools the user allowed for the rest of one conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationGrants {
    granted: BTreeMap<(String, String), ToolFingerprint>,
}

impl ConversationGrants {
    /// Allows `tool` of `server`, as it is defined now, for the conversation.
    pub fn grant(&mut self, server: &str, tool: &Tool) {
        self.granted.insert((server.to_owned(), tool.name.to_string()), ToolFingerprint::of(tool));
    }

    /// Withdraws a grant.
    pub fn revoke(&mut self, server: &str, tool: &str) {
        self.granted.remove(&(server.to_owned(), tool.to_owned()));
    }

    /// `Allow` for a current grant, `Ask(DefinitionChanged)` for a stale one, `None` without one.
    fn check(&self, server: &str, tool: &Tool) -> Option<Decision> {
        let granted = self.granted.get(&(server.to_owned(), tool.name.to_string()))?;
        Some(if *granted == ToolFingerprint::of(tool) {
            Decision::Allow(AllowReason::ConversationGrant)
        } else {
            Decision::Ask(AskReason::DefinitionChanged)
        })
    }
}

/// One call as the user approved it: which tool, as it was defined, with which arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedCall {
    /// The configured server name.
    pub server: String,
    /// The server's tool name.
    pub tool: String,
    /// The tool's definition when the user approved.
    pub fingerprint: ToolFingerprint,
    /// The arguments the user saw.
    pub arguments: ArgumentsHash,
}

impl ApprovedCall {
    /// Records an approval of calling `tool` with `arguments`.
    pub fn new(server: &str, tool: &Tool, arguments: Option<&JsonObject>) -> Self {
        Self {
            server: server.to_owned(),
            tool: tool.name.to_string(),
            fingerprint: ToolFingerprint::of(tool),
            arguments: ArgumentsHash::of(arguments),
        }
    }

    /// Checks, just before the call, that it is the call that was approved:
    /// same tool, same definition, same arguments.
    pub fn verify(&self, server: &str, tool: &Tool, arguments: Option<&JsonObject>) -> Result<(), ApprovalError> {
        if self.server != server || self.tool != tool.name {
            return Err(ApprovalError::WrongTool {
                approved_server: self.server.clone(),
                approved_tool: self.tool.clone(),
                server: server.to_owned(),
                tool: tool.name.to_string(),
            });
        }
        if self.fingerprint != ToolFingerprint::of(tool) {
            return Err(ApprovalError::ToolChanged { server: self.server.clone(), tool: self.tool.clone() });
        }
        if self.arguments != ArgumentsHash::of(arguments) {
            return Err(ApprovalError::ArgumentsChanged { server: self.server.clone(), tool: self.tool.clone() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::ToolAnnotations;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let Value::Object(schema) = schema else { unreachable!() };
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
    }

    fn annotated(name: &str, read_only: Option<bool>, destructive: Option<bool>) -> Tool {
        let mut annotations = ToolAnnotations::default();
        annotations.read_only_hint = read_only;
        annotations.destructive_hint = destructive;
        tool(name, "d").with_annotations(annotations)
    }

    fn policy(default: ApprovalMode, overrides: &[(&str, ApprovalMode)], read_only: bool) -> ApprovalPolicy {
        ApprovalPolicy {
            default,
            overrides: overrides.iter().map(|(t, m)| ((*t).to_owned(), *m)).collect(),
            read_only_auto_allow: read_only,
        }
    }

    fn args(value: Value) -> JsonObject {
        let Value::Object(map) = value else { panic!("not an object") };
        map
    }

    #[test]
    fn server_default_applies_without_override() {
        let grants = ConversationGrants::default();
        let t = tool("write", "writes");
        assert_eq!(
            policy(ApprovalMode::Ask, &[], false).decide("s", &t, &grants),
            Decision::Ask(AskReason::ServerDefault)
        );
        assert_eq!(
            policy(ApprovalMode::Allow, &[], false).decide("s", &t, &grants),
            Decision::Allow(AllowReason::ServerDefault)
        );
        assert_eq!(
            policy(ApprovalMode::Deny, &[], false).decide("s", &t, &grants),
            Decision::Deny(DenyReason::ServerDefault)
        );
    }

    #[test]
    fn tool_override_wins_over_server_default() {
        let grants = ConversationGrants::default();
        let p = policy(ApprovalMode::Deny, &[("read", ApprovalMode::Allow), ("ask", ApprovalMode::Ask)], false);
        assert_eq!(p.decide("s", &tool("read", "d"), &grants), Decision::Allow(AllowReason::ToolSetting));
        assert_eq!(p.decide("s", &tool("ask", "d"), &grants), Decision::Ask(AskReason::ToolSetting));
        let p = policy(ApprovalMode::Allow, &[("rm", ApprovalMode::Deny)], true);
        assert_eq!(p.decide("s", &annotated("rm", Some(true), None), &grants), Decision::Deny(DenyReason::ToolSetting));
    }

    #[test]
    fn read_only_defaults_to_allow_only_when_enabled_and_not_destructive() {
        let grants = ConversationGrants::default();
        let on = policy(ApprovalMode::Ask, &[], true);
        let off = policy(ApprovalMode::Ask, &[], false);
        let reader = annotated("read", Some(true), None);
        assert_eq!(on.decide("s", &reader, &grants), Decision::Allow(AllowReason::ReadOnly));
        assert_eq!(off.decide("s", &reader, &grants), Decision::Ask(AskReason::ServerDefault));
        let contradictory = annotated("read", Some(true), Some(true));
        assert_eq!(on.decide("s", &contradictory, &grants), Decision::Ask(AskReason::ServerDefault));
        let destructive = annotated("rm", Some(false), Some(true));
        assert_eq!(on.decide("s", &destructive, &grants), Decision::Ask(AskReason::ServerDefault));
        // A per-tool "ask" is not overridden by the read-only hint.
        let p = policy(ApprovalMode::Ask, &[("read", ApprovalMode::Ask)], true);
        assert_eq!(p.decide("s", &reader, &grants), Decision::Ask(AskReason::ToolSetting));
    }

    #[test]
    fn conversation_grant_allows_until_the_definition_changes() {
        let p = policy(ApprovalMode::Ask, &[], false);
        let mut grants = ConversationGrants::default();
        let before = tool("write", "writes a file");
        grants.grant("s", &before);
        assert_eq!(p.decide("s", &before, &grants), Decision::Allow(AllowReason::ConversationGrant));
        // Same tool name on another server is not granted.
        assert_eq!(p.decide("other", &before, &grants), Decision::Ask(AskReason::ServerDefault));
        let after = tool("write", "writes a file and uploads it somewhere");
        assert_eq!(p.decide("s", &after, &grants), Decision::Ask(AskReason::DefinitionChanged));
        grants.revoke("s", "write");
        assert_eq!(p.decide("s", &before, &grants), Decision::Ask(AskReason::ServerDefault));
    }

    #[test]
    fn grants_never_override_deny() {
        let mut grants = ConversationGrants::default();
        let t = tool("write", "d");
        grants.grant("s", &t);
        assert_eq!(
            policy(ApprovalMode::Deny, &[], false).decide("s", &t, &grants),
            Decision::Deny(DenyReason::ServerDefault)
        );
        assert_eq!(
            policy(ApprovalMode::Allow, &[("write", ApprovalMode::Deny)], false).decide("s", &t, &grants),
            Decision::Deny(DenyReason::ToolSetting)
        );
    }

    #[test]
    fn fingerprint_covers_schema_and_annotations_but_not_key_order() {
        let base = tool("t", "d");
        let mut schema_changed = base.clone();
        schema_changed.input_schema = Arc::new(args(json!({"type": "object", "properties": {}})));
        assert_ne!(ToolFingerprint::of(&base), ToolFingerprint::of(&schema_changed));
        let hinted = annotated("t", Some(true), None);
        assert_ne!(ToolFingerprint::of(&base), ToolFingerprint::of(&hinted));
        let mut reordered = base.clone();
        reordered.input_schema = Arc::new(args(json!({"properties": {"path": {"type": "string"}}, "type": "object"})));
        assert_eq!(ToolFingerprint::of(&base), ToolFingerprint::of(&reordered));
    }

    #[test]
    fn approved_call_checks_tool_definition_and_exact_arguments() {
        let t = tool("write", "d");
        let approved_args = args(json!({"path": "/tmp/a", "mode": {"x": 1, "y": [1, 2]}}));
        let approved = ApprovedCall::new("s", &t, Some(&approved_args));
        let same_reordered = args(json!({"mode": {"y": [1, 2], "x": 1}, "path": "/tmp/a"}));
        assert_eq!(approved.verify("s", &t, Some(&same_reordered)), Ok(()));
        let swapped = args(json!({"path": "/etc/passwd", "mode": {"x": 1, "y": [1, 2]}}));
        assert!(matches!(approved.verify("s", &t, Some(&swapped)), Err(ApprovalError::ArgumentsChanged { .. })));
        let reordered_array = args(json!({"path": "/tmp/a", "mode": {"x": 1, "y": [2, 1]}}));
        assert!(matches!(
            approved.verify("s", &t, Some(&reordered_array)),
            Err(ApprovalError::ArgumentsChanged { .. })
        ));
        assert!(matches!(approved.verify("s", &t, None), Err(ApprovalError::ArgumentsChanged { .. })));
        let changed = tool("write", "now also deletes");
        assert!(matches!(approved.verify("s", &changed, Some(&approved_args)), Err(ApprovalError::ToolChanged { .. })));
        assert!(matches!(approved.verify("other", &t, Some(&approved_args)), Err(ApprovalError::WrongTool { .. })));
    }

    #[test]
    fn no_arguments_hash_like_an_empty_object() {
        assert_eq!(ArgumentsHash::of(None), ArgumentsHash::of(Some(&JsonObject::new())));
        assert_ne!(ArgumentsHash::of(None), ArgumentsHash::of(Some(&args(json!({"a": null})))));
    }
}
