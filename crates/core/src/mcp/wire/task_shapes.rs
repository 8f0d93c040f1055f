//! **rmcp seam (the 2025-11-25 task shapes).** rmcp 3.11 holds neither the
//! client's `tasks` capability nor a request's `task` field (its tasks are a
//! later draft's), so both are handled here, on the wire, where each transport
//! ([`super::pipe`], [`super::http`], [`super::sse`]) reads and writes messages:
//!
//! - [`advertised`] adds `capabilities.tasks` to the `initialize` request,
//!   naming the server requests the client already advertises (sampling,
//!   elicitation);
//! - [`as_custom`] renames a server's request that asks to run as a task to
//!   [`AS_TASK`] + its method, so that rmcp passes it whole, `task` and all,
//!   to the handler's custom requests, which create the task
//!   (`mcp::protocol::client_tasks`).
//!
//! This file goes when rmcp speaks these shapes.

use futures::{StreamExt, TryStreamExt};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{Map, Value, json};

use super::event_stream::EventStream;

/// The prefix of a server's request renamed to reach the handler whole.
pub(crate) const AS_TASK: &str = "patchbay/as-task/";

/// The server requests that may run as tasks: method, and its place under the
/// client's `tasks.requests` capability.
const TASK_REQUESTS: [(&str, &str, &str); 2] =
    [("sampling/createMessage", "sampling", "createMessage"), ("elicitation/create", "elicitation", "create")];

/// `message` with `capabilities.tasks` added when it is an `initialize`
/// request whose client answers sampling or elicitation; `None` otherwise
/// (the message goes out as it is).
pub(crate) fn advertised(message: &ClientJsonRpcMessage) -> Option<Value> {
    let JsonRpcMessage::Request(request) = message else { return None };
    let ClientRequest::InitializeRequest(_) = &request.request else { return None };
    let mut value = serde_json::to_value(message).ok()?;
    let capabilities = value.pointer_mut("/params/capabilities")?.as_object_mut()?;
    let mut requests = Map::new();
    for (_, kind, method) in TASK_REQUESTS {
        if capabilities.contains_key(kind) {
            requests.insert(kind.to_owned(), json!({ method: {} }));
        }
    }
    if requests.is_empty() {
        return None;
    }
    capabilities.insert("tasks".into(), json!({ "list": {}, "cancel": {}, "requests": requests }));
    Some(value)
}

/// A server's request that asks to run as a task (a `task` object in its
/// params), renamed to [`AS_TASK`] + its method; `None` for anything else,
/// which is read as it is. A line's newline is kept.
pub(crate) fn as_custom(raw: &[u8]) -> Option<Vec<u8>> {
    // Every line and event a server sends passes here: only one that names a task is parsed.
    memchr::memmem::find(raw, b"\"task\"")?;
    let mut message: Value = serde_json::from_slice(raw).ok()?;
    let method = message.get("method")?.as_str()?;
    let asks = TASK_REQUESTS.iter().any(|(m, ..)| *m == method)
        && message.get("id").is_some()
        && message.pointer("/params/task").is_some_and(Value::is_object);
    if !asks {
        return None;
    }
    message["method"] = Value::String(format!("{AS_TASK}{method}"));
    let mut out = serde_json::to_vec(&message).ok()?;
    if raw.ends_with(b"\n") {
        out.push(b'\n');
    }
    Some(out)
}

/// `events` with each server request in them that asks to run as a task
/// renamed ([`as_custom`]).
pub(crate) fn renamed_events(events: EventStream) -> EventStream {
    events
        .map_ok(|mut event| {
            if let Some(renamed) = event.data.as_deref().and_then(|data| as_custom(data.as_bytes())) {
                event.data = String::from_utf8(renamed).ok();
            }
            event
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        ClientCapabilities, ClientConfig, ElicitationCapability, Implementation, InitializeRequest, NumberOrString,
        PingRequest, SamplingCapability,
    };

    use super::*;

    fn initialize(capabilities: ClientCapabilities) -> ClientJsonRpcMessage {
        let info = ClientConfig::new(capabilities, Implementation::new("t", "1"));
        ClientJsonRpcMessage::request(
            ClientRequest::InitializeRequest(InitializeRequest::new(info)),
            NumberOrString::Number(0),
        )
    }

    #[test]
    fn initialize_advertises_tasks_for_the_requests_the_client_answers() {
        let mut both = ClientCapabilities::default();
        both.sampling = Some(SamplingCapability::default());
        both.elicitation = Some(ElicitationCapability::default());
        let sent = advertised(&initialize(both)).unwrap();
        let tasks = &sent["params"]["capabilities"]["tasks"];
        assert_eq!(tasks["requests"], json!({"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}));
        assert_eq!((&tasks["list"], &tasks["cancel"]), (&json!({}), &json!({})));
        // The rest of the request is as rmcp wrote it.
        assert_eq!(sent["method"], "initialize");
        assert!(sent["params"]["capabilities"]["sampling"].is_object());

        let mut sampling = ClientCapabilities::default();
        sampling.sampling = Some(SamplingCapability::default());
        let sent = advertised(&initialize(sampling)).unwrap();
        assert_eq!(sent["params"]["capabilities"]["tasks"]["requests"], json!({"sampling": {"createMessage": {}}}));
        // Neither answered: nothing to run as a task; other messages go as they are.
        assert!(advertised(&initialize(ClientCapabilities::default())).is_none());
        let ping = ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(PingRequest::default()),
            NumberOrString::Number(1),
        );
        assert!(advertised(&ping).is_none());
    }

    #[test]
    fn only_a_request_that_asks_for_a_task_is_renamed() {
        let asks = br#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"task":{"ttl":1000},"messages":[],"maxTokens":5}}
"#;
        let renamed = as_custom(asks).unwrap();
        assert!(renamed.ends_with(b"}\n"));
        let renamed: Value = serde_json::from_slice(&renamed).unwrap();
        assert_eq!(renamed["method"], "patchbay/as-task/sampling/createMessage");
        assert_eq!((renamed["id"].clone(), renamed["params"]["task"]["ttl"].clone()), (json!(3), json!(1000)));
        let elicit = br#"{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{"task":{},"message":"?"}}"#;
        assert!(as_custom(elicit).is_some_and(|r| !r.ends_with(b"\n")));

        for kept in [
            // Without a task, as a notification, another method, a task that is not an object, a word in a text.
            &br#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}"#[..],
            br#"{"jsonrpc":"2.0","method":"elicitation/create","params":{"task":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"task":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"task":true}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"task\""}]}}"#,
        ] {
            assert!(as_custom(kept).is_none(), "{}", String::from_utf8_lossy(kept));
        }
    }
}
