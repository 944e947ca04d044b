//! What a user message asks of the MCP servers before the model sees it: a slash command
//! `/mcp__<server>__<prompt> args` is replaced by the prompt's messages (`prompts/get`, PRM-2),
//! and each `@<server>:<uri>` mention attaches that resource's contents (`resources/read`,
//! PRM-3). Any other text, slash text like `/settings ...` included, is sent verbatim (ADD-4).
//!
//! Arguments: whitespace separates them; double or single quotes keep spaces (`"b c"`, with
//! `\"` and `\\` inside double quotes); `key=value` names a declared argument, the others fill
//! the remaining declared arguments in order. A missing required argument, an extra one, an
//! unknown server or prompt, a denied server or a failed read is an error before anything is
//! added to the history: nothing reaches the model.

use serde_json::{Map, Value};
use wave_mcp_manager::{
    ContentBlock, PromptArgumentSummary, PromptRole, PromptSummary, ResourceContents, Status,
};

use super::{Agent, AgentError, Image, Message, PermissionRules, TurnReport};

/// The command of a message that starts with `/mcp__`: its name and the rest of the line.
pub(crate) fn prompt_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    if !rest.starts_with("mcp__") {
        return None;
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

/// `@<server>:<uri>` mentions of the configured `servers`, in order. A mention starts a word;
/// the longest server name that fits wins; the URI runs to the next whitespace, without one
/// trailing `.`, `,`, `;`, `!`, `?` or `)` (sentence punctuation).
pub(crate) fn mentions(text: &str, servers: &[String]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let server = servers
            .iter()
            .filter(|s| {
                rest.strip_prefix(s.as_str())
                    .is_some_and(|r| r.starts_with(':'))
            })
            .max_by_key(|s| s.len());
        let Some(server) = server else {
            continue;
        };
        let mut uri = &rest[server.len() + 1..];
        if uri.len() > 1 && uri.ends_with(['.', ',', ';', '!', '?', ')']) {
            uri = &uri[..uri.len() - 1];
        }
        if !uri.is_empty() {
            found.push((server.clone(), uri.to_string()));
        }
    }
    found
}

/// One argument as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// The part before the first unquoted `=`, if any.
    key: Option<String>,
}

/// Splits the argument text into words (quotes kept together, see the module docs).
fn words(input: &str) -> Result<Vec<Word>, String> {
    let mut words = Vec::new();
    let mut chars = input.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(words);
        }
        let mut text = String::new();
        let mut key = None;
        let mut quoted = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '"' | '\'' => {
                    quoted = true;
                    let mut closed = false;
                    while let Some(inner) = chars.next() {
                        if inner == c {
                            closed = true;
                            break;
                        }
                        if c == '"' && inner == '\\' && matches!(chars.peek(), Some('"' | '\\')) {
                            text.extend(chars.next());
                            continue;
                        }
                        text.push(inner);
                    }
                    if !closed {
                        return Err(format!("unclosed {c} in the arguments"));
                    }
                }
                '=' if key.is_none() && !quoted => {
                    key = Some(std::mem::take(&mut text));
                }
                c => text.push(c),
            }
        }
        if let Some(k) = key.take() {
            // `key=value`: `text` holds the value; keep the whole word for a positional use.
            words.push(Word { text, key: Some(k) });
            continue;
        }
        words.push(Word { text, key: None });
    }
}

/// `/name <required> [optional]`.
fn usage(command: &str, arguments: &[PromptArgumentSummary]) -> String {
    let mut usage = format!("/{command}");
    for a in arguments {
        match a.required {
            true => usage.push_str(&format!(" <{}>", a.name)),
            false => usage.push_str(&format!(" [{}]", a.name)),
        }
    }
    usage
}

/// Maps typed words onto the declared arguments (PRM-2).
fn map_arguments(prompt: &PromptSummary, input: &str) -> Result<Map<String, Value>, String> {
    let declared = &prompt.arguments;
    let usage = || usage(&prompt.full_name, declared);
    let mut named = Map::new();
    let mut positional = Vec::new();
    for word in words(input).map_err(|e| format!("{e} (usage: {})", usage()))? {
        match word.key {
            Some(key) if declared.iter().any(|a| a.name == key) => {
                named.insert(key, Value::String(word.text));
            }
            Some(key) => positional.push(format!("{key}={}", word.text)),
            None => positional.push(word.text),
        }
    }
    let mut positional = positional.into_iter();
    for argument in declared {
        if named.contains_key(&argument.name) {
            continue;
        }
        if let Some(value) = positional.next() {
            named.insert(argument.name.clone(), Value::String(value));
        }
    }
    if let Some(extra) = positional.next() {
        return Err(format!(
            "too many arguments for /{}: \"{extra}\" is left over (usage: {})",
            prompt.full_name,
            usage()
        ));
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|a| a.required && !named.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let noun = if missing.len() == 1 {
            "argument"
        } else {
            "arguments"
        };
        return Err(format!(
            "missing required {noun} {list} of /{} (usage: {})",
            prompt.full_name,
            usage()
        ));
    }
    Ok(named)
}

/// Decodes a resource blob: standard base64, padding optional; `None` if it is not base64.
fn base64_decode(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const BLOB: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    BLOB.decode(data.trim()).ok()
}

/// A MIME type whose bytes are text.
fn is_text_mime(mime: &str) -> bool {
    let mime = mime.split(';').next().unwrap_or_default().trim();
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/sql"
        )
}

/// Text (and images) for one resource's contents: text as is, a text blob decoded, an image
/// blob as an image (sent where the model has vision), any other blob named but not shown.
fn render_contents(contents: &ResourceContents, text: &mut Vec<String>, images: &mut Vec<Image>) {
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: body,
            ..
        } => text.push(resource_block(uri, mime_type.as_deref(), body)),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
            if mime.starts_with("image/") {
                text.push(format!("[Image: {uri} ({mime})]"));
                images.push(Image {
                    mime_type: mime.to_string(),
                    data: blob.clone(),
                });
                return;
            }
            let decoded = base64_decode(blob);
            let body = decoded
                .as_ref()
                .filter(|_| is_text_mime(mime))
                .and_then(|bytes| std::str::from_utf8(bytes).ok());
            match body {
                Some(body) => text.push(resource_block(uri, Some(mime), body)),
                None => text.push(format!(
                    "[Binary resource {uri} ({mime}, {} bytes) not shown]",
                    decoded.map_or(blob.len(), |b| b.len())
                )),
            }
        }
        #[allow(unreachable_patterns)]
        _ => text.push("[Resource contents of an unknown kind not shown]".to_string()),
    }
}

/// A resource's text for the model, without hidden characters (TRUST-7).
fn resource_block(uri: &str, mime: Option<&str>, body: &str) -> String {
    let (body, _) = wave_mcp_manager::inert::strip_hidden(body);
    let mime = mime
        .map(|m| format!(" mimeType=\"{m}\""))
        .unwrap_or_default();
    format!("<resource uri=\"{uri}\"{mime}>\n{body}\n</resource>")
}

/// One prompt message as a history message: text, images and embedded resources (PRM-2).
fn prompt_message(role: &PromptRole, content: &ContentBlock) -> Message {
    let mut text = Vec::new();
    let mut images = Vec::new();
    match content {
        ContentBlock::Text(t) => text.push(t.text.clone()),
        ContentBlock::Image(image) => {
            text.push(format!("[Image: {}]", image.mime_type));
            images.push(Image {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            });
        }
        ContentBlock::Audio(audio) => text.push(format!("[Audio: {} not shown]", audio.mime_type)),
        ContentBlock::Resource(embedded) => {
            render_contents(&embedded.resource, &mut text, &mut images)
        }
        ContentBlock::ResourceLink(link) => {
            text.push(format!("[Resource link: {} ({})]", link.uri, link.name))
        }
        #[allow(unreachable_patterns)]
        _ => text.push("[Content of an unknown kind not shown]".to_string()),
    }
    // Server text for the model: no hidden characters (TRUST-7).
    let mut text = text.join("\n");
    wave_mcp_manager::inert::strip_hidden_in_place(&mut text);
    let mut message = match role {
        PromptRole::Assistant => Message::assistant(text, Vec::new()),
        PromptRole::User => Message::user(text),
    };
    message.images = images;
    message
}

impl Agent {
    /// Whether `text` needs the MCP servers before the turn: a prompt command, or a mention of
    /// a configured server.
    pub(super) fn asks_mcp(&self, text: &str) -> bool {
        if prompt_command(text).is_some() {
            return true;
        }
        let servers = self.server_names();
        !mentions(text, &servers).is_empty()
    }

    fn server_names(&self) -> Vec<String> {
        let snapshot = self.manager.snapshot();
        snapshot.servers.iter().map(|s| s.name.clone()).collect()
    }

    /// A turn whose message uses prompts or resources: the servers are dialed first, the
    /// message is expanded, and only then does anything enter the history (PRM-2, PRM-3).
    pub(super) async fn send_with_mcp(&mut self, text: &str) -> Result<TurnReport, AgentError> {
        let dials = self.manager.start_turn_dials();
        let dialed = dials.as_ref().map_or(0, |d| d.len());
        let stopped = TurnReport {
            dialed,
            cancelled: true,
            ..TurnReport::default()
        };
        let hooks = self.hooks.clone();
        if let Some(pending) = dials
            && hooks.unless_stopped(pending.settled()).await.is_none()
        {
            return Ok(stopped);
        }
        let context = self.turn_context();
        let Some(messages) = hooks
            .unless_stopped(self.expand(text, &context.rules))
            .await
        else {
            return Ok(stopped);
        };
        let messages = messages?;
        for message in messages {
            self.push(message);
        }
        self.run_turn(context, dialed).await
    }

    /// The history messages `text` stands for.
    async fn expand(
        &self,
        text: &str,
        rules: &PermissionRules,
    ) -> Result<Vec<Message>, AgentError> {
        if let Some((command, arguments)) = prompt_command(text) {
            return self.expand_prompt(command, arguments, rules).await;
        }
        let mut parts = Vec::new();
        let mut images = Vec::new();
        for (server, uri) in mentions(text, &self.server_names()) {
            self.usable_server(&server, rules)?;
            let read = self.manager.read_resource(&server, &uri).await?;
            for contents in &read.contents {
                render_contents(contents, &mut parts, &mut images);
            }
        }
        let mut attached =
            Message::user(format!("Attached MCP resources:\n\n{}", parts.join("\n\n")));
        attached.images = images;
        Ok(vec![Message::user(text), attached])
    }

    /// A server whose prompts and resources may be used now: configured, allowed, connected.
    fn usable_server(&self, server: &str, rules: &PermissionRules) -> Result<(), AgentError> {
        if let Some(why) = rules.server_denial(server) {
            return Err(AgentError::Input(format!(
                "permission denied: MCP server \"{server}\" may not be used ({why})"
            )));
        }
        let snapshot = self.manager.snapshot();
        let Some(row) = snapshot.server(server) else {
            return Err(AgentError::Input(format!(
                "no MCP server named \"{server}\" is configured"
            )));
        };
        if row.status != Status::Connected {
            let why = row
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            return Err(AgentError::Input(format!(
                "MCP server \"{server}\" is {}{why}",
                row.status.as_str()
            )));
        }
        Ok(())
    }

    async fn expand_prompt(
        &self,
        command: &str,
        arguments: &str,
        rules: &PermissionRules,
    ) -> Result<Vec<Message>, AgentError> {
        let server = self
            .manager
            .snapshot()
            .owner_of(command)
            .map(|s| s.name.clone());
        let Some(server) = server else {
            return Err(AgentError::Input(format!(
                "/{command}: no configured MCP server has prompts named mcp__<server>__..."
            )));
        };
        self.usable_server(&server, rules)?;
        let catalog = self.manager.live_catalog(&server).await?;
        let Some(prompt) = catalog.prompts.iter().find(|p| p.full_name == command) else {
            let offered = catalog
                .prompts
                .iter()
                .map(|p| format!("/{}", p.full_name))
                .collect::<Vec<_>>();
            let offered = match offered.is_empty() {
                true => "it has none".to_string(),
                false => format!("it has {}", offered.join(", ")),
            };
            return Err(AgentError::Input(format!(
                "/{command}: MCP server \"{server}\" has no such prompt ({offered})"
            )));
        };
        let arguments = map_arguments(prompt, arguments).map_err(AgentError::Input)?;
        let result = self
            .manager
            .get_prompt(&server, &prompt.name, arguments)
            .await?;
        if result.messages.is_empty() {
            return Err(AgentError::Input(format!(
                "/{command}: prompt \"{}\" of MCP server \"{server}\" returned no messages",
                prompt.name
            )));
        }
        Ok(result
            .messages
            .iter()
            .map(|m| prompt_message(&m.role, &m.content))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> PromptSummary {
        PromptSummary {
            name: "p".into(),
            full_name: "mcp__s__p".into(),
            description: None,
            arguments: arguments
                .iter()
                .map(|(name, required)| PromptArgumentSummary {
                    name: (*name).into(),
                    description: None,
                    required: *required,
                })
                .collect(),
        }
    }

    fn mapped(arguments: &[(&str, bool)], input: &str) -> Result<Vec<(String, String)>, String> {
        let map = map_arguments(&prompt(arguments), input)?;
        Ok(map
            .into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
            .collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    // PRM-2: positional in declared order, quotes keep spaces, key=value by name.
    #[test]
    fn prm_2_arguments_map_in_declared_order_or_by_name() {
        let declared = [("a", true), ("b", false)];
        assert_eq!(
            mapped(&declared, r#"x "b c""#).unwrap(),
            pairs(&[("a", "x"), ("b", "b c")])
        );
        assert_eq!(
            mapped(&declared, r#"b="two words" first"#).unwrap(),
            pairs(&[("b", "two words"), ("a", "first")])
        );
        assert_eq!(
            mapped(&declared, r#"'it''s' "say \"hi\"""#).unwrap(),
            pairs(&[("a", "its"), ("b", "say \"hi\"")])
        );
        // `=` in a value that names no argument stays part of the value.
        assert_eq!(mapped(&declared, "x=1").unwrap(), pairs(&[("a", "x=1")]));
        assert_eq!(mapped(&declared, "only").unwrap(), pairs(&[("a", "only")]));
    }

    // PRM-2: a missing required argument is a clear error naming it and the usage.
    #[test]
    fn prm_2_missing_required_argument_is_a_clear_error() {
        let error = mapped(&[("a", true), ("b", false)], "").unwrap_err();
        assert_eq!(
            error,
            "missing required argument \"a\" of /mcp__s__p (usage: /mcp__s__p <a> [b])"
        );
        let error = mapped(&[("a", false)], "one two").unwrap_err();
        assert!(
            error.starts_with("too many arguments for /mcp__s__p"),
            "{error}"
        );
        let error = mapped(&[("a", false)], "\"open").unwrap_err();
        assert!(error.starts_with("unclosed \" in the arguments"), "{error}");
    }

    // ADD-4: other slash text is not a command.
    #[test]
    fn add_4_only_mcp_commands_are_commands() {
        assert_eq!(prompt_command("/settings a b"), None);
        assert_eq!(prompt_command("hello /mcp__s__p"), None);
        assert_eq!(
            prompt_command("/mcp__s__p  a \"b c\" "),
            Some(("mcp__s__p", "a \"b c\""))
        );
    }

    // PRM-3: mentions of configured servers only, longest name first, punctuation trimmed.
    #[test]
    fn prm_3_mentions_name_configured_servers() {
        let servers = vec!["s".to_string(), "s:x".to_string(), "docs".to_string()];
        assert_eq!(
            mentions(
                "read @docs:file:///a.txt, then @nope:x and mail@docs:y",
                &servers
            ),
            vec![("docs".to_string(), "file:///a.txt".to_string())]
        );
        assert_eq!(
            mentions("@s:x:uri", &servers),
            vec![("s:x".to_string(), "uri".to_string())]
        );
    }

    #[test]
    fn base64_and_text_blobs() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert!(base64_decode("a*b").is_none());
        let mut text = Vec::new();
        let mut images = Vec::new();
        let blob = ResourceContents::blob("aGVsbG8=", "x:/a").with_mime_type("application/json");
        render_contents(&blob, &mut text, &mut images);
        let image = ResourceContents::blob("AAAA", "x:/i").with_mime_type("image/png");
        render_contents(&image, &mut text, &mut images);
        let binary = ResourceContents::blob("AAAA", "x:/b");
        render_contents(&binary, &mut text, &mut images);
        assert_eq!(
            text,
            [
                "<resource uri=\"x:/a\" mimeType=\"application/json\">\nhello\n</resource>",
                "[Image: x:/i (image/png)]",
                "[Binary resource x:/b (application/octet-stream, 3 bytes) not shown]",
            ]
        );
        assert_eq!(images.len(), 1);
    }
}
