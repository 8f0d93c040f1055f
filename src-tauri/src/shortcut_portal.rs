//! A global shortcut through the desktop's GlobalShortcuts portal
//! (`org.freedesktop.portal.GlobalShortcuts`), for sessions where an app
//! cannot take a key itself (Wayland's). The desktop owns the key: it may ask
//! the user first, bind another key than the one proposed, or let the user
//! change it later in its own settings; Patchbay hears `Activated`, and
//! `ShortcutsChanged` when the key changes.
//!
//! `BindShortcuts` is asked only for a shortcut the session does not hold
//! already (some desktops open their settings or a dialog at each call): the
//! session's own answer (KDE Plasma 5.27 behind xdg-desktop-portal 1.16 binds
//! the shortcuts given with it, its `shortcuts` option) or `ListShortcuts`
//! (a desktop that remembers the app's shortcut) may hold it. The session
//! lives until [`hold`] is cancelled, and is then closed.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

/// Why the portal does not hold the shortcut.
#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error("the desktop offers no GlobalShortcuts portal")]
    NoPortal,
    #[error(
        "the desktop's GlobalShortcuts portal does not know which app Patchbay is (started from a terminal?); start Patchbay from its menu entry"
    )]
    NotAllowed,
    #[error("the desktop's shortcut dialog was cancelled")]
    Cancelled,
    #[error("the desktop's GlobalShortcuts portal refused to {0}")]
    Refused(&'static str),
    #[error("the desktop did not take the shortcut")]
    NotTaken,
    #[error("the desktop ended the shortcut's session")]
    Closed,
    #[error("the desktop's GlobalShortcuts portal stopped")]
    Gone,
    #[error("the desktop's GlobalShortcuts portal answered what Patchbay cannot read: {0}")]
    Unreadable(String),
    #[error("the session bus failed: {0}")]
    Bus(#[from] zbus::Error),
}

/// A shortcut list as the portal gives it (`a(sa{sv})`): ids and what is said of them.
type Shortcuts = Vec<(String, HashMap<String, OwnedValue>)>;

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

    fn list_shortcuts(
        &self,
        session_handle: &ObjectPath<'_>,
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

    #[zbus(signal)]
    fn shortcuts_changed(&self, session_handle: ObjectPath<'_>, shortcuts: Shortcuts) -> zbus::Result<()>;

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

    #[zbus(signal)]
    fn closed(&self, details: HashMap<String, OwnedValue>) -> zbus::Result<()>;
}

/// The one shortcut's id in Patchbay's session.
const SHORTCUT_ID: &str = "quick-ask";

/// The session's own part of its handle, the same at every start: KDE Plasma names the
/// shortcut's entry in its settings after it, so a key the user chose there is kept (a new
/// name each time would leave an entry behind at every start, and lose the user's key).
const SESSION_TOKEN: &str = "patchbay_quick_ask";

/// How long closing a session may take before the next one opens anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Binds `trigger` (the XDG shortcuts spec's form, `CTRL+ALT+space`, or `None`
/// to let the desktop ask) as "Quick ask", tells `held` the key as the desktop
/// names it (`None`: the desktop holds the shortcut with no key yet) then and at
/// each change, and calls `activated` at each press, until `cancel`, when the
/// session is closed. Returns why when the desktop does not, or no longer, holds it.
pub async fn hold(
    trigger: Option<String>,
    held: impl Fn(Option<String>) + Send,
    activated: impl Fn() + Send,
    cancel: CancellationToken,
) -> Result<(), PortalError> {
    let opening = async {
        // A connection of its own: when it goes, the portal ends its session too.
        let connection = zbus::Connection::session().await?;
        let portal = GlobalShortcutsProxy::new(&connection).await?;
        // Listening before the shortcut is bound: a press right after cannot be missed.
        let presses = portal.receive_activated().await?;
        let changes = portal.receive_shortcuts_changed().await?;
        let owners = portal.inner().receive_owner_changed().await?;
        let (session, key) = open(&connection, &portal, trigger).await?;
        let proxy = SessionProxy::builder(&connection).path(session.clone())?.build().await?;
        let ended = proxy.receive_closed().await?;
        Ok::<_, PortalError>((connection, proxy, session, key, presses, changes, owners, ended))
    };
    let (connection, proxy, session, key, mut presses, mut changes, mut owners, mut ended) = tokio::select! {
        () = cancel.cancelled() => return Ok(()),
        opened = opening => opened?,
    };
    held(key);
    let outcome = loop {
        tokio::select! {
            () = cancel.cancelled() => break Ok(()),
            press = presses.next() => {
                let Some(press) = press else { break Err(PortalError::Gone) };
                if let Ok(args) = press.args()
                    && args.session_handle == session.as_ref()
                    && args.shortcut_id == SHORTCUT_ID
                {
                    activated();
                }
            }
            change = changes.next() => {
                let Some(change) = change else { break Err(PortalError::Gone) };
                if let Ok(args) = change.args()
                    && args.session_handle == session.as_ref()
                {
                    match key_in(&args.shortcuts) {
                        Some(key) => held(key),
                        None => break Err(PortalError::NotTaken),
                    }
                }
            }
            owner = owners.next() => {
                if owner.is_none_or(|o| o.is_none()) {
                    break Err(PortalError::Gone);
                }
            }
            _ = ended.next() => break Err(PortalError::Closed),
        }
    };
    if outcome.is_ok()
        && let Err(e) = tokio::time::timeout(CLOSE_WAIT, proxy.close()).await.unwrap_or(Ok(()))
    {
        tracing::debug!("the quick-ask shortcut's portal session did not close: {e}");
    }
    drop(connection);
    outcome
}

/// Makes the session with the shortcut, and binds it where the session does not hold it
/// already (the desktop may ask the user): the session, and the key as the desktop names it.
async fn open(
    connection: &zbus::Connection,
    portal: &GlobalShortcutsProxy<'_>,
    trigger: Option<String>,
) -> Result<(OwnedObjectPath, Option<String>), PortalError> {
    // The property answers only where the portal, and a backend of it, runs.
    portal.version().await.map_err(|e| refusal(e, "say its version"))?;
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
    if let Some(key) = listed_key(&created)? {
        return Ok((session, key));
    }
    let path = session.as_ref();
    let token = handle_token();
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    let listed = request(connection, &token, portal.list_shortcuts(&path, options), "list the shortcuts").await?;
    if let Some(key) = listed_key(&listed)? {
        return Ok((session, key));
    }
    let token = handle_token();
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    let binding = portal.bind_shortcuts(&path, &shortcuts, "", options);
    let bound = request(connection, &token, binding, "bind the shortcut").await?;
    let key = listed_key(&bound)?.ok_or(PortalError::NotTaken)?;
    Ok((session, key))
}

/// A token for a request's handle: unique within this connection.
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
    call.await.map_err(|e| refusal(e, what))?;
    let response = responses.next().await.ok_or(PortalError::Gone)?;
    let args = response.args()?;
    match args.response {
        0 => Ok(args.results),
        1 => Err(PortalError::Cancelled),
        _ => Err(PortalError::Refused(what)),
    }
}

/// What a failed call to the portal means: no portal (or none with this
/// interface), an app it will not serve, or a refusal (its words go to the log).
fn refusal(e: zbus::Error, what: &'static str) -> PortalError {
    let zbus::Error::MethodError(name, text, _) = &e else { return PortalError::Bus(e) };
    let text = text.as_deref().unwrap_or_default();
    tracing::info!("the desktop's GlobalShortcuts portal, asked to {what}: {name}: {text}");
    match name.as_str() {
        "org.freedesktop.portal.Error.NotAllowed" => PortalError::NotAllowed,
        "org.freedesktop.DBus.Error.ServiceUnknown"
        | "org.freedesktop.DBus.Error.UnknownMethod"
        | "org.freedesktop.DBus.Error.UnknownInterface"
        | "org.freedesktop.DBus.Error.UnknownObject"
        | "org.freedesktop.DBus.Error.UnknownProperty" => PortalError::NoPortal,
        "org.freedesktop.DBus.Error.InvalidArgs" if text.contains("No such interface") => PortalError::NoPortal,
        _ => PortalError::Refused(what),
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

/// Patchbay's shortcut in a result's `shortcuts`: `None` when not there, `Some(key)` when it
/// is (`key` as the desktop names it, `None` when it has none yet).
fn listed_key(results: &HashMap<String, OwnedValue>) -> Result<Option<Option<String>>, PortalError> {
    let Some(value) = results.get("shortcuts") else { return Ok(None) };
    let listed = Shortcuts::try_from(value.try_clone().map_err(|e| PortalError::Unreadable(e.to_string()))?)
        .map_err(|e| PortalError::Unreadable(format!("shortcuts: {e}")))?;
    Ok(key_in(&listed))
}

/// Patchbay's shortcut in a list: as [`listed_key`].
fn key_in(shortcuts: &Shortcuts) -> Option<Option<String>> {
    let (_, info) = shortcuts.iter().find(|(id, _)| id == SHORTCUT_ID)?;
    let described = info.get("trigger_description").and_then(|v| String::try_from(v.try_clone().ok()?).ok());
    Some(described.filter(|d| !d.is_empty()))
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
    fn the_key_the_desktop_chose_is_read_from_its_answer() {
        let info: HashMap<&str, Value<'_>> = HashMap::from([
            ("description", Value::from("Quick ask")),
            ("trigger_description", Value::from("Ctrl+Alt+J")),
        ]);
        let other: HashMap<&str, Value<'_>> = HashMap::from([("trigger_description", Value::from("Meta+X"))]);
        let unkeyed: HashMap<&str, Value<'_>> = HashMap::from([("trigger_description", Value::from(""))]);
        let results = |list: Vec<(&str, HashMap<&str, Value<'_>>)>| {
            HashMap::from([("shortcuts".to_owned(), OwnedValue::try_from(Value::from(list)).unwrap())])
        };
        assert_eq!(
            listed_key(&results(vec![("other", other.clone()), (SHORTCUT_ID, info)])).unwrap(),
            Some(Some("Ctrl+Alt+J".to_owned()))
        );
        // Held with no key yet; not held; no list at all.
        assert_eq!(listed_key(&results(vec![(SHORTCUT_ID, unkeyed)])).unwrap(), Some(None));
        assert_eq!(listed_key(&results(vec![("other", other)])).unwrap(), None);
        assert_eq!(listed_key(&HashMap::new()).unwrap(), None);
        let odd = HashMap::from([("shortcuts".to_owned(), OwnedValue::from(7u32))]);
        assert!(matches!(listed_key(&odd), Err(PortalError::Unreadable(_))));

        let handle = |v: Value<'_>| HashMap::from([("session_handle".to_owned(), OwnedValue::try_from(v).unwrap())]);
        let path = "/org/freedesktop/portal/desktop/session/1_7/s";
        assert_eq!(session_handle(&handle(Value::from(path))).unwrap().as_str(), path);
        assert_eq!(session_handle(&handle(Value::from(ObjectPath::try_from(path).unwrap()))).unwrap().as_str(), path);
        assert!(matches!(session_handle(&handle(Value::from(3u32))), Err(PortalError::Unreadable(_))));
    }

    #[test]
    fn a_portals_refusal_says_whether_there_is_a_portal_at_all() {
        let error = |name: &str, text: &str| {
            let name = zbus::names::OwnedErrorName::try_from(name.to_owned()).unwrap();
            let message = zbus::Message::method_call("/", "Ping").unwrap().build(&()).unwrap();
            refusal(zbus::Error::MethodError(name, Some(text.to_owned()), message), "bind the shortcut")
        };
        assert!(matches!(error("org.freedesktop.DBus.Error.ServiceUnknown", "x"), PortalError::NoPortal));
        assert!(matches!(
            error(
                "org.freedesktop.DBus.Error.InvalidArgs",
                "No such interface “org.freedesktop.portal.GlobalShortcuts”"
            ),
            PortalError::NoPortal
        ));
        assert!(matches!(
            error("org.freedesktop.portal.Error.NotAllowed", "An app id is required"),
            PortalError::NotAllowed
        ));
        assert!(matches!(error("org.freedesktop.DBus.Error.InvalidArgs", "bad shortcut"), PortalError::Refused(_)));
        // The user reads no D-Bus names.
        assert_eq!(PortalError::NoPortal.to_string(), "the desktop offers no GlobalShortcuts portal");
    }
}
