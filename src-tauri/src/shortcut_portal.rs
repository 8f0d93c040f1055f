//! A global shortcut through the desktop's GlobalShortcuts portal
//! (`org.freedesktop.portal.GlobalShortcuts`), for sessions where an app
//! cannot take a key itself (Wayland's). The desktop owns the key: it may ask
//! the user first, bind another key than the one proposed, or let the user
//! change it later in its own settings; Patchbay hears `Activated`.
//!
//! KDE Plasma 5.27 binds the shortcuts given when the session is made (its
//! `shortcuts` option) and answers `BindShortcuts` only by opening its
//! settings; newer portals bind on `BindShortcuts`, asking the user. So the
//! shortcut goes with the session, and `BindShortcuts` follows only when the
//! session's answer did not hold it already. The session lives until [`hold`]
//! is cancelled, and is then closed.

use std::collections::HashMap;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

/// Why the portal did not bind the shortcut.
#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error("the desktop offers no GlobalShortcuts portal ({0})")]
    NoPortal(String),
    #[error("the desktop's shortcut dialog was cancelled")]
    Cancelled,
    #[error("the desktop's GlobalShortcuts portal refused to {0}")]
    Refused(&'static str),
    #[error("the desktop's GlobalShortcuts portal answered what Patchbay cannot read: {0}")]
    Unreadable(String),
    #[error("the session bus failed: {0}")]
    Bus(#[from] zbus::Error),
}

#[zbus::proxy(
    interface = "org.freedesktop.portal.GlobalShortcuts",
    default_service = "org.freedesktop.portal.Desktop",
    default_path = "/org/freedesktop/portal/desktop"
)]
trait GlobalShortcuts {
    fn create_session(&self, options: HashMap<&str, Value<'_>>) -> zbus::Result<OwnedObjectPath>;

    fn bind_shortcuts(
        &self,
        session_handle: &ObjectPath<'_>,
        shortcuts: &[(&str, HashMap<&str, Value<'_>>)],
        parent_window: &str,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;

    #[zbus(signal)]
    fn activated(
        &self,
        session_handle: ObjectPath<'_>,
        shortcut_id: &str,
        timestamp: u64,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<()>;

    #[zbus(property, name = "version")]
    fn version(&self) -> zbus::Result<u32>;
}

#[zbus::proxy(interface = "org.freedesktop.portal.Request", default_service = "org.freedesktop.portal.Desktop")]
trait Request {
    #[zbus(signal)]
    fn response(&self, response: u32, results: HashMap<String, OwnedValue>) -> zbus::Result<()>;
}

#[zbus::proxy(interface = "org.freedesktop.portal.Session", default_service = "org.freedesktop.portal.Desktop")]
trait Session {
    fn close(&self) -> zbus::Result<()>;
}

/// The one shortcut's id in Patchbay's session.
const SHORTCUT_ID: &str = "quick-ask";

/// The session's own part of its handle, the same at every start: KDE Plasma 5.27 names the
/// shortcut's entry in its settings after it, so a key the user chose there is kept (a new
/// name each time would leave an entry behind at every start, and lose the user's key).
const SESSION_TOKEN: &str = "patchbay_quick_ask";

/// What the portal made of the shortcut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// How the desktop says the shortcut is pressed ("Ctrl+Alt+Space"), if it says.
    pub trigger: Option<String>,
}

/// Binds `trigger` (the XDG shortcuts spec's form, `CTRL+ALT+space`, or `None`
/// to let the desktop ask) as "Quick ask", tells `bound` what the desktop made
/// of it, then calls `activated` at each press until `cancel`, when the session
/// is closed. Returns early with the reason the portal gave when it did not bind.
pub async fn hold(
    trigger: Option<String>,
    bound: impl FnOnce(Bound) + Send,
    activated: impl Fn() + Send,
    cancel: CancellationToken,
) -> Result<(), PortalError> {
    // Each hold has a connection of its own: when it goes, the portal ends its session too.
    let connection = zbus::Connection::session().await?;
    let portal = GlobalShortcutsProxy::new(&connection).await?;
    // Listening before the shortcut is bound: a press right after cannot be missed.
    let mut presses = portal.receive_activated().await?;
    let (session, held) = tokio::select! {
        () = cancel.cancelled() => return Ok(()),
        made = open(&connection, &portal, trigger) => made?,
    };
    bound(Bound { trigger: held });
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            press = presses.next() => {
                let Some(press) = press else { break };
                if let Ok(args) = press.args()
                    && args.session_handle == session.as_ref()
                    && args.shortcut_id == SHORTCUT_ID
                {
                    activated();
                }
            }
        }
    }
    close(&connection, &session).await;
    Ok(())
}

/// Makes the session with the shortcut, and binds it where making it did not (the
/// desktop may ask the user): the session, and the key as the desktop names it.
async fn open(
    connection: &zbus::Connection,
    portal: &GlobalShortcutsProxy<'_>,
    trigger: Option<String>,
) -> Result<(OwnedObjectPath, Option<String>), PortalError> {
    // The property answers only where the portal, and a backend of it, runs.
    portal.version().await.map_err(|e| PortalError::NoPortal(e.to_string()))?;
    let mut shortcut: HashMap<&str, Value<'_>> = HashMap::from([("description", Value::from("Quick ask"))]);
    if let Some(trigger) = &trigger {
        shortcut.insert("preferred_trigger", Value::from(trigger.as_str()));
    }
    let shortcuts = [(SHORTCUT_ID, shortcut)];

    let token = handle_token();
    let options = HashMap::from([
        ("handle_token", Value::from(token.as_str())),
        ("session_handle_token", Value::from(SESSION_TOKEN)),
        ("shortcuts", Value::from(shortcuts.to_vec())),
    ]);
    let created = request(connection, &token, portal.create_session(options), "create a session").await?;
    let session = session_handle(&created)?;
    if let Some(held) = trigger_description(&created) {
        return Ok((session, Some(held)));
    }
    let token = handle_token();
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    let path = session.as_ref();
    let binding = portal.bind_shortcuts(&path, &shortcuts, "", options);
    let results = request(connection, &token, binding, "bind the shortcut").await?;
    Ok((session, trigger_description(&results)))
}

/// Ends the session: the desktop lets the key go.
async fn close(connection: &zbus::Connection, session: &OwnedObjectPath) {
    let closed = async { SessionProxy::builder(connection).path(session.clone())?.build().await?.close().await };
    if let Err(e) = closed.await {
        tracing::debug!("the quick-ask shortcut's portal session did not close: {e}");
    }
}

/// A token for a request's or session's handle: unique enough within this connection.
fn handle_token() -> String {
    format!("patchbay_{}", uuid::Uuid::new_v4().simple())
}

/// Makes the portal request `call` and waits for its `Response` (subscribed to
/// before the call, on the handle the token makes, so none is missed).
async fn request(
    connection: &zbus::Connection,
    token: &str,
    call: impl std::future::Future<Output = zbus::Result<OwnedObjectPath>>,
    what: &'static str,
) -> Result<HashMap<String, OwnedValue>, PortalError> {
    let sender = connection
        .unique_name()
        .ok_or_else(|| PortalError::Unreadable("the bus gave Patchbay no name".to_owned()))?
        .trim_start_matches(':')
        .replace('.', "_");
    let path = format!("/org/freedesktop/portal/desktop/request/{sender}/{token}");
    let request = RequestProxy::builder(connection).path(path)?.build().await?;
    let mut responses = request.receive_response().await?;
    call.await.map_err(|e| match e {
        zbus::Error::MethodError(..) => PortalError::NoPortal(e.to_string()),
        e => PortalError::Bus(e),
    })?;
    let response = responses.next().await.ok_or(PortalError::Refused(what))?;
    let args = response.args()?;
    match args.response {
        0 => Ok(args.results),
        1 => Err(PortalError::Cancelled),
        _ => Err(PortalError::Refused(what)),
    }
}

/// The session's handle from `CreateSession`'s results (a string by the spec, a path in some portals).
fn session_handle(results: &HashMap<String, OwnedValue>) -> Result<OwnedObjectPath, PortalError> {
    let value = results
        .get("session_handle")
        .ok_or_else(|| PortalError::Unreadable("no session_handle in the session's results".to_owned()))?;
    let text = match &**value {
        Value::Str(s) => s.to_string(),
        Value::ObjectPath(p) => p.to_string(),
        other => return Err(PortalError::Unreadable(format!("session_handle is {other}"))),
    };
    OwnedObjectPath::try_from(text).map_err(|e| PortalError::Unreadable(format!("session_handle: {e}")))
}

/// The `trigger_description` of Patchbay's shortcut in a `shortcuts` result (`a(sa{sv})`).
fn trigger_description(results: &HashMap<String, OwnedValue>) -> Option<String> {
    let Value::Array(shortcuts) = &**results.get("shortcuts")? else { return None };
    shortcuts.iter().find_map(|shortcut| {
        let Value::Structure(fields) = shortcut else { return None };
        let [Value::Str(id), Value::Dict(info)] = fields.fields() else { return None };
        if id.as_str() != SHORTCUT_ID {
            return None;
        }
        let described: Option<Value<'_>> = info.get(&"trigger_description").ok().flatten();
        match described {
            Some(Value::Str(text)) if !text.is_empty() => Some(text.to_string()),
            _ => None,
        }
    })
}

/// A shortcut in the form the XDG shortcuts spec gives the portal
/// (`CTRL+ALT+space`): the modifiers, then the key's XKB name. `None` for a
/// key without a name here; the desktop then asks the user for one.
pub fn xdg_trigger(shortcut: &tauri_plugin_global_shortcut::Shortcut) -> Option<String> {
    use tauri_plugin_global_shortcut::{Code, Modifiers};
    let name = shortcut.key.to_string();
    let key = if let Some(letter) = name.strip_prefix("Key") {
        letter.to_ascii_lowercase()
    } else if let Some(digit) = name.strip_prefix("Digit") {
        digit.to_owned()
    } else if name.len() <= 3 && name.starts_with('F') && name[1..].parse::<u8>().is_ok() {
        name
    } else {
        let named = match shortcut.key {
            Code::Space => "space",
            Code::Enter => "Return",
            Code::Tab => "Tab",
            Code::Escape => "Escape",
            Code::Backspace => "BackSpace",
            Code::Delete => "Delete",
            Code::Insert => "Insert",
            Code::Home => "Home",
            Code::End => "End",
            Code::PageUp => "Prior",
            Code::PageDown => "Next",
            Code::ArrowUp => "Up",
            Code::ArrowDown => "Down",
            Code::ArrowLeft => "Left",
            Code::ArrowRight => "Right",
            Code::Minus => "minus",
            Code::Equal => "equal",
            Code::Comma => "comma",
            Code::Period => "period",
            Code::Slash => "slash",
            Code::Backslash => "backslash",
            Code::Semicolon => "semicolon",
            Code::Quote => "apostrophe",
            Code::BracketLeft => "bracketleft",
            Code::BracketRight => "bracketright",
            Code::Backquote => "grave",
            _ => return None,
        };
        named.to_owned()
    };
    let modifiers = [
        (Modifiers::CONTROL, "CTRL"),
        (Modifiers::ALT, "ALT"),
        (Modifiers::SHIFT, "SHIFT"),
        (Modifiers::SUPER, "LOGO"),
        (Modifiers::META, "LOGO"),
    ];
    let mut parts: Vec<&str> = modifiers.iter().filter(|(m, _)| shortcut.mods.contains(*m)).map(|(_, n)| *n).collect();
    parts.dedup();
    parts.push(&key);
    Some(parts.join("+"))
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use tauri_plugin_global_shortcut::Shortcut;

    use super::*;

    #[test]
    fn shortcuts_are_written_as_the_xdg_shortcuts_spec_reads_them() {
        let trigger = |text: &str| xdg_trigger(&Shortcut::from_str(text).unwrap());
        assert_eq!(trigger("Ctrl+Alt+Space").as_deref(), Some("CTRL+ALT+space"));
        assert_eq!(trigger("Shift+Super+K").as_deref(), Some("SHIFT+LOGO+k"));
        assert_eq!(trigger("Ctrl+Shift+1").as_deref(), Some("CTRL+SHIFT+1"));
        assert_eq!(trigger("Alt+F12").as_deref(), Some("ALT+F12"));
        assert_eq!(trigger("Ctrl+PageDown").as_deref(), Some("CTRL+Next"));
        assert_eq!(trigger("Ctrl+Enter").as_deref(), Some("CTRL+Return"));
        // A key without an XKB name here: the desktop asks for one.
        assert_eq!(trigger("Ctrl+NumpadAdd"), None);
    }

    #[test]
    fn the_trigger_the_desktop_chose_is_read_from_its_answer() {
        let info: HashMap<&str, Value<'_>> = HashMap::from([
            ("description", Value::from("Quick ask")),
            ("trigger_description", Value::from("Ctrl+Alt+J")),
        ]);
        let other: HashMap<&str, Value<'_>> = HashMap::from([("trigger_description", Value::from("Meta+X"))]);
        let shortcuts = Value::from(vec![("other", other), (SHORTCUT_ID, info)]);
        let results = HashMap::from([("shortcuts".to_owned(), OwnedValue::try_from(shortcuts).unwrap())]);
        assert_eq!(trigger_description(&results).as_deref(), Some("Ctrl+Alt+J"));
        assert_eq!(trigger_description(&HashMap::new()), None);

        let handle = |v: Value<'_>| HashMap::from([("session_handle".to_owned(), OwnedValue::try_from(v).unwrap())]);
        let path = "/org/freedesktop/portal/desktop/session/1_7/s";
        assert_eq!(session_handle(&handle(Value::from(path))).unwrap().as_str(), path);
        assert_eq!(session_handle(&handle(Value::from(ObjectPath::try_from(path).unwrap()))).unwrap().as_str(), path);
        assert!(matches!(session_handle(&handle(Value::from(3u32))), Err(PortalError::Unreadable(_))));
    }
}
