//! The servers' prompts and resources: listing and reading them, watching a
//! resource, filling in resource templates, and completing arguments.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::model::{ArgumentInfo, Reference};
use tokio_util::sync::CancellationToken;

use super::servers::watched_key;
use super::views::{CompletionTarget, CompletionView, PromptArgument, PromptInfo, ResourceInfo, ResourceTemplateInfo};
use super::{App, AppError};
use crate::mcp::protocol::content::{ResourcePreview, ResultLimits, prompt_text, resource_preview, resource_text};
use crate::mcp::protocol::uri_template;

impl App {
    /// Prompts of every ready server.
    pub fn list_prompts(&self) -> Result<Vec<PromptInfo>, AppError> {
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let place = self.icon_place_of(&name);
            for prompt in self.inner.registry.prompts(&name).unwrap_or_default() {
                out.push(PromptInfo {
                    server: name.clone(),
                    icons: self.icon_views(&place, prompt.icons.as_deref()),
                    name: prompt.name.clone(),
                    title: prompt.title.clone(),
                    description: prompt.description.clone(),
                    arguments: prompt
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| PromptArgument {
                            name: a.name,
                            title: a.title,
                            description: a.description,
                            required: a.required.unwrap_or(false),
                        })
                        .collect(),
                });
            }
        }
        Ok(out)
    }

    /// A prompt's messages as text for the composer.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: CancellationToken,
    ) -> Result<String, AppError> {
        let result = self.inner.registry.get_prompt(server, name, Some(arguments), cancel).await?;
        Ok(prompt_text(&result))
    }

    /// Resources of every ready server.
    pub fn list_resources(&self) -> Result<Vec<ResourceInfo>, AppError> {
        let registry = &self.inner.registry;
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let watchable = registry.can_subscribe(&name);
            let watched = registry.subscriptions(&name).unwrap_or_default();
            let place = self.icon_place_of(&name);
            for r in registry.resources(&name).unwrap_or_default() {
                out.push(ResourceInfo {
                    server: name.clone(),
                    icons: self.icon_views(&place, r.icons.as_deref()),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    title: r.title.clone(),
                    mime_type: r.mime_type.clone(),
                    watchable,
                    watched: watched.contains(&r.uri),
                });
            }
        }
        Ok(out)
    }

    /// Watches a resource (`resources/subscribe`, renewed when the server
    /// restarts and kept for Patchbay's next start) or stops watching it; its changes arrive as
    /// [`AppEvent::ResourceUpdated`](super::AppEvent::ResourceUpdated).
    pub async fn watch_resource(
        &self,
        server: &str,
        uri: &str,
        watch: bool,
        cancel: CancellationToken,
    ) -> Result<(), AppError> {
        let registry = &self.inner.registry;
        if watch && !registry.can_subscribe(server) {
            return Err(AppError::Invalid(format!("MCP server {server:?} does not report changes to its resources")));
        }
        match watch {
            true => registry.subscribe_resource(server, uri, cancel).await?,
            false => registry.unsubscribe_resource(server, uri, cancel).await?,
        }
        // Kept for the next start of Patchbay.
        let watched: BTreeSet<String> = registry.subscriptions(server)?.into_iter().collect();
        Ok(self.inner.store.set_setting(&watched_key(server), &watched)?)
    }

    /// Resource templates of every ready server, each with its variables; a
    /// template whose URI template cannot be read is left out (and logged).
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, AppError> {
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let place = self.icon_place_of(&name);
            for t in self.inner.registry.resource_templates(&name).unwrap_or_default() {
                match uri_template::variables(&t.uri_template) {
                    Ok(variables) => out.push(ResourceTemplateInfo {
                        server: name.clone(),
                        icons: self.icon_views(&place, t.icons.as_deref()),
                        uri_template: t.uri_template.clone(),
                        name: t.title.clone().unwrap_or_else(|| t.name.clone()),
                        description: t.description.clone(),
                        mime_type: t.mime_type.clone(),
                        variables,
                    }),
                    Err(e) => tracing::warn!(server = %name, error = %e, "a resource template was left out"),
                }
            }
        }
        Ok(out)
    }

    /// The URI a server's resource template makes with `values`.
    pub fn expand_resource_template(
        &self,
        uri_template: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<String, AppError> {
        Ok(uri_template::expand(uri_template, values)?)
    }

    /// What a server suggests for one argument of a prompt or a resource
    /// template, given the text typed so far and the other arguments' values.
    pub async fn complete(
        &self,
        server: &str,
        target: CompletionTarget,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
        cancel: CancellationToken,
    ) -> Result<CompletionView, AppError> {
        let reference = match target {
            CompletionTarget::Prompt { name } => Reference::for_prompt(name),
            CompletionTarget::ResourceTemplate { uri_template } => Reference::for_resource(uri_template),
        };
        let context = context.into_iter().filter(|(k, v)| k != argument && !v.is_empty()).collect();
        let info = self
            .inner
            .registry
            .complete(server, reference, ArgumentInfo::new(argument, value), context, cancel)
            .await?;
        Ok(CompletionView { values: info.values, total: info.total, has_more: info.has_more.unwrap_or(false) })
    }

    /// A resource as the server's page shows it: each part's text, or its
    /// picture or sound, within the UI's limit (10 MB).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourcePreview>, AppError> {
        let result = self.inner.registry.read_resource(server, uri, cancel).await?;
        Ok(resource_preview(&result, &ResultLimits::default()))
    }

    /// The text of a resource: read from `server` when given (a template's
    /// URI is in no list), else from the first ready server that lists it.
    pub(crate) async fn read_resource_text(&self, uri: &str, server: Option<String>) -> Result<String, AppError> {
        let server = match server {
            Some(server) => server,
            None => self
                .list_resources()?
                .into_iter()
                .find(|r| r.uri == uri)
                .map(|r| r.server)
                .ok_or_else(|| AppError::NotFound(format!("no ready MCP server offers the resource {uri}")))?,
        };
        let result = self.inner.registry.read_resource(&server, uri, CancellationToken::new()).await?;
        resource_text(&result).ok_or_else(|| AppError::Invalid(format!("resource {uri} has no text to attach")))
    }

    fn ready_servers(&self) -> Result<Vec<String>, AppError> {
        Ok(self
            .inner
            .config
            .servers()?
            .into_iter()
            .filter(|s| self.server_status(&s.name).is_some_and(|st| st.state == "ready"))
            .map(|s| s.name)
            .collect())
    }
}
