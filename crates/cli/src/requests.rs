//! How the CLI answers MCP servers' sampling and elicitation requests: on
//! the terminal ([`TerminalRequests`], installed in the core's host).
//!
//! On a terminal, a sampling request is shown (server, system prompt,
//! messages) and run on the chosen model only after the user says yes; the
//! answer is shown and sent only after a second yes. A form elicitation is
//! asked field by field from its flat schema; a URL elicitation prints the URL
//! and waits for Enter. Prompts go to stderr, answers come from stdin. Without
//! a terminal every request is refused with the reason, which the server gets;
//! in a scheduled run ([`TerminalRequests::unattended`]) too, and each refusal
//! is kept for the run's record.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use patchbay_core::agent::resolve_provider;
use patchbay_core::config::ConfigStore;
use patchbay_core::llm::Provider;
use patchbay_core::mcp::{
    ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, Refusal, SamplingReply, SamplingRequest,
    SamplingRole, ServerRequests, sample_with,
};
use patchbay_core::schedules::RunNote;
use patchbay_core::secrets::SecretStore;
use patchbay_core::store::Store;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::model::provider_for;

/// The model that answers sampling requests.
pub struct SamplingModel {
    pub provider: Arc<dyn Provider>,
    /// The provider profile's name, to show.
    pub provider_name: String,
    pub model: String,
}

impl SamplingModel {
    /// The first configured provider's default model (or the environment's),
    /// as the app uses; why there is none otherwise.
    pub fn default_for(store: &Store, secrets: &dyn SecretStore) -> Result<Self, String> {
        let config = ConfigStore::new(store.clone());
        let resolved =
            resolve_provider(&config, secrets, None, &|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
        let model = resolved.profile.default_model.clone();
        if model.is_empty() {
            return Err(format!("provider {} has no default model", resolved.profile.name));
        }
        let provider = provider_for(&resolved, secrets).map_err(|e| format!("{e:#}"))?;
        Ok(Self { provider, provider_name: resolved.profile.name, model })
    }
}

/// Reads one line of stdin; `None` at end of input.
async fn read_line() -> Option<String> {
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    })
    .await;
    line.ok().flatten()
}

/// Prints `prompt` on stderr and reads the answer; `None` at end of input.
async fn ask(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    read_line().await
}

fn yes(answer: Option<&str>) -> bool {
    matches!(answer.map(str::trim), Some("y" | "Y" | "yes"))
}

/// Answers servers' requests on the terminal (see the module docs).
pub struct TerminalRequests {
    /// Whether stdin is a terminal to ask on.
    terminal: bool,
    /// The model for sampling, or why there is none.
    model: Result<SamplingModel, String>,
    /// One request on the terminal at a time; held while one is asked.
    asking: Arc<tokio::sync::Mutex<()>>,
    /// A scheduled run's record of what it refused, when this is one.
    refused: Option<Refusals>,
}

/// What an unattended run refused.
pub type Refusals = Arc<std::sync::Mutex<Vec<RunNote>>>;

/// Why a request was refused without a terminal.
const NO_TERMINAL: &str = "there is no terminal to ask the user (stdin is not a terminal)";
/// Why a request was refused in a scheduled run.
const UNATTENDED: &str = "this is a scheduled run, with nobody to answer";

impl TerminalRequests {
    /// Asks on the terminal when stdin is one; `model` answers sampling.
    pub fn new(model: Result<SamplingModel, String>) -> Self {
        Self { terminal: std::io::stdin().is_terminal(), model, asking: Arc::default(), refused: None }
    }

    /// Refuses every request, noting each in `refused`: a scheduled run never waits for a human.
    pub fn unattended(refused: Refusals) -> Self {
        Self { terminal: false, model: Err(UNATTENDED.into()), asking: Arc::default(), refused: Some(refused) }
    }

    /// Why a request (`what`) is refused here without asking, noting it in a scheduled run's
    /// record as `note`.
    fn refuse(&self, what: &str, note: RunNote) -> &'static str {
        let reason = if self.refused.is_some() { UNATTENDED } else { NO_TERMINAL };
        eprintln!("note: refused {what}: {reason}");
        if let Some(refused) = &self.refused {
            refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(note);
        }
        reason
    }

    /// Held while a request is asked on the terminal: what else would print
    /// there (a call's progress) waits until it is free, so that it never
    /// lands in the middle of a question.
    pub fn terminal(&self) -> Arc<tokio::sync::Mutex<()>> {
        self.asking.clone()
    }

    async fn review_sampling(
        &self,
        request: &SamplingRequest,
        ct: &CancellationToken,
    ) -> Result<SamplingReply, Refusal> {
        let model = self.model.as_ref().map_err(|why| Refusal::new(format!("no model to answer with: {why}")))?;
        eprintln!("\n[{}] asks for a model completion (up to {} tokens).", request.server, request.max_tokens);
        if let Some(system) = request.system_prompt.as_deref().filter(|s| !s.is_empty()) {
            eprintln!("  system: {system}");
        }
        for message in &request.messages {
            let role = if message.role == SamplingRole::User { "user" } else { "assistant" };
            eprintln!("  {role}: {}", message.text());
        }
        let prompt = format!("Run it on {}/{}? [y/N]: ", model.provider_name, model.model);
        if !yes(ask(&prompt).await.as_deref()) {
            return Err(Refusal::new("the user declined the sampling request"));
        }
        let reply = sample_with(model.provider.as_ref(), &model.model, request, ct.clone())
            .await
            .map_err(|e| Refusal::new(format!("the model failed: {e}")))?;
        eprintln!("  reply ({}): {}", reply.model, reply.text);
        if !yes(ask(&format!("Send this reply to {}? [y/N]: ", request.server)).await.as_deref()) {
            return Err(Refusal::new("the user did not send the model's reply"));
        }
        Ok(reply)
    }

    async fn answer_elicitation(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        eprintln!("\n[{}] asks: {}", request.server, request.message);
        match &request.kind {
            ElicitationKind::Url { url, .. } => {
                eprintln!("  Open {url}");
                match ask("Press Enter when done (or type n to decline): ").await {
                    None => ElicitationAnswer::Cancel,
                    Some(a) if a.trim().eq_ignore_ascii_case("n") => ElicitationAnswer::Decline,
                    Some(_) => ElicitationAnswer::Accept { content: None },
                }
            }
            ElicitationKind::Form { schema } => {
                match ask("Answer? [y/N]: ").await {
                    None => return ElicitationAnswer::Cancel,
                    answer if !yes(answer.as_deref()) => return ElicitationAnswer::Decline,
                    _ => {}
                }
                match fill_form(schema).await {
                    Some(content) => ElicitationAnswer::Accept { content: Some(content) },
                    None => ElicitationAnswer::Cancel,
                }
            }
            _ => ElicitationAnswer::Decline,
        }
    }
}

#[async_trait::async_trait]
impl ServerRequests for TerminalRequests {
    /// Advertised even without a terminal, so a server's tool runs and gets
    /// the reason instead of not being offered at all. Tools' views are not:
    /// a terminal cannot show them.
    fn supports(&self) -> HookSupport {
        HookSupport { views: false, ..HookSupport::ALL }
    }

    async fn sample(&self, request: SamplingRequest, ct: CancellationToken) -> Result<SamplingReply, Refusal> {
        if !self.terminal {
            let note = RunNote::RefusedSampling { server: request.server.clone() };
            return Err(Refusal::new(self.refuse(&format!("{}'s sampling request", request.server), note)));
        }
        let _terminal = self.asking.lock().await;
        tokio::select! {
            () = ct.cancelled() => Err(Refusal::new("the server withdrew the request")),
            reply = self.review_sampling(&request, &ct) => reply,
        }
    }

    async fn elicit(&self, request: ElicitationRequest, ct: CancellationToken) -> ElicitationAnswer {
        if !self.terminal {
            let note = RunNote::RefusedInput { server: request.server.clone() };
            self.refuse(&format!("{}'s request for input", request.server), note);
            return ElicitationAnswer::Decline;
        }
        let _terminal = self.asking.lock().await;
        tokio::select! {
            () = ct.cancelled() => ElicitationAnswer::Cancel,
            answer = self.answer_elicitation(&request) => answer,
        }
    }
}

/// What a form field holds.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these (value, label).
    Choice(Vec<(String, String)>),
    /// Some of these (value, label).
    Choices(Vec<(String, String)>),
}

/// One field of a flat elicitation schema.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    title: String,
    description: Option<String>,
    kind: Kind,
    default: Option<Value>,
    required: bool,
}

/// The choices of an `enum` (labels from `enumNames`) or a `oneOf`/`anyOf` of `const`s.
fn choices(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_owned();
                    let label = names.and_then(|n| n.get(i)).and_then(Value::as_str).unwrap_or(&value).to_owned();
                    Some((value, label))
                })
                .collect(),
        );
    }
    let options = schema["oneOf"].as_array().or_else(|| schema["anyOf"].as_array())?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let value = o["const"].as_str()?.to_owned();
                let label = o["title"].as_str().unwrap_or(&value).to_owned();
                Some((value, label))
            })
            .collect(),
    )
}

/// The fields of a flat schema, in its order; fields of other types are left out.
fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else { return Vec::new() };
    properties
        .iter()
        .filter_map(|(name, p)| {
            let kind = match p["type"].as_str() {
                Some("string") => choices(p).map_or(Kind::Text, Kind::Choice),
                Some("number") => Kind::Number,
                Some("integer") => Kind::Integer,
                Some("boolean") => Kind::Boolean,
                Some("array") => Kind::Choices(choices(&p["items"])?),
                _ => return None,
            };
            Some(Field {
                name: name.clone(),
                title: p["title"].as_str().unwrap_or(name).to_owned(),
                description: p["description"].as_str().map(str::to_owned),
                kind,
                default: p.get("default").cloned(),
                required: required.contains(&name.as_str()),
            })
        })
        .collect()
}

/// A choice picked by number or by value.
fn pick(options: &[(String, String)], answer: &str) -> Option<String> {
    let answer = answer.trim();
    if let Ok(n) = answer.parse::<usize>() {
        return options.get(n.checked_sub(1)?).map(|(v, _)| v.clone());
    }
    options.iter().find(|(v, l)| v == answer || l.eq_ignore_ascii_case(answer)).map(|(v, _)| v.clone())
}

/// The value typed for `field`, or why it is not one.
fn parse(field: &Field, answer: &str) -> Result<Value, String> {
    let answer = answer.trim();
    match &field.kind {
        Kind::Text => Ok(Value::String(answer.to_owned())),
        Kind::Number => answer
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "type a number".to_owned()),
        Kind::Integer => answer.parse::<i64>().map(Value::from).map_err(|_| "type a whole number".to_owned()),
        Kind::Boolean => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("type y or n".to_owned()),
        },
        Kind::Choice(options) => {
            pick(options, answer).map(Value::String).ok_or_else(|| "pick one of the list".to_owned())
        }
        Kind::Choices(options) => answer
            .split(',')
            .map(|a| pick(options, a).map(Value::String))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array)
            .ok_or_else(|| "pick from the list, separated by commas".to_owned()),
    }
}

fn prompt_for(field: &Field) -> String {
    let mut prompt = format!("  {}", field.title);
    if let Some(description) = &field.description {
        prompt.push_str(&format!(" ({description})"));
    }
    if let Kind::Choice(options) | Kind::Choices(options) = &field.kind {
        let list: Vec<String> = options.iter().enumerate().map(|(i, (_, l))| format!("{}) {l}", i + 1)).collect();
        prompt.push_str(&format!(" [{}]", list.join(", ")));
    }
    if field.kind == Kind::Boolean {
        prompt.push_str(" [y/n]");
    }
    match (&field.default, field.required) {
        (Some(default), _) => prompt.push_str(&format!(" (Enter: {default})")),
        (None, true) => prompt.push_str(" (required)"),
        (None, false) => prompt.push_str(" (Enter: skip)"),
    }
    prompt.push_str(": ");
    prompt
}

/// Asks every field; `None` when input ends (the user cancelled).
async fn fill_form(schema: &Value) -> Option<Map<String, Value>> {
    let mut content = Map::new();
    for field in fields(schema) {
        loop {
            let answer = ask(&prompt_for(&field)).await?;
            if answer.trim().is_empty() {
                match (&field.default, field.required) {
                    (Some(default), _) => {
                        content.insert(field.name.clone(), default.clone());
                    }
                    (None, true) => {
                        eprintln!("  {} is required", field.title);
                        continue;
                    }
                    (None, false) => {}
                }
                break;
            }
            match parse(&field, &answer) {
                Ok(value) => {
                    content.insert(field.name.clone(), value);
                    break;
                }
                Err(why) => eprintln!("  {why}"),
            }
        }
    }
    Some(content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flat_schema_becomes_typed_fields_and_answers_become_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "age": {"type": "integer", "default": 42},
                "ratio": {"type": "number"},
                "ok": {"type": "boolean"},
                "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cat", "Dog"]},
                "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
                "tools": {"type": "array", "items": {"enum": ["Guitar", "Piano"]}},
                "nested": {"type": "object"}
            },
            "required": ["name"]
        });
        let fields = fields(&schema);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert!(!names.contains(&"nested"), "{names:?}");
        let field = |n: &str| fields.iter().find(|f| f.name == n).unwrap();
        assert!(field("name").required);
        assert_eq!(field("age").default, Some(json!(42)));
        assert_eq!(parse(field("age"), "7"), Ok(json!(7)));
        assert!(parse(field("age"), "7.5").is_err());
        assert_eq!(parse(field("ratio"), "2.5"), Ok(json!(2.5)));
        assert_eq!(parse(field("ok"), "Y"), Ok(json!(true)));
        assert!(parse(field("ok"), "maybe").is_err());
        assert_eq!(parse(field("pet"), "2"), Ok(json!("p2")));
        assert_eq!(parse(field("pet"), "cat"), Ok(json!("p1")));
        assert!(parse(field("pet"), "3").is_err());
        assert_eq!(parse(field("hero"), "h1"), Ok(json!("h1")));
        assert_eq!(parse(field("tools"), "2, Guitar"), Ok(json!(["Piano", "Guitar"])));
        assert!(prompt_for(field("pet")).contains("1) Cat, 2) Dog"));
    }
}
