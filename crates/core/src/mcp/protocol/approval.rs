//! Tool-call approval policy: whether a call runs, asks the user or is refused, as pure logic over
//! the server's configuration ([`ApprovalMode`] plus per-tool overrides) and the tool's annotations.
//!
//! "Allow for this conversation" is pinned to the server's stored identity, the tool and a
//! [`ToolFingerprint`] of its definition, so a tool that changes what it claims after it was allowed
//! is asked about again; the host checks once more just before the call ([`check_unchanged`]). At
//! strict nothing is remembered. Annotations are the server's claims, not facts: a `readOnlyHint`
//! tool runs unasked only where the user switched that on ([`ApprovalPolicy::read_only_auto_allow`]),
//! and never when it is also hinted destructive.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{ApprovalMode, McpServerConfig, SecurityLevel};

/// Why a call that was approved may not run as it is.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The tool's definition changed (or the tool went away) since it was listed and approved.
    #[error("tool {server}/{tool} changed its definition after it was offered and approved; it did not run")]
    ToolChanged { server: String, tool: String },
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
    /// Fingerprints name, title, description, input and output schema and annotations.
    pub fn of(tool: &Tool) -> Self {
        let definition = serde_json::json!({
            "name": tool.name,
            "title": tool.title,
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
    /// The tool says it only reads, and the user lets such tools of this server run.
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
    /// The server runs at the strict level, where every call is asked.
    StrictLevel,
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
    /// asking when the server's default is "ask" (the user's switch, off by default).
    pub read_only_auto_allow: bool,
    /// The server runs at strict: what would run unasked is asked (deny stays deny).
    pub strict: bool,
}

impl ApprovalPolicy {
    /// The policy a server's configuration describes.
    pub fn from_config(config: &McpServerConfig) -> Self {
        Self {
            default: config.approval,
            overrides: config.tool_approval.clone(),
            read_only_auto_allow: config.read_only_auto_allow,
            strict: false,
        }
    }

    /// The same policy for a server running at `level`.
    pub fn at_level(self, level: SecurityLevel) -> Self {
        Self { strict: level == SecurityLevel::Strict, ..self }
    }

    /// Decides a call of `tool`: a per-tool setting wins over the server default.
    pub fn decide(&self, tool: &Tool) -> Decision {
        match self.decide_setting(tool) {
            Decision::Allow(_) if self.strict => Decision::Ask(AskReason::StrictLevel),
            decision => decision,
        }
    }

    fn decide_setting(&self, tool: &Tool) -> Decision {
        match self.overrides.get(tool.name.as_ref()) {
            Some(ApprovalMode::Deny) => Decision::Deny(DenyReason::ToolSetting),
            Some(ApprovalMode::Allow) => Decision::Allow(AllowReason::ToolSetting),
            Some(ApprovalMode::Ask) => Decision::Ask(AskReason::ToolSetting),
            None => match self.default {
                ApprovalMode::Deny => Decision::Deny(DenyReason::ServerDefault),
                ApprovalMode::Allow => Decision::Allow(AllowReason::ServerDefault),
                ApprovalMode::Ask if self.read_only_auto_allow && is_read_only(tool) => {
                    Decision::Allow(AllowReason::ReadOnly)
                }
                ApprovalMode::Ask => Decision::Ask(AskReason::ServerDefault),
            },
        }
    }
}

/// Whether a tool says it only reads and does not also claim to be destructive.
pub fn is_read_only(tool: &Tool) -> bool {
    tool.annotations.as_ref().is_some_and(|a| a.read_only_hint == Some(true) && a.destructive_hint != Some(true))
}

/// Checks, just before a call, that `current` (the tool as the server lists
/// it now; `None` when it is gone) is still the definition that was offered
/// and approved as `approved`.
pub fn check_unchanged(server: &str, tool: &str, approved: &str, current: Option<&Tool>) -> Result<(), ApprovalError> {
    match current {
        Some(current) if ToolFingerprint::of(current).as_str() == approved => Ok(()),
        _ => Err(ApprovalError::ToolChanged { server: server.to_owned(), tool: tool.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{JsonObject, ToolAnnotations};
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
            strict: false,
        }
    }

    #[test]
    fn at_strict_what_would_run_unasked_is_asked_and_deny_stays() {
        let write = tool("write", "writes");
        let read = annotated("read", Some(true), None);
        let strict =
            policy(ApprovalMode::Allow, &[("deleted", ApprovalMode::Deny)], true).at_level(SecurityLevel::Strict);
        assert_eq!(strict.decide(&write), Decision::Ask(AskReason::StrictLevel));
        assert_eq!(strict.decide(&tool("deleted", "d")), Decision::Deny(DenyReason::ToolSetting));
        let strict = policy(ApprovalMode::Ask, &[], true).at_level(SecurityLevel::Strict);
        assert_eq!(strict.decide(&read), Decision::Ask(AskReason::StrictLevel));
        let normal = policy(ApprovalMode::Ask, &[], true).at_level(SecurityLevel::Normal);
        assert_eq!(normal.decide(&read), Decision::Allow(AllowReason::ReadOnly));
    }

    #[test]
    fn server_default_applies_without_override() {
        let t = tool("write", "writes");
        assert_eq!(policy(ApprovalMode::Ask, &[], false).decide(&t), Decision::Ask(AskReason::ServerDefault));
        assert_eq!(policy(ApprovalMode::Allow, &[], false).decide(&t), Decision::Allow(AllowReason::ServerDefault));
        assert_eq!(policy(ApprovalMode::Deny, &[], false).decide(&t), Decision::Deny(DenyReason::ServerDefault));
    }

    #[test]
    fn tool_override_wins_over_server_default() {
        let p = policy(ApprovalMode::Deny, &[("read", ApprovalMode::Allow), ("ask", ApprovalMode::Ask)], false);
        assert_eq!(p.decide(&tool("read", "d")), Decision::Allow(AllowReason::ToolSetting));
        assert_eq!(p.decide(&tool("ask", "d")), Decision::Ask(AskReason::ToolSetting));
        let p = policy(ApprovalMode::Allow, &[("rm", ApprovalMode::Deny)], true);
        assert_eq!(p.decide(&annotated("rm", Some(true), None)), Decision::Deny(DenyReason::ToolSetting));
    }

    #[test]
    fn read_only_defaults_to_allow_only_when_enabled_and_not_destructive() {
        let on = policy(ApprovalMode::Ask, &[], true);
        let off = policy(ApprovalMode::Ask, &[], false);
        let reader = annotated("read", Some(true), None);
        assert_eq!(on.decide(&reader), Decision::Allow(AllowReason::ReadOnly));
        assert_eq!(off.decide(&reader), Decision::Ask(AskReason::ServerDefault));
        let contradictory = annotated("read", Some(true), Some(true));
        assert_eq!(on.decide(&contradictory), Decision::Ask(AskReason::ServerDefault));
        let destructive = annotated("rm", Some(false), Some(true));
        assert_eq!(on.decide(&destructive), Decision::Ask(AskReason::ServerDefault));
        // A per-tool "ask" is not overridden by the read-only hint.
        let p = policy(ApprovalMode::Ask, &[("read", ApprovalMode::Ask)], true);
        assert_eq!(p.decide(&reader), Decision::Ask(AskReason::ToolSetting));
    }

    #[test]
    fn a_server_config_leaves_read_only_tools_asking_until_switched_on() {
        let reader = annotated("read", Some(true), None);
        let mut config = McpServerConfig::stdio("fs", "server", &[]);
        assert_eq!(ApprovalPolicy::from_config(&config).decide(&reader), Decision::Ask(AskReason::ServerDefault));
        config.read_only_auto_allow = true;
        assert_eq!(ApprovalPolicy::from_config(&config).decide(&reader), Decision::Allow(AllowReason::ReadOnly));
    }

    fn args(value: Value) -> JsonObject {
        let Value::Object(map) = value else { panic!("not an object") };
        map
    }

    #[test]
    fn fingerprint_covers_title_schema_and_annotations_but_not_key_order() {
        let base = tool("t", "d");
        let mut schema_changed = base.clone();
        schema_changed.input_schema = Arc::new(args(json!({"type": "object", "properties": {}})));
        assert_ne!(ToolFingerprint::of(&base), ToolFingerprint::of(&schema_changed));
        let hinted = annotated("t", Some(true), None);
        assert_ne!(ToolFingerprint::of(&base), ToolFingerprint::of(&hinted));
        let mut titled = base.clone();
        titled.title = Some("Delete everything".into());
        assert_ne!(ToolFingerprint::of(&base), ToolFingerprint::of(&titled));
        let mut reordered = base.clone();
        reordered.input_schema = Arc::new(args(json!({"properties": {"path": {"type": "string"}}, "type": "object"})));
        assert_eq!(ToolFingerprint::of(&base), ToolFingerprint::of(&reordered));
    }

    #[test]
    fn a_changed_or_missing_tool_is_not_the_one_approved() {
        let before = tool("write", "writes a file");
        let approved = ToolFingerprint::of(&before);
        assert_eq!(check_unchanged("s", "write", approved.as_str(), Some(&before)), Ok(()));
        let after = tool("write", "writes a file and uploads it somewhere");
        let changed = Err(ApprovalError::ToolChanged { server: "s".into(), tool: "write".into() });
        assert_eq!(check_unchanged("s", "write", approved.as_str(), Some(&after)), changed);
        assert_eq!(check_unchanged("s", "write", approved.as_str(), None), changed);
    }
}
