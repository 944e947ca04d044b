//! Tests that keep the generated client copies and the docs in step with the declarations: the
//! TypeScript types (ts-rs) and the JSON Schema (schemars) are regenerated in memory and
//! compared with the committed files; `WAVE_UPDATE_GENERATED=1` rewrites them instead.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use ts_rs::TS;

use super::*;

const TS_FILE: &str = "vscode-extension/src/protocol.generated.ts";
const SCHEMA_FILE: &str = "jetbrains-plugin/protocol.schema.json";
const KOTLIN_FILE: &str =
    "jetbrains-plugin/client/src/main/kotlin/dev/wavemcp/client/Methods.generated.kt";
const DOCS_FILE: &str = "docs/protocol.md";
const REGENERATE: &str = "WAVE_UPDATE_GENERATED=1 cargo test -p wave-mcp-protocol";

/// Calls `$f::<T>()` for every wire type, in output order, with the type's name.
macro_rules! for_each_type {
    ($visit:ident) => {
        $visit!(
            McpSource,
            McpStatus,
            IconView,
            ToolUiView,
            McpToolView,
            McpServerView,
            ServerApproval,
            SessionApproveServersParams,
            SessionApproveServersResult,
            ToolAnnotationsView,
            SessionConfirmToolParams,
            ToolDecision,
            SessionConfirmToolResult,
            WorkspaceTrustParams,
            ModelOptions,
            InitializationOptions,
            SessionParams,
            ServerParams,
            DeleteParams,
            SetToolEnabledParams,
            OpenUrlParams,
            OpenUrlPurpose,
            OpenUrlResult,
            ServersSnapshot,
            ConfigPaths,
            McpPromptArgument,
            McpPromptView,
            LogSourceView,
            LogEntryView,
            McpLogsResult,
            McpLogAppendedParams,
            McpPromptsResult,
            McpResourceView,
            McpResourceTemplateView,
            McpResourcesResult,
            CompletionRefKind,
            CompletionRef,
            CompletionArgument,
            CompletionContext,
            McpCompleteParams,
            McpCompleteResult,
            SessionCreateParams,
            SessionCreated,
            SessionSendParams,
            SessionSendAccepted,
            ChatRole,
            ChatAppRef,
            ChatAppResult,
            ChatToolCall,
            ChatMessage,
            SessionMessageParams,
            SessionHistoryParams,
            SessionHistoryEntry,
            SessionHistoryResult,
            SessionTurnEndedParams,
            SessionDeltaParams,
            SessionProgressParams,
            SessionCancelParams,
            SessionCancelResult,
            SessionDestroyParams,
            DestroyState,
            SessionDestroyed,
            ElicitMode,
            SessionElicitParams,
            ElicitAction,
            SessionElicitResult,
            SessionElicitationCompleteParams,
            RegistrySearchParams,
            RegistryServerView,
            RegistrySearchResult,
            RegistryGetParams,
            RegistryInputKind,
            RegistryInputView,
            RegistryInstallView,
            RegistryServerDetails,
            RegistryAddParams,
            RegistryAdded,
            AppResourceParams,
            UiCspView,
            AppResourceResult,
            AppClosedParams,
            AppClosedResult,
            AppCallToolParams,
            AppCallToolResult,
            AppReadResourceResult,
            ErrorKind,
            ErrorData,
            HostNoParams,
            HostDone,
            HostOpenFileParams,
            HostOpenExternalParams,
            HostCloseSettingsParams,
            HostNotifyLevel,
            HostNotifyParams,
            HostCancelLoginParams,
            HostChatOpened,
            HostPrefillParams,
            HostAnswerParams,
            HostTeardownAppsParams,
            HostAppsTornDown
        )
    };
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the protocol crate sits in the repository root")
        .to_path_buf()
}

fn type_names() -> Vec<&'static str> {
    macro_rules! names {
        ($($t:ident),*) => { vec![$(stringify!($t)),*] };
    }
    for_each_type!(names)
}

/// Camel-case key for a method in the TypeScript `Methods` object: `wave/mcp/configPaths` →
/// `mcpConfigPaths`.
fn method_key(method: &str) -> String {
    let mut parts = method.trim_start_matches("wave/").split('/');
    let mut key = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            key.push(first.to_ascii_uppercase());
            key.extend(chars);
        }
    }
    key
}

fn typescript() -> String {
    let cfg = ts_rs::Config::new().with_large_int("number");
    let mut out = String::new();
    out.push_str(&format!(
        "// Generated from protocol/src/lib.rs (wave-mcp-protocol) by `{REGENERATE}`.\n\
         // Do not edit: change the Rust declarations and regenerate. See docs/protocol.md.\n\
         /* eslint-disable */\n\n\
         export const DEFAULT_SESSION_ID = {DEFAULT_SESSION_ID:?};\n\n\
         /** JSON-RPC error code of a request that could not be carried out; `data` is an `ErrorData`. */\n\
         export const REQUEST_FAILED = {REQUEST_FAILED};\n"
    ));
    macro_rules! decls {
        ($($t:ident),*) => {$(
            out.push('\n');
            if let Some(docs) = <$t as TS>::docs() {
                out.push_str(&docs);
            }
            out.push_str("export ");
            out.push_str(&<$t as TS>::decl(&cfg));
            out.push('\n');
        )*};
    }
    for_each_type!(decls);
    // `mcpServers` objects hold arbitrary JSON.
    out.push_str("\n/** Any JSON value. */\nexport ");
    out.push_str(&<serde_json::Value as TS>::decl(&cfg));
    out.push('\n');
    out.push_str("\n/** Every custom method name. */\nexport const Methods = {\n");
    for message in MESSAGES {
        out.push_str(&format!(
            "  {}: {:?},\n",
            method_key(message.method),
            message.method
        ));
    }
    out.push_str("} as const;\n\n/** Client → sidecar requests: params and result of each. */\nexport interface Requests {\n");
    for message in MESSAGES {
        let Some(result) = message.result else {
            continue;
        };
        out.push_str(&format!(
            "  {:?}: {{ params: {}; result: {} }};\n",
            message.method, message.params, result
        ));
    }
    out.push_str("}\n\n/** Sidecar → client notifications: params of each. */\nexport interface Notifications {\n");
    for message in MESSAGES.iter().filter(|m| m.result.is_none()) {
        out.push_str(&format!("  {:?}: {};\n", message.method, message.params));
    }
    out.push_str("}\n");
    let relayed = |kind: MessageKind| -> Vec<String> {
        MESSAGES
            .iter()
            .filter(|m| m.kind == kind && m.relay == Relay::Webview)
            .map(|m| format!("{:?}", m.method))
            .collect()
    };
    let page_answers: Vec<String> = MESSAGES
        .iter()
        .filter(|m| m.relay == Relay::PageAnswers)
        .map(|m| format!("{:?}", m.method))
        .collect();
    let notifications: Vec<String> = MESSAGES
        .iter()
        .filter(|m| m.kind == MessageKind::Notification)
        .map(|m| format!("{:?}", m.method))
        .collect();
    out.push_str(&format!(
        "\n/** Every sidecar → client notification. */\n\
         export const NOTIFICATION_METHODS = [{}] as const;\n",
        notifications.join(", ")
    ));
    out.push_str(&format!(
        "\n/** Page requests the hosts forward to the sidecar unchanged. */\n\
         export const FORWARDED_REQUESTS = [{}] as const;\n\
         export type ForwardedRequest = (typeof FORWARDED_REQUESTS)[number];\n\n\
         /** Sidecar notifications the hosts push to their pages unchanged. */\n\
         export const FORWARDED_NOTIFICATIONS = [{}] as const;\n\
         export type ForwardedNotification = (typeof FORWARDED_NOTIFICATIONS)[number];\n\n\
         /** Sidecar requests the hosts pass to their chat page, with the page's answer back. */\n\
         export const PAGE_ANSWERED_REQUESTS = [{}] as const;\n\
         export type PageAnsweredRequest = (typeof PAGE_ANSWERED_REQUESTS)[number];\n",
        relayed(MessageKind::Request).join(", "),
        relayed(MessageKind::Notification).join(", "),
        page_answers.join(", "),
    ));
    out.push_str("\n/** Page → host requests (`host/*`): params and result of each. */\nexport interface HostOwnRequests {\n");
    let with_result = |direction: HostDirection, out: &mut String| {
        for message in HOST_MESSAGES.iter().filter(|m| m.direction == direction) {
            if let Some(result) = message.result {
                out.push_str(&format!(
                    "  {:?}: {{ params: {}; result: {} }};\n",
                    message.method, message.params, result
                ));
            }
        }
    };
    with_result(HostDirection::PageToHost, &mut out);
    out.push_str("}\n\n/** Host → page pushes of the host's own (`host/*`): params of each. */\nexport interface HostOwnPushes {\n");
    for message in HOST_MESSAGES
        .iter()
        .filter(|m| m.direction == HostDirection::HostToPage)
    {
        out.push_str(&format!("  {:?}: {};\n", message.method, message.params));
    }
    out.push_str(
        "}\n\n/** Host → chat page requests of the host's own (`host/*`, a push with an `id`, answered with `host/answer`). */\nexport interface HostOwnPageRequests {\n",
    );
    with_result(HostDirection::HostAsksPage, &mut out);
    out.push_str("}\n");
    out
}

/// `wave/mcp/configPaths` → `MCP_CONFIG_PATHS`.
fn kotlin_name(method: &str) -> String {
    let mut name = String::new();
    for c in method_key(method).chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

fn kotlin() -> String {
    let mut out = format!(
        "// Generated from protocol/src/lib.rs (wave-mcp-protocol) by `{REGENERATE}`.\n\
         // Do not edit: change the Rust declarations and regenerate. See docs/protocol.md.\n\n\
         package dev.wavemcp.client\n\n\
         /** Method names of the sidecar protocol and of the messages between webview and host. */\n\
         object Methods {{\n"
    );
    for message in MESSAGES {
        out.push_str(&format!(
            "    const val {} = {:?}\n",
            kotlin_name(message.method),
            message.method
        ));
    }
    for message in HOST_MESSAGES {
        out.push_str(&format!(
            "    const val HOST_{} = {:?}\n",
            kotlin_name(message.method.trim_start_matches("host/")),
            message.method
        ));
    }
    let relayed = |kind: MessageKind| -> String {
        MESSAGES
            .iter()
            .filter(|m| m.kind == kind && m.relay == Relay::Webview)
            .map(|m| kotlin_name(m.method))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let page_answers = MESSAGES
        .iter()
        .filter(|m| m.relay == Relay::PageAnswers)
        .map(|m| kotlin_name(m.method))
        .collect::<Vec<_>>()
        .join(", ");
    out.push_str(&format!(
        "\n    /** Page requests the hosts forward to the sidecar unchanged. */\n\
         \x20   val FORWARDED_REQUESTS: Set<String> = setOf({})\n\n\
         \x20   /** Sidecar notifications the hosts push to their pages unchanged. */\n\
         \x20   val FORWARDED_NOTIFICATIONS: Set<String> = setOf({})\n\n\
         \x20   /** Sidecar requests the hosts pass to their chat page, with the page's answer back. */\n\
         \x20   val PAGE_ANSWERED_REQUESTS: Set<String> = setOf({})\n}}\n",
        relayed(MessageKind::Request),
        relayed(MessageKind::Notification),
        page_answers,
    ));
    out
}

fn schema() -> String {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    macro_rules! subschemas {
        ($($t:ident),*) => {$( generator.subschema_for::<$t>(); )*};
    }
    for_each_type!(subschemas);
    let definitions = generator.take_definitions(true);
    let reference = |name: &str| json!({ "$ref": format!("#/$defs/{name}") });
    let methods: Vec<Value> = MESSAGES
        .iter()
        .map(|m| {
            let mut entry = json!({
                "method": m.method,
                "kind": match m.kind {
                    MessageKind::Request => "request",
                    MessageKind::Notification => "notification",
                },
                "direction": match m.direction {
                    Direction::ClientToServer => "clientToServer",
                    Direction::ServerToClient => "serverToClient",
                },
                "forwarded": m.relay == Relay::Webview,
                "answeredByPage": m.relay == Relay::PageAnswers,
                "params": reference(m.params),
            });
            if let Some(result) = m.result {
                entry["result"] = reference(result);
            }
            entry
        })
        .collect();
    let host_messages: Vec<Value> = HOST_MESSAGES
        .iter()
        .map(|m| {
            let mut entry = json!({
                "method": m.method,
                "direction": match m.direction {
                    HostDirection::PageToHost => "pageToHost",
                    HostDirection::HostToPage => "hostToPage",
                    HostDirection::HostAsksPage => "hostAsksPage",
                },
                "params": reference(m.params),
            });
            if let Some(result) = m.result {
                entry["result"] = reference(result);
            }
            entry
        })
        .collect();
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://wave-mcp.invalid/protocol.schema.json",
        "title": "wave-mcp sidecar protocol",
        "description": format!(
            "Custom LSP messages of `wave-mcp lsp` (see docs/protocol.md). Generated from \
             protocol/src/lib.rs by `{REGENERATE}`; do not edit. `x-wave-methods` lists every \
             method with its params and result types and whether hosts forward it between sidecar and \
             webview (`forwarded`); `x-wave-host-messages` the `host/*` messages between webview \
             and host; `$defs` holds the types. \
             Default session id: \"{DEFAULT_SESSION_ID}\"; error code of a failed request: \
             {REQUEST_FAILED} (data: ErrorData)."
        ),
        "x-wave-methods": methods,
        "x-wave-host-messages": host_messages,
        "$defs": definitions,
    });
    let mut text = serde_json::to_string_pretty(&root).expect("schema serializes");
    text.push('\n');
    text
}

/// Compares `generated` with the committed file, or rewrites it when asked to.
fn check_generated(relative: &str, generated: &str) {
    let path = repo_root().join(relative);
    if std::env::var_os("WAVE_UPDATE_GENERATED").is_some_and(|v| v == "1") {
        // CI checks the committed files; rewriting them there would make this test pass always.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "WAVE_UPDATE_GENERATED=1 with CI set: ci must check the generated files, not rewrite them"
        );
        std::fs::create_dir_all(path.parent().expect("file has a parent")).expect("create dir");
        std::fs::write(&path, generated).expect("write generated file");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let first_difference = committed
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .map_or_else(
            || committed.lines().count().min(generated.lines().count()) + 1,
            |i| i + 1,
        );
    panic!(
        "{relative} is stale (first difference at line {first_difference}); regenerate it with \
         `{REGENERATE}` and commit the result"
    );
}

#[test]
fn typescript_types_are_up_to_date() {
    check_generated(TS_FILE, &typescript());
}

#[test]
fn kotlin_method_names_are_up_to_date() {
    check_generated(KOTLIN_FILE, &kotlin());
}

#[test]
fn json_schema_is_up_to_date() {
    check_generated(SCHEMA_FILE, &schema());
}

/// Every params and result type a message names is generated, so the `Requests` map never
/// refers to a missing type.
#[test]
fn every_message_type_is_generated() {
    let names = type_names();
    for message in HOST_MESSAGES {
        assert!(names.contains(&message.params), "{}", message.method);
        if let Some(result) = message.result {
            assert!(names.contains(&result), "{}", message.method);
        }
    }
    for message in MESSAGES {
        assert!(
            names.contains(&message.params),
            "{}: params type {} is not in for_each_type!",
            message.method,
            message.params
        );
        if let Some(result) = message.result {
            assert!(
                names.contains(&result),
                "{}: result type {result} is not in for_each_type!",
                message.method
            );
        }
    }
}

#[test]
fn every_method_is_documented() {
    let docs = std::fs::read_to_string(repo_root().join(DOCS_FILE)).expect("docs/protocol.md");
    let missing: Vec<&str> = METHODS
        .iter()
        .copied()
        .chain(HOST_MESSAGES.iter().map(|m| m.method))
        .filter(|method| !docs.contains(&format!("### `{method}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "{DOCS_FILE} has no \"### `<method>`\" section for: {missing:?}"
    );
}

#[test]
fn methods_are_unique_and_namespaced() {
    let mut seen = std::collections::HashSet::new();
    for method in METHODS {
        assert!(method.starts_with("wave/"), "{method}");
        assert!(seen.insert(method), "{method} declared twice");
    }
    assert_eq!(METHODS.len(), MESSAGES.len());
}

#[test]
fn message_traits_carry_the_declared_methods() {
    use ls_types::notification::Notification;
    use ls_types::request::Request;
    assert_eq!(<McpServers as Request>::METHOD, "wave/mcp/servers");
    assert_eq!(<McpConnect as Request>::METHOD, "wave/mcp/connect");
    assert_eq!(<McpDisconnect as Request>::METHOD, "wave/mcp/disconnect");
    assert_eq!(<McpDelete as Request>::METHOD, "wave/mcp/delete");
    assert_eq!(<McpConfigPaths as Request>::METHOD, "wave/mcp/configPaths");
    assert_eq!(
        <McpServersChanged as Notification>::METHOD,
        "wave/mcp/serversChanged"
    );
    assert_eq!(<SessionCreate as Request>::METHOD, "wave/session/create");
    assert_eq!(<SessionSend as Request>::METHOD, "wave/session/send");
    assert_eq!(
        <SessionMessage as Notification>::METHOD,
        "wave/session/message"
    );
    assert_eq!(
        <SessionTurnEnded as Notification>::METHOD,
        "wave/session/turnEnded"
    );
    assert_eq!(<SessionDestroy as Request>::METHOD, "wave/session/destroy");
    assert_eq!(<SessionHistory as Request>::METHOD, "wave/session/history");
}

/// The hosts relay exactly what the webview needs: its requests (never session create/destroy
/// or the sidecar's own openUrl request) and every notification.
#[test]
fn forwarded_set_is_what_the_webview_uses() {
    let forwarded: Vec<&str> = MESSAGES
        .iter()
        .filter(|m| m.relay == Relay::Webview)
        .map(|m| m.method)
        .collect();
    for method in [
        "wave/mcp/openUrl",
        "wave/session/create",
        "wave/session/destroy",
    ] {
        assert!(!forwarded.contains(&method), "{method}");
    }
    for method in [
        "wave/session/send",
        "wave/session/history",
        "wave/session/message",
    ] {
        assert!(forwarded.contains(&method), "{method}");
    }
    for m in MESSAGES.iter().filter(|m| m.relay == Relay::Webview) {
        assert!(
            m.kind == MessageKind::Notification || m.direction == Direction::ClientToServer,
            "{}: a forwarded request goes from the page to the sidecar",
            m.method
        );
    }
    for m in MESSAGES.iter().filter(|m| m.relay == Relay::PageAnswers) {
        assert!(
            m.kind == MessageKind::Request && m.direction == Direction::ServerToClient,
            "{}: a page-answered message is a sidecar request",
            m.method
        );
    }
    for m in HOST_MESSAGES {
        assert!(m.method.starts_with("host/"), "{}", m.method);
    }
}

/// The wire shape: camelCase, optional fields left out, params accept `{}`.
#[test]
fn wire_shape_is_camel_case() {
    let snapshot = ServersSnapshot {
        version: 7,
        session_id: DEFAULT_SESSION_ID.into(),
        servers: vec![McpServerView {
            name: "a".into(),
            source: McpSource::Project,
            transport: "stdio".into(),
            command: Some("x".into()),
            args: vec![],
            url: None,
            status: McpStatus::NeedsAuth,
            error: Some("boom".into()),
            tool_count: 0,
            tools: vec![],
            tools_from_cache: false,
            last_connected_at: None,
            config_path: Some("/p/.mcp.json".into()),
            read_only: false,
            signed_in: false,
            approval: None,
            icons: vec![],
            protocol_version: None,
        }],
    };
    assert_eq!(
        serde_json::to_value(&snapshot).unwrap(),
        json!({
            "version": 7,
            "sessionId": "default",
            "servers": [{
                "name": "a", "source": "project", "transport": "stdio", "command": "x",
                "args": [], "status": "needs-auth", "error": "boom", "toolCount": 0, "tools": [],
                "toolsFromCache": false, "configPath": "/p/.mcp.json", "readOnly": false,
                "signedIn": false, "icons": []
            }]
        })
    );
    let params: SessionParams = serde_json::from_value(json!({})).unwrap();
    assert_eq!(params.session_id, None);
    let delete: DeleteParams =
        serde_json::from_value(json!({"name": "a", "source": "user", "sessionId": "s"})).unwrap();
    assert_eq!(delete.source, McpSource::User);
}
