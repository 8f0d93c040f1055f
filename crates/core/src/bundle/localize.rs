//! A bundle's user-facing strings in the user's language (MCPB
//! `localization`): per-locale JSON files in the bundle, at the path
//! `localization.resources` names (`mcpb-resources/${locale}.json` by
//! default), override the manifest's display name, descriptions, author name
//! and the descriptions of the tools and prompts it declares.
//!
//! The locale asked for is matched exactly, else by language: a region or
//! script of the same language (Chinese by script: `zh-CN` and `zh-SG` read
//! `zh-Hans`, `zh-TW`, `zh-HK` and `zh-MO` read `zh-Hant`), else the
//! manifest's own strings stay. A locale file that cannot be read is passed
//! over (and logged): the bundle still installs, in its manifest's words.

use serde::Deserialize;

use super::manifest::Declared;
use super::{Bundle, MAX_MANIFEST};

/// Where locale files are when the manifest does not say.
const DEFAULT_RESOURCES: &str = "mcpb-resources/${locale}.json";

/// What a locale file may override.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Strings {
    display_name: Option<String>,
    description: Option<String>,
    long_description: Option<String>,
    author: Option<AuthorName>,
    tools: Vec<Declared>,
    prompts: Vec<Declared>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AuthorName {
    name: Option<String>,
}

impl Bundle {
    /// The bundle with its manifest's strings in `locale` (a BCP 47 tag, or a
    /// POSIX locale such as `zh_CN.UTF-8`), where it has them.
    pub fn localized(mut self, locale: &str) -> Self {
        let wanted = normalize(locale);
        let localization = self.manifest.localization.clone().unwrap_or_default();
        let default = localization.default_locale.as_deref().map(normalize).unwrap_or_else(|| "en-us".into());
        if wanted.is_empty() || wanted == default {
            return self;
        }
        let pattern = localization.resources.unwrap_or_else(|| DEFAULT_RESOURCES.to_owned());
        let Some((prefix, suffix)) = pattern.trim_start_matches("./").split_once("${locale}") else {
            return self;
        };
        let available: Vec<(String, String)> =
            self.entries_like(prefix, suffix).into_iter().map(|(tag, entry)| (normalize(&tag), entry)).collect();
        let Some(entry) = pick(&wanted, &available) else { return self };
        let read = self
            .read_entry(entry, MAX_MANIFEST)
            .and_then(|text| serde_json::from_slice::<Strings>(&text).map_err(|e| e.to_string()));
        match read {
            Ok(strings) => self.apply(strings),
            Err(reason) => {
                tracing::warn!(bundle = %self.file.display(), entry, %reason, "a locale file was passed over")
            }
        }
        self
    }

    fn apply(&mut self, strings: Strings) {
        let m = &mut self.manifest;
        let text = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        if let Some(name) = text(strings.display_name) {
            m.display_name = Some(name);
        }
        if let Some(description) = text(strings.description) {
            m.description = description;
        }
        if let Some(long) = text(strings.long_description) {
            m.long_description = Some(long);
        }
        if let Some(name) = text(strings.author.and_then(|a| a.name)) {
            m.author.name = name;
        }
        // Only what the manifest declares: a tool or prompt only in the locale file is not added.
        for (declared, local) in [(&mut m.tools, strings.tools), (&mut m.prompts, strings.prompts)] {
            for item in local {
                if let (Some(target), Some(description)) =
                    (declared.iter_mut().find(|d| d.name == item.name), text(item.description))
                {
                    target.description = Some(description);
                }
            }
        }
    }
}

/// `zh_CN.UTF-8` → `zh-cn`; `C` and `POSIX` name no language.
fn normalize(locale: &str) -> String {
    let tag = locale.split(['.', '@']).next().unwrap_or_default().replace('_', "-").to_ascii_lowercase();
    if tag == "c" || tag == "posix" { String::new() } else { tag }
}

/// The locale file for `wanted` among `available` (normalized tag, entry).
fn pick<'a>(wanted: &str, available: &'a [(String, String)]) -> Option<&'a str> {
    let find = |tag: &str| available.iter().find(|(t, _)| t == tag).map(|(_, e)| e.as_str());
    if let Some(exact) = find(wanted) {
        return Some(exact);
    }
    let mut parts = wanted.split('-');
    let language = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    let mut preferred = Vec::new();
    if language == "zh" {
        let traditional = rest.iter().any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"));
        let order: &[&str] =
            if traditional { &["zh-hant", "zh-tw", "zh-hk", "zh-mo"] } else { &["zh-hans", "zh-cn", "zh-sg"] };
        preferred.extend(order.iter().map(|t| (*t).to_owned()));
    }
    preferred.push(language.to_owned());
    if let Some(found) = preferred.iter().find_map(|t| find(t)) {
        return Some(found);
    }
    let mut same_language: Vec<&(String, String)> =
        available.iter().filter(|(t, _)| t.split('-').next() == Some(language)).collect();
    same_language.sort();
    same_language.first().map(|(_, e)| e.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available(tags: &[&str]) -> Vec<(String, String)> {
        tags.iter().map(|t| (normalize(t), format!("mcpb-resources/{t}.json"))).collect()
    }

    #[test]
    fn a_locale_is_matched_exactly_then_by_script_then_by_language() {
        let files = available(&["zh-Hans", "zh-Hant", "de-DE", "de-AT", "pt"]);
        let picked = |wanted: &str| pick(&normalize(wanted), &files);
        assert_eq!(picked("zh_CN.UTF-8"), Some("mcpb-resources/zh-Hans.json"));
        assert_eq!(picked("zh"), Some("mcpb-resources/zh-Hans.json"));
        assert_eq!(picked("zh-TW"), Some("mcpb-resources/zh-Hant.json"));
        assert_eq!(picked("zh-Hant-HK"), Some("mcpb-resources/zh-Hant.json"));
        assert_eq!(picked("de-AT"), Some("mcpb-resources/de-AT.json"));
        assert_eq!(picked("de-CH"), Some("mcpb-resources/de-AT.json"), "the first of the language's, in order");
        assert_eq!(picked("pt-BR"), Some("mcpb-resources/pt.json"));
        assert_eq!(picked("fr-FR"), None);
        assert_eq!(normalize("C.UTF-8"), "");
        assert_eq!(normalize("sr_RS@latin"), "sr-rs");
    }
}
