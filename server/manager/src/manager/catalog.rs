//! A server's prompts, resources and resource templates (PRM-1, PRM-3, PRM-4): listed after a
//! connection is installed (only the kinds the server declares, every page), kept on the live
//! connection, cached beside its tools under the same fingerprint and rules (CACHE-*), listed
//! again when the server sends `prompts/list_changed` or `resources/list_changed`, and used by
//! `prompts/get`, `resources/read` and `completion/complete` (SRV-3).

use std::sync::{Arc, Weak};

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Prompt, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceTemplate,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{McpManager, SharedState, Slot, State, Status};
use crate::Error;
use crate::cache::{self, CacheEntry, CacheFile, CachedPrompt, CachedTool};
use crate::connection;
use crate::inert;
use crate::names;

/// One argument a prompt declares, in declared order (also as the cache file stores it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgumentSummary {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
}

/// A prompt as lists show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSummary {
    /// The server's own name for the prompt.
    pub name: String,
    /// `mcp__<server>__<prompt>`: the slash command, without the `/`.
    pub full_name: String,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentSummary>,
}

/// A resource (`uri`) or a resource template (`uri` is the RFC 6570 template), also as the
/// cache file stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    pub uri: String,
    pub name: String,
    #[serde(default)]
    pub mime_type: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// What a server offers besides tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    pub prompts: Vec<PromptSummary>,
    pub resources: Vec<ResourceSummary>,
    pub templates: Vec<ResourceSummary>,
    /// These come from the snapshot cache of an earlier connection, not a live one (PRM-1).
    pub from_cache: bool,
}

impl Catalog {
    fn from_cache(server: &str, entry: &CacheEntry) -> Catalog {
        Catalog {
            prompts: entry
                .prompts
                .iter()
                .map(|p| PromptSummary {
                    name: p.name.clone(),
                    full_name: names::full_tool_name(server, &p.name),
                    description: p.description.clone(),
                    arguments: p.arguments.clone(),
                })
                .collect(),
            resources: entry.resources.clone(),
            templates: entry.resource_templates.clone(),
            // An empty cached catalog is no catalog: nothing to mark.
            from_cache: !(entry.prompts.is_empty()
                && entry.resources.is_empty()
                && entry.resource_templates.is_empty()),
        }
    }

    /// Writes this catalog into a cache entry.
    fn fill(&self, entry: &mut CacheEntry) {
        entry.prompts = self
            .prompts
            .iter()
            .map(|p| CachedPrompt {
                name: p.name.clone(),
                description: p.description.clone(),
                arguments: p.arguments.clone(),
            })
            .collect();
        entry.resources = self.resources.clone();
        entry.resource_templates = self.templates.clone();
    }
}

/// Descriptions lose their hidden characters here, before anything can show them to the model
/// (TRUST-7).
fn prompt_summary(server: &str, prompt: Prompt) -> PromptSummary {
    PromptSummary {
        full_name: names::full_tool_name(server, &prompt.name),
        description: without_hidden(prompt.description),
        arguments: prompt
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| PromptArgumentSummary {
                name: a.name,
                description: without_hidden(a.description),
                required: a.required.unwrap_or(false),
            })
            .collect(),
        name: prompt.name,
    }
}

fn resource_summary(resource: Resource) -> ResourceSummary {
    ResourceSummary {
        uri: resource.uri,
        name: resource.name,
        mime_type: resource.mime_type,
        description: without_hidden(resource.description),
    }
}

fn template_summary(template: ResourceTemplate) -> ResourceSummary {
    ResourceSummary {
        uri: template.uri_template,
        name: template.name,
        mime_type: template.mime_type,
        description: without_hidden(template.description),
    }
}

fn without_hidden(mut text: Option<String>) -> Option<String> {
    inert::strip_hidden_option(&mut text);
    text
}

/// Lists what the server declares (every page: rmcp's `list_all_*` follow `nextCursor`). A list
/// that fails leaves that kind empty, with a warning: the connection and its tools stay usable.
async fn fetch(peer: &rmcp::Peer<rmcp::RoleClient>, server: &str) -> Catalog {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let declares_prompts = capabilities.as_ref().is_some_and(|c| c.prompts.is_some());
    let declares_resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
    let warn = |what: &str, e: rmcp::ServiceError| {
        tracing::warn!(server = %server, "{what} failed: {e}");
    };
    let mut catalog = Catalog::default();
    if declares_prompts {
        match peer.list_all_prompts().await {
            Ok(prompts) => {
                catalog.prompts = prompts
                    .into_iter()
                    .map(|p| prompt_summary(server, p))
                    .collect()
            }
            Err(e) => warn("prompts/list", e),
        }
    }
    if declares_resources {
        match peer.list_all_resources().await {
            Ok(resources) => {
                catalog.resources = resources.into_iter().map(resource_summary).collect()
            }
            Err(e) => warn("resources/list", e),
        }
        match peer.list_all_resource_templates().await {
            Ok(templates) => {
                catalog.templates = templates.into_iter().map(template_summary).collect()
            }
            Err(e) => warn("resources/templates/list", e),
        }
    }
    catalog
}

impl Slot {
    /// What lists show: the live connection's catalog once it was listed, else the cached one
    /// of this exact config (CACHE-3), else nothing.
    pub(super) fn catalog_view(&self, cache: &CacheFile) -> Arc<Catalog> {
        if let Some(catalog) = self.live.as_ref().and_then(|l| l.catalog.as_ref()) {
            return catalog.clone();
        }
        let cached = self
            .fingerprint
            .as_ref()
            .and_then(|fingerprint| cache.lookup(&self.entry.name, fingerprint));
        match cached {
            Some(entry) => Arc::new(Catalog::from_cache(&self.entry.name, entry)),
            None => Arc::default(),
        }
    }
}

impl SharedState {
    /// Records the slot's live tools and catalog in the cache (CACHE-5). A catalog not listed
    /// yet keeps the cached one of the same fingerprint, so a connect does not blank it.
    pub(super) fn record_cache(&self, state: &mut State, index: usize) {
        let slot = &state.slots[index];
        let (Some(live), Some(fingerprint)) = (&slot.live, &slot.fingerprint) else {
            return;
        };
        let mut entry = CacheEntry {
            server: slot.entry.name.clone(),
            workdir: self.workdir.clone(),
            fingerprint: fingerprint.clone(),
            tools: live
                .tools
                .iter()
                .map(|t| CachedTool {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    hidden_text: t.hidden_text,
                    title: t.title.clone(),
                    annotations: t.annotations.clone(),
                    icons: t.icons.clone(),
                })
                .collect(),
            last_connected_at: live.connected_at,
            prompts: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            protocol_version: Some(live.connection.protocol_version.clone())
                .filter(|v| !v.is_empty()),
        };
        match (
            &live.catalog,
            state.cache.lookup(&slot.entry.name, fingerprint),
        ) {
            (Some(catalog), _) => catalog.fill(&mut entry),
            (None, Some(cached)) => {
                entry.prompts = cached.prompts.clone();
                entry.resources = cached.resources.clone();
                entry.resource_templates = cached.resource_templates.clone();
            }
            (None, None) => {}
        }
        state.cache.insert(entry.clone());
        let configured = state.configured();
        let (path, workdir) = (self.cache_path.clone(), self.workdir.clone());
        // CACHE-5: overwrite the snapshot; failures only cost the panel its cache.
        self.tasks.spawn_blocking("tool cache write", move || {
            if let Err(e) = cache::record(&path, &workdir, &configured, entry) {
                tracing::debug!("cannot write the MCP tool cache {}: {e}", path.display());
            }
        });
    }
}

/// Lists the catalog of `name`'s connection of `generation` and installs it, if that connection
/// is still the current one and no later listing of it started meanwhile; when that changes
/// what lists show, publishes and writes the cache (a server without prompts or resources costs
/// no extra snapshot). Returns what it listed.
pub(super) async fn refresh(
    shared: &Arc<SharedState>,
    name: &str,
    generation: u64,
) -> Option<Arc<Catalog>> {
    let (peer, refresh) = {
        let mut state = shared.lock();
        let index = state.index_of(name).ok()?;
        let slot = Some(&mut state.slots[index]).filter(|s| s.generation == generation)?;
        let live = slot.live.as_mut()?;
        live.catalog_refreshes += 1;
        (live.connection.peer.clone(), live.catalog_refreshes)
    };
    let catalog = Arc::new(fetch(&peer, name).await);
    let mut state = shared.lock();
    let index = state.index_of(name).ok()?;
    if state.destroyed || state.slots[index].generation != generation {
        return None;
    }
    let newest = state.slots[index].live.as_ref()?.catalog_refreshes == refresh;
    if !newest {
        return Some(catalog);
    }
    let before = state.slots[index].catalog_view(&state.cache);
    state.slots[index].live.as_mut()?.catalog = Some(catalog.clone());
    if state.slots[index].catalog_view(&state.cache) != before {
        shared.record_cache(&mut state, index);
        shared.publish(&mut state);
    }
    Some(catalog)
}

/// Starts listing a freshly installed connection's catalog, as a task of the manager's tracker.
pub(super) fn start_refresh(shared: &Arc<SharedState>, name: &str, generation: u64) {
    let task_shared = shared.clone();
    let name = name.to_string();
    shared
        .tasks
        .spawn(format!("catalog listing of {name}"), async move {
            refresh(&task_shared, &name, generation).await;
        });
}

/// Lists the catalog again when the server announces `prompts/list_changed` or
/// `resources/list_changed` (PRM-4).
pub(super) fn catalog_changed_hook(
    shared: Weak<SharedState>,
    name: String,
    generation: u64,
) -> connection::ToolsChanged {
    Arc::new(move || {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        start_refresh(&shared, &name, generation);
    })
}

/// A live connection's peer, generation, call timeout and way to the user, or why there is none.
type LivePeer = (
    rmcp::Peer<rmcp::RoleClient>,
    u64,
    std::time::Duration,
    Option<crate::elicitation::ElicitationHook>,
);

fn live_peer(manager: &McpManager, server: &str) -> Result<LivePeer, Error> {
    let state = manager.shared.lock();
    if state.destroyed {
        return Err(Error::Destroyed);
    }
    let slot = &state.slots[state.index_of(server)?];
    match &slot.live {
        Some(live) => Ok((
            live.connection.peer.clone(),
            slot.generation,
            manager.shared.tool_timeout_for(&slot.entry),
            live.connection.elicitation.clone(),
        )),
        None => Err(Error::NotConnected {
            server: server.to_string(),
            status: match slot.status {
                Status::Error => format!(
                    "in error: {}",
                    slot.error.as_deref().unwrap_or("unknown reason")
                ),
                status => status.as_str().to_string(),
            },
        }),
    }
}

impl McpManager {
    /// The prompts and resources of a live connection, listing them now if that has not happened
    /// yet. Never the cached ones: a command or a mention needs the live server.
    pub async fn live_catalog(&self, server: &str) -> Result<Arc<Catalog>, Error> {
        let (_, generation, _, _) = live_peer(self, server)?;
        let loaded = {
            let state = self.shared.lock();
            let slot = &state.slots[state.index_of(server)?];
            slot.live.as_ref().and_then(|l| l.catalog.clone())
        };
        if let Some(catalog) = loaded {
            return Ok(catalog);
        }
        match refresh(&self.shared, server, generation).await {
            Some(catalog) => Ok(catalog),
            // The connection changed meanwhile.
            None => Err(Error::NotConnected {
                server: server.to_string(),
                status: "no longer connected".into(),
            }),
        }
    }

    /// `prompts/get` on `server`'s live connection (PRM-2), bounded by the tool-call timeout.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, Error> {
        let (peer, _, timeout, elicitation) = live_peer(self, server)?;
        let failed = |reason: String| Error::Prompt {
            server: server.to_string(),
            prompt: prompt.to_string(),
            reason,
        };
        let mut params = GetPromptRequestParams::new(prompt);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        // SPEC-3: questions of an `input_required` reply go to the user, then a retry.
        let mut rounds = crate::mrtr::Rounds::new(elicitation.as_ref());
        loop {
            match tokio::time::timeout(timeout, peer.get_prompt_once(params.clone())).await {
                Ok(Ok(GetPromptResponse::Complete(result))) => return Ok(result),
                Ok(Ok(GetPromptResponse::InputRequired(asked))) => {
                    let retry = rounds.answer(asked).await.map_err(failed)?;
                    params.input_responses = retry.input_responses;
                    params.request_state = retry.request_state;
                }
                Ok(Ok(_)) => return Err(failed("unexpected response to prompts/get".into())),
                Ok(Err(e)) => return Err(failed(crate::error::in_words(&e))),
                Err(_) => {
                    return Err(failed(format!(
                        "timed out after {} ms",
                        timeout.as_millis()
                    )));
                }
            }
        }
    }

    /// `resources/read` on `server`'s live connection (PRM-3), bounded by the tool-call timeout.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, Error> {
        let (peer, _, timeout, elicitation) = live_peer(self, server)?;
        let failed = |reason: String| Error::Resource {
            server: server.to_string(),
            uri: uri.to_string(),
            reason,
        };
        let mut params = ReadResourceRequestParams::new(uri);
        let mut rounds = crate::mrtr::Rounds::new(elicitation.as_ref());
        loop {
            match tokio::time::timeout(timeout, peer.read_resource_once(params.clone())).await {
                Ok(Ok(ReadResourceResponse::Complete(result))) => return Ok(result),
                Ok(Ok(ReadResourceResponse::InputRequired(asked))) => {
                    let retry = rounds.answer(asked).await.map_err(failed)?;
                    params.input_responses = retry.input_responses;
                    params.request_state = retry.request_state;
                }
                Ok(Ok(_)) => return Err(failed("unexpected response to resources/read".into())),
                Ok(Err(e)) => return Err(failed(crate::error::in_words(&e))),
                Err(_) => {
                    return Err(failed(format!(
                        "timed out after {} ms",
                        timeout.as_millis()
                    )));
                }
            }
        }
    }

    /// `completion/complete` on `server`'s live connection (SRV-3): suggested values for one
    /// argument of a prompt or variable of a resource template, given the arguments already
    /// chosen. A server that does not declare the `completions` capability is never asked: it
    /// has no suggestions.
    pub async fn complete(
        &self,
        server: &str,
        reference: Reference,
        argument: &str,
        value: &str,
        context: std::collections::HashMap<String, String>,
    ) -> Result<CompletionInfo, Error> {
        let (peer, _, timeout, _) = live_peer(self, server)?;
        let declares_completions = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.completions.is_some());
        if !declares_completions {
            return Ok(CompletionInfo::default());
        }
        let failed = |reason: String| Error::Completion {
            server: server.to_string(),
            argument: argument.to_string(),
            reason,
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            params = params.with_context(CompletionContext::with_arguments(context));
        }
        match tokio::time::timeout(timeout, peer.complete(params)).await {
            Ok(Ok(result)) => Ok(result.completion),
            Ok(Err(e)) => Err(failed(crate::error::in_words(&e))),
            Err(_) => Err(failed(format!(
                "timed out after {} ms",
                timeout.as_millis()
            ))),
        }
    }
}
