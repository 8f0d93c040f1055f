//! Install links as tests make them: the percent-encoding a link's query
//! needs, and a Patchbay link for a server.

use base64::Engine;

/// Every byte but ASCII letters and digits as `%XX`.
pub fn escape(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// `patchbay://mcp/install?name=NAME&config=…` for `server`, in base64 as a server README would write it.
pub fn patchbay_link(name: &str, server: &serde_json::Value) -> String {
    let config = base64::engine::general_purpose::STANDARD.encode(server.to_string());
    format!("patchbay://mcp/install?name={}&config={}", escape(name), escape(&config))
}
