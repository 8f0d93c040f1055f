//! A minimal W3C WebDriver client over blocking HTTP: just what the tests use.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde_json::{Value, json};

/// The W3C key for element references.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// One WebDriver session.
pub struct Session {
    http: reqwest::blocking::Client,
    base: String,
    id: String,
}

/// A found element.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Session {
    /// Opens a session with the given capabilities on `base` (e.g. `http://127.0.0.1:4444`).
    pub fn new(base: &str, capabilities: Value) -> Result<Self> {
        let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build()?;
        let body = json!({ "capabilities": { "alwaysMatch": capabilities } });
        let resp: Value = http.post(format!("{base}/session")).json(&body).send()?.json()?;
        let id = resp["value"]["sessionId"]
            .as_str()
            .with_context(|| format!("WebDriver refused the session: {resp}"))?
            .to_owned();
        Ok(Self { http, base: base.to_owned(), id })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/session/{}{}", self.base, self.id, path)
    }

    fn check(resp: Value) -> Result<Value> {
        let value = resp.get("value").cloned().unwrap_or(Value::Null);
        if let Some(err) = value.get("error").and_then(Value::as_str) {
            bail!("WebDriver error {err}: {}", value.get("message").and_then(Value::as_str).unwrap_or(""));
        }
        Ok(value)
    }

    fn post(&self, path: &str, body: Value) -> Result<Value> {
        Self::check(self.http.post(self.url(path)).json(&body).send()?.json()?)
    }

    fn get(&self, path: &str) -> Result<Value> {
        Self::check(self.http.get(self.url(path)).send()?.json()?)
    }

    /// Finds the first element matching a CSS selector, now.
    pub fn find(&self, css: &str) -> Result<Element> {
        let v = self.post("/element", json!({ "using": "css selector", "value": css }))?;
        let id = v[ELEMENT_KEY].as_str().with_context(|| format!("no element id for {css}: {v}"))?;
        Ok(Element(id.to_owned()))
    }

    /// Waits up to `timeout` for an element matching `css` to exist.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Result<Element> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.find(css) {
                Ok(el) => return Ok(el),
                Err(e) if Instant::now() > deadline => {
                    return Err(e.context(format!("waiting for {css}")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// Waits until the text of `css` satisfies `pred`, returning that text.
    pub fn wait_for_text(&self, css: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> Result<String> {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(el) = self.find(css) {
                last = self.text(&el)?;
                if pred(&last) {
                    return Ok(last);
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("timed out waiting for the text of {css}; last seen: {last:?}")
    }

    /// Clicks an element.
    pub fn click(&self, el: &Element) -> Result<()> {
        self.post(&format!("/element/{}/click", el.0), json!({})).map(drop)
    }

    /// Clicks the element `css` finds once it is there and nothing covers it:
    /// a click that lands while the page still moves (another element over it,
    /// or the element replaced) is tried again, within `timeout`.
    pub fn click_when_clear(&self, css: &str, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let tried = self.wait_for(css, timeout).and_then(|el| self.click(&el));
            match tried {
                Err(e) if Instant::now() < deadline && is_moving(&e) => std::thread::sleep(Duration::from_millis(200)),
                other => return other,
            }
        }
    }

    /// Clicks `css` (as [`Self::click_when_clear`]) until `taken` says the click did what it
    /// should, at most five times: a layout that moves just as the click lands (a list that
    /// scrolls, a row that grows) sends it beside the element, and nothing says so but the
    /// missing effect. `taken` must not be true of a second click undoing the first.
    pub fn click_until(&self, css: &str, timeout: Duration, taken: impl Fn(&Self) -> bool) -> Result<()> {
        for _ in 0..5 {
            // A click that errs (the element gone, covered) may have been taken just before.
            let clicked = self.click_when_clear(css, timeout);
            if taken(self) {
                return Ok(());
            }
            clicked?;
        }
        bail!("five clicks on {css} were not taken")
    }

    /// The element `css` once it has stayed in place for three polls 100 ms apart: a layout still
    /// settling (a diagram drawn above it) moves it after its place is read and before the click
    /// lands, which then lands on whatever came there instead.
    pub fn wait_still(&self, css: &str, timeout: Duration) -> Result<Element> {
        let deadline = Instant::now() + timeout;
        let rect = "const r = document.querySelector(arguments[0])?.getBoundingClientRect(); \
                    return r ? [r.x, r.y, r.width, r.height] : null;";
        let (mut last, mut same) = (Value::Null, 0);
        loop {
            let now = self.execute(rect, json!([css]))?;
            if !now.is_null() && now == last {
                same += 1;
                if same == 2 {
                    return self.find(css);
                }
            } else {
                (last, same) = (now, 0);
            }
            if Instant::now() >= deadline {
                bail!("{css} did not stay in place within {timeout:?} (last at {last})");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The rendered text of an element.
    pub fn text(&self, el: &Element) -> Result<String> {
        Ok(self.get(&format!("/element/{}/text", el.0))?.as_str().unwrap_or_default().to_owned())
    }

    /// Sets the value of an input, textarea or select the way a user's typing
    /// would (React sees an `input` or `change` event).
    pub fn set_value(&self, css: &str, value: &str) -> Result<()> {
        let script = "const el = document.querySelector(arguments[0]);
            if (!el) { throw new Error('no element ' + arguments[0]); }
            const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype
                : el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
            Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, arguments[1]);
            el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));";
        self.execute(script, json!([css, value])).map(drop)
    }

    /// How many elements match a CSS selector now.
    pub fn count(&self, css: &str) -> Result<usize> {
        let v = self.execute("return document.querySelectorAll(arguments[0]).length;", json!([css]))?;
        Ok(usize::try_from(v.as_u64().unwrap_or(0)).unwrap_or(usize::MAX))
    }

    /// Waits until at least `n` elements match `css`.
    pub fn wait_for_count(&self, css: &str, n: usize, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.count(css)?;
            if seen >= n {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("timed out waiting for {n} of {css}; saw {seen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until nothing matches `css` (a dialog closed, a list emptied).
    pub fn wait_for_none(&self, css: &str, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.count(css)?;
            if seen == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("timed out waiting for no {css}; saw {seen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs a script in the page and returns its value.
    pub fn execute(&self, script: &str, args: Value) -> Result<Value> {
        self.post("/execute/sync", json!({ "script": script, "args": args }))
    }

    /// Runs an asynchronous script in the page: it ends by calling its last argument with the value.
    pub fn execute_async(&self, script: &str, args: Value) -> Result<Value> {
        self.post("/execute/async", json!({ "script": script, "args": args }))
    }

    /// Makes the commands that follow act in `frame` (an `<iframe>` of the
    /// current page), until [`Session::leave_frame`].
    pub fn enter_frame(&self, frame: &Element) -> Result<()> {
        self.post("/frame", json!({ "id": { ELEMENT_KEY: frame.0 } })).map(drop)
    }

    /// Makes the commands that follow act in the window's page again.
    pub fn leave_frame(&self) -> Result<()> {
        self.post("/frame", json!({ "id": null })).map(drop)
    }

    /// The handles of the app's windows the driver controls (the main one, and quick ask once made).
    pub fn window_handles(&self) -> Result<Vec<String>> {
        let handles = self.get("/window/handles")?;
        serde_json::from_value(handles.clone()).with_context(|| format!("window handles came back as {handles}"))
    }

    /// The handle of the window the commands act in.
    pub fn window_handle(&self) -> Result<String> {
        let handle = self.get("/window")?;
        handle.as_str().map(str::to_owned).with_context(|| format!("the window handle came back as {handle}"))
    }

    /// Makes the commands that follow act in the window `handle`.
    pub fn switch_window(&self, handle: &str) -> Result<()> {
        self.post("/window", json!({ "handle": handle })).map(drop)
    }

    /// The window's outer size: `(width, height)`.
    pub fn window_size(&self) -> Result<(u64, u64)> {
        let rect = self.get("/window/rect")?;
        let dim = |k: &str| rect[k].as_f64().map(|v| v.round() as u64).with_context(|| format!("no {k} in {rect}"));
        Ok((dim("width")?, dim("height")?))
    }

    /// Resizes the window.
    pub fn set_window_size(&self, width: u64, height: u64) -> Result<()> {
        self.post("/window/rect", json!({ "width": width, "height": height })).map(drop)
    }

    /// A PNG screenshot of the window.
    pub fn screenshot(&self) -> Result<Vec<u8>> {
        let b64 = self.get("/screenshot")?;
        Ok(base64::engine::general_purpose::STANDARD.decode(b64.as_str().unwrap_or_default())?)
    }

    /// Ends the session (the driver closes the app).
    pub fn close(&self) -> Result<()> {
        self.http.delete(format!("{}/session/{}", self.base, self.id)).send()?;
        Ok(())
    }
}

/// Whether a click failed because the page was still moving under it.
fn is_moving(error: &anyhow::Error) -> bool {
    let text = error.to_string();
    // WebKitWebDriver says "not interactable" of an element a closing dialog's backdrop still covers.
    text.contains("element click intercepted")
        || text.contains("stale element reference")
        || text.contains("element not interactable")
}
