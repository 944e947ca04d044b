// The sidecar's wire types (docs/protocol.md), written by hand from `../protocol.schema.json`,
// which is generated from protocol/src/lib.rs. `SchemaConformanceTest` fails when a type here
// misses a field of the schema or gets its requiredness wrong.
//
// Every constructor parameter has a default, so Kotlin emits a no-argument constructor and Gson
// uses it: a field absent on the wire keeps its default instead of becoming a hidden null.

package dev.wavemcp.client

import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.annotations.SerializedName

/** The session every wave/mcp request acts on when it names none. */
const val DEFAULT_SESSION_ID = "default"

/** JSON-RPC code of a well-formed request the sidecar could not carry out (`data`: [ErrorData]). */
const val REQUEST_FAILED = -32803

// Method names, and which of them the hosts forward between sidecar and webview, are generated
// from protocol/ into Methods.generated.kt.

enum class McpSource {
    @SerializedName("user") USER,
    @SerializedName("project") PROJECT,
    @SerializedName("plugin") PLUGIN,
    @SerializedName("constructor") CONSTRUCTOR;

    val wire: String get() = name.lowercase()
}

enum class McpStatus {
    @SerializedName("connected") CONNECTED,
    @SerializedName("connecting") CONNECTING,
    @SerializedName("reconnecting") RECONNECTING,
    @SerializedName("error") ERROR,
    @SerializedName("disconnected") DISCONNECTED,
    /** A remote server answered 401: sign in ([WaveSidecar.login], AUTH-1). */
    @SerializedName("needs-auth") NEEDS_AUTH,
    /** A project server the user has not approved as written: nothing of it runs ([WaveSidecar.approve], TRUST-1). */
    @SerializedName("needs-approval") NEEDS_APPROVAL,
}

data class McpToolView(
    val name: String = "",
    val fullName: String = "",
    val description: String? = null,
    /** Switched on by the entry's `enabledTools` / `disabledTools` (BUD-1). */
    val enabled: Boolean = true,
    /** The user allowed this tool for another definition: the permission no longer applies (TRUST-6). */
    val definitionChanged: Boolean = false,
    /** Hidden characters were removed from the server's text for this tool (TRUST-7). */
    val hiddenText: Boolean = false,
    /** The server's title and hints for the tool (SRV-4). */
    val annotations: ToolAnnotationsView? = null,
    /** Icons a page may show (SRV-4). */
    val icons: List<IconView> = emptyList(),
    /** The tool's MCP Apps metadata (`_meta.ui`, APPS-1). */
    val ui: ToolUiView? = null,
)

/** A tool's `_meta.ui`: its app (`ui://`) and who may call it (APPS-1). */
data class ToolUiView(val resourceUri: String? = null, val visibility: List<String>? = null)

/** An icon a page may show: `https:` or a `data:` PNG, JPEG, GIF or WebP image (SRV-4). */
data class IconView(
    val src: String = "",
    val mimeType: String? = null,
    val sizes: List<String> = emptyList(),
)

data class McpServerView(
    val name: String = "",
    val source: McpSource? = null,
    val transport: String = "",
    val command: String? = null,
    val args: List<String> = emptyList(),
    val url: String? = null,
    val status: McpStatus? = null,
    val error: String? = null,
    val toolCount: Int = 0,
    val tools: List<McpToolView> = emptyList(),
    val toolsFromCache: Boolean = false,
    val lastConnectedAt: String? = null,
    val configPath: String? = null,
    val readOnly: Boolean = false,
    /** Stored sign-in credentials: offer "Sign out" (AUTH-9). */
    val signedIn: Boolean = false,
    /** With `status` `needs-approval`: what approving would run (TRUST-1, TRUST-3). */
    val approval: ServerApproval? = null,
    /** The server's icons a page may show (SRV-4). */
    val icons: List<IconView> = emptyList(),
    /** The MCP revision negotiated (`2026-07-28`, `2025-11-25`, ...), or the last one when not connected (SPEC-1). */
    val protocolVersion: String? = null,
)

/** One project server waiting for the user's approval, exactly as written (TRUST-3). */
data class ServerApproval(
    val name: String = "",
    /** Absolute path of the project's `.mcp.json`. */
    val configPath: String = "",
    val transport: String = "",
    /** The stdio command as written (`${'$'}{VAR}` not expanded). */
    val command: String? = null,
    val args: List<String> = emptyList(),
    val url: String? = null,
    /** Names of the environment variables the entry sets, never their values. */
    val envKeys: List<String> = emptyList(),
    /** The `${'$'}{VAR}` names the entry reads from the user's environment. */
    val variables: List<String> = emptyList(),
    /** Approved before in another form: it changed since (TRUST-4). */
    val changed: Boolean = false,
    /** The source of a same-named server approving replaces for this project. */
    val shadows: McpSource? = null,
    /** The IDE does not trust the workspace: no approval until it does (TRUST-9). */
    val workspaceUntrusted: Boolean = false,
)

/** Params of the sidecar's `wave/session/approveServers` request (TRUST-3). */
data class SessionApproveServersParams(val sessionId: String = "", val servers: List<ServerApproval> = emptyList())

/** The names the user approved; the others stay `needs-approval`. */
data class SessionApproveServersResult(val approved: List<String> = emptyList())

/** A tool's MCP annotations as the server declared them: hints, never guarantees (TRUST-5). */
data class ToolAnnotationsView(
    val title: String? = null,
    val readOnlyHint: Boolean? = null,
    val destructiveHint: Boolean? = null,
    val idempotentHint: Boolean? = null,
    val openWorldHint: Boolean? = null,
)

/** Params of the sidecar's `wave/session/confirmTool` request: a tool call no allow rule covers (TRUST-5). */
data class SessionConfirmToolParams(
    val sessionId: String = "",
    val turn: Long = 0,
    val toolCallId: String = "",
    val server: String = "",
    val tool: String = "",
    val fullName: String = "",
    val arguments: JsonObject = JsonObject(),
    val annotations: ToolAnnotationsView? = null,
    /** Allowed before for another definition (TRUST-6). */
    val definitionChanged: Boolean = false,
)

/** The user's answer to `wave/session/confirmTool`. */
enum class ToolDecision {
    @SerializedName("once") ONCE,
    @SerializedName("session") SESSION,
    @SerializedName("always") ALWAYS,
    @SerializedName("deny") DENY,
}

data class SessionConfirmToolResult(val decision: ToolDecision? = null)

/** Payload of `wave/workspace/trust`: the IDE's trust in the opened project (TRUST-9). */
data class WorkspaceTrustParams(val trusted: Boolean = true)

data class ModelOptions(
    val baseUrl: String? = null,
    val apiKey: String? = null,
    val model: String? = null,
)

data class InitializationOptions(
    val mcpServers: JsonObject? = null,
    val home: String? = null,
    val workdir: String? = null,
    val model: ModelOptions? = null,
    /** False when the IDE does not trust the project (TRUST-9). */
    val workspaceTrusted: Boolean? = null,
    /** The client shows MCP Apps in its chat page (APPS-1): the JCEF page does. */
    val apps: Boolean? = null,
)

data class SessionParams(val sessionId: String? = null)

data class ServerParams(val name: String = "", val sessionId: String? = null)

data class DeleteParams(val name: String = "", val source: McpSource? = null, val sessionId: String? = null)

/** Params of `wave/mcp/setToolEnabled` (BUD-2). */
data class SetToolEnabledParams(
    val name: String = "",
    val source: McpSource? = null,
    val tool: String = "",
    val enabled: Boolean = true,
    val sessionId: String? = null,
)

/** Params of the sidecar's `wave/mcp/openUrl` request (AUTH-2). */
data class OpenUrlParams(val sessionId: String = "", val name: String = "", val url: String = "", val purpose: OpenUrlPurpose? = null)

/** Why the sidecar asks to open a URL; null: sign-in. */
enum class OpenUrlPurpose {
    @SerializedName("signIn") SIGN_IN,
    @SerializedName("elicitation") ELICITATION,
}

/** `opened = false`: the client could not open it; the sidecar then uses `$BROWSER` or the platform's opener. */
data class OpenUrlResult(val opened: Boolean = false)

data class ServersSnapshot(
    val version: Long = 0,
    val sessionId: String = "",
    val servers: List<McpServerView> = emptyList(),
) {
    fun server(name: String): McpServerView? = servers.firstOrNull { it.name == name }
}

data class ConfigPaths(
    val userConfigPath: String = "",
    val projectConfigPath: String = "",
    val projectName: String = "",
    val workdir: String = "",
)

/** One argument of a prompt, in declared order (PRM-1). */
data class McpPromptArgument(val name: String = "", val description: String? = null, val required: Boolean = false)

/** A server's prompt, the chat's slash command `/<fullName>` (PRM-1). */
data class McpPromptView(
    val server: String = "",
    val name: String = "",
    val fullName: String = "",
    val description: String? = null,
    val arguments: List<McpPromptArgument> = emptyList(),
    val fromCache: Boolean = false,
)

/** Where an entry of a server's log came from (SRV-2). */
enum class LogSourceView {
    @SerializedName("message") MESSAGE,
    @SerializedName("stderr") STDERR,
}

/** One entry of a server's log (SRV-2): the server's own text, to show as text. */
data class LogEntryView(
    val time: String = "",
    val source: LogSourceView? = null,
    val level: String? = null,
    val logger: String? = null,
    val text: String = "",
)

/** Result of `wave/mcp/logs`: a server's log, oldest first; `dropped` older entries are gone. */
data class McpLogsResult(val entries: List<LogEntryView> = emptyList(), val dropped: Long = 0)

/** Params of `wave/mcp/logAppended`: entries appended to one server's log, in order (SRV-2). */
data class McpLogAppendedParams(val sessionId: String = "", val name: String = "", val entries: List<LogEntryView> = emptyList())

data class McpPromptsResult(val sessionId: String = "", val prompts: List<McpPromptView> = emptyList())

/** A server's resource, mentioned in the chat as `@<server>:<uri>` (PRM-3). */
data class McpResourceView(
    val server: String = "",
    val uri: String = "",
    val name: String = "",
    val mimeType: String? = null,
    val description: String? = null,
    val fromCache: Boolean = false,
)

data class McpResourceTemplateView(
    val server: String = "",
    val uriTemplate: String = "",
    val name: String = "",
    val mimeType: String? = null,
    val description: String? = null,
    val fromCache: Boolean = false,
)

data class McpResourcesResult(
    val sessionId: String = "",
    val resources: List<McpResourceView> = emptyList(),
    val templates: List<McpResourceTemplateView> = emptyList(),
)

enum class CompletionRefKind {
    @SerializedName("ref/prompt") PROMPT,
    @SerializedName("ref/resource") RESOURCE,
}

data class CompletionRef(
    val type: CompletionRefKind? = null,
    val name: String? = null,
    val uri: String? = null,
)

data class CompletionArgument(val name: String = "", val value: String = "")

data class CompletionContext(val arguments: Map<String, String> = emptyMap())

data class McpCompleteParams(
    val sessionId: String? = null,
    val server: String = "",
    val ref: CompletionRef = CompletionRef(),
    val argument: CompletionArgument = CompletionArgument(),
    val context: CompletionContext? = null,
)

data class McpCompleteResult(
    val values: List<String> = emptyList(),
    val total: Long? = null,
    val hasMore: Boolean? = null,
)

data class SessionCreateParams(
    val workdir: String? = null,
    val mcpServers: JsonObject? = null,
    val model: ModelOptions? = null,
)

data class SessionCreated(val sessionId: String = "")

data class SessionSendParams(val sessionId: String = "", val text: String = "")

data class SessionSendAccepted(val sessionId: String = "", val turn: Long = 0)

enum class ChatRole {
    @SerializedName("user") USER,
    @SerializedName("assistant") ASSISTANT,
    @SerializedName("tool") TOOL,
}

data class ChatToolCall(
    val id: String = "",
    val name: String = "",
    val arguments: String = "",
    /** The called tool has an app, shown under the call (APPS-2). */
    val app: ChatAppRef? = null,
)

/** The app of a tool call (MCP Apps). */
data class ChatAppRef(val server: String = "", val tool: String = "", val resourceUri: String = "")

/** A tool call's full result when its tool has an app (APPS-5). */
data class ChatAppResult(
    val server: String = "",
    val tool: String = "",
    val resourceUri: String = "",
    /** The MCP `CallToolResult` as the server sent it. */
    val result: JsonElement = JsonNull.INSTANCE,
)

data class ChatMessage(
    val role: ChatRole? = null,
    val content: String = "",
    val toolCalls: List<ChatToolCall> = emptyList(),
    val toolName: String? = null,
    val isError: Boolean = false,
    val isMeta: Boolean = false,
    /** For `tool`: the call it answers. */
    val toolCallId: String? = null,
    /** For `tool`, when the tool has an app: its full result (APPS-5). */
    val app: ChatAppResult? = null,
)

/** Params of `wave/app/resource` and `wave/app/readResource` (MCP Apps). */
data class AppResourceParams(val sessionId: String = "", val server: String = "", val uri: String = "")

/** The domains an app's resource declares (`_meta.ui.csp`). */
data class UiCspView(
    val connectDomains: List<String>? = null,
    val resourceDomains: List<String>? = null,
    val frameDomains: List<String>? = null,
    val baseUriDomains: List<String>? = null,
)

/** Result of `wave/app/resource`: the app's HTML, its `_meta.ui`, the sandbox URL to frame (APPS-1, APPS-2). */
data class AppResourceResult(
    val uri: String = "",
    val html: String = "",
    val mimeType: String = "",
    val csp: UiCspView? = null,
    val permissions: JsonObject? = null,
    val domain: String? = null,
    val prefersBorder: Boolean? = null,
    val sandboxUrl: String = "",
)

data class AppClosedParams(val url: String = "")

data class AppClosedResult(val forgotten: Boolean = false)

/** Params of `wave/app/callTool`: an app's `tools/call` (APPS-4). */
data class AppCallToolParams(
    val sessionId: String = "",
    val server: String = "",
    val name: String = "",
    val arguments: JsonObject? = null,
    val toolCallId: String? = null,
)

/** Result of `wave/app/callTool`: the MCP `CallToolResult` (any JSON object; the page reads it). */
class AppCallToolResult

/** Result of `wave/app/readResource`: the MCP `ReadResourceResult` (any JSON object). */
class AppReadResourceResult

data class SessionMessageParams(val sessionId: String = "", val turn: Long = 0, val index: Long = 0, val message: ChatMessage = ChatMessage())

data class SessionHistoryParams(val sessionId: String = "")

data class SessionHistoryEntry(val turn: Long = 0, val index: Long = 0, val message: ChatMessage = ChatMessage())

/** CHAT-1: the whole conversation, as the sidecar records it (no client keeps a transcript). */
data class SessionHistoryResult(
    val sessionId: String = "",
    val messages: List<SessionHistoryEntry> = emptyList(),
    val runningTurns: List<Long> = emptyList(),
)

data class SessionTurnEndedParams(val sessionId: String = "", val turn: Long = 0, val error: String? = null, val cancelled: Boolean = false)

/** LONG-1: assistant text as it streams (display only; the complete message follows). */
data class SessionDeltaParams(val sessionId: String = "", val turn: Long = 0, val messageIndex: Long = 0, val text: String = "")

/** LONG-2: progress of a running MCP tool call. */
data class SessionProgressParams(
    val sessionId: String = "",
    val turn: Long = 0,
    val toolCallId: String = "",
    val progress: Double = 0.0,
    val total: Double? = null,
    val message: String? = null,
)

/** LONG-3: Stop. */
data class SessionCancelParams(val sessionId: String = "")

data class SessionCancelResult(val sessionId: String = "", val cancelled: Boolean = false)

data class SessionDestroyParams(val sessionId: String = "")

enum class DestroyState {
    @SerializedName("destroyed") DESTROYED,
    @SerializedName("queued") QUEUED,
}

data class SessionDestroyed(val sessionId: String = "", val state: DestroyState? = null)

enum class ErrorKind {
    @SerializedName("unknownSession") UNKNOWN_SESSION,
    @SerializedName("unknownServer") UNKNOWN_SERVER,
    @SerializedName("readOnly") READ_ONLY,
    @SerializedName("fileMissing") FILE_MISSING,
    @SerializedName("entryMissing") ENTRY_MISSING,
    @SerializedName("permissionDenied") PERMISSION_DENIED,
    @SerializedName("invalidFile") INVALID_FILE,
    @SerializedName("io") IO,
    @SerializedName("chatUnavailable") CHAT_UNAVAILABLE,
    @SerializedName("shuttingDown") SHUTTING_DOWN,
    @SerializedName("signInFailed") SIGN_IN_FAILED,
    @SerializedName("signInCancelled") SIGN_IN_CANCELLED,
    /** A project server the user has not approved (TRUST-1). */
    @SerializedName("needsApproval") NEEDS_APPROVAL,
    /** The IDE does not trust the project: its servers cannot be approved (TRUST-9). */
    @SerializedName("untrusted") UNTRUSTED,
    /** The MCP Registry failed, or the server offers nothing wave-mcp installs (USE-3). */
    @SerializedName("registry") REGISTRY,
    /** The server has no such app, or the client cannot show apps (APPS-1). */
    @SerializedName("noApp") NO_APP,
    /** An app asked for another server's tool, one not visible to apps, or a declined call (APPS-4). */
    @SerializedName("appRefused") APP_REFUSED,
}

data class ErrorData(val kind: ErrorKind? = null, val path: String? = null)

// ---- The MCP Registry (USE-3): the settings page's "Browse registry" ----

/** Params of `wave/registry/search`. */
data class RegistrySearchParams(val query: String = "", val cursor: String? = null)

/** One server of a registry search (its latest version); `install` is absent when wave-mcp cannot install it. */
data class RegistryServerView(
    val name: String = "",
    val title: String? = null,
    val description: String = "",
    val version: String? = null,
    val install: String? = null,
)

/** Result of `wave/registry/search`. */
data class RegistrySearchResult(
    val registryUrl: String = "",
    val servers: List<RegistryServerView> = emptyList(),
    val nextCursor: String? = null,
)

/** Params of `wave/registry/get`. */
data class RegistryGetParams(val name: String = "", val version: String? = null)

enum class RegistryInputKind {
    @SerializedName("environmentVariable") ENVIRONMENT_VARIABLE,
    @SerializedName("argument") ARGUMENT,
    @SerializedName("header") HEADER,
    @SerializedName("urlVariable") URL_VARIABLE,
}

/** A value a registry server needs; `placeholder` is the `${VAR}` in the entry (absent: optional, left out). */
data class RegistryInputView(
    val name: String = "",
    val kind: RegistryInputKind? = null,
    val placeholder: String? = null,
    val required: Boolean = false,
    val secret: Boolean = false,
    /** An argument the server takes more than once (`isRepeated`): the entry has one value. */
    val repeated: Boolean = false,
    val description: String? = null,
    val default: String? = null,
)

/** What adding a registry server writes. */
data class RegistryInstallView(
    val how: String = "",
    val entry: com.google.gson.JsonElement = com.google.gson.JsonNull.INSTANCE,
    val inputs: List<RegistryInputView> = emptyList(),
)

/** Result of `wave/registry/get`. */
data class RegistryServerDetails(
    val name: String = "",
    val title: String? = null,
    val description: String = "",
    val version: String? = null,
    val websiteUrl: String? = null,
    val repositoryUrl: String? = null,
    val install: RegistryInstallView? = null,
    val unsupported: String? = null,
)

/** Params of `wave/registry/add`. */
data class RegistryAddParams(
    val name: String = "",
    val server: String = "",
    val version: String? = null,
    val scope: McpSource? = null,
    val sessionId: String? = null,
)

/** Result of `wave/registry/add`. */
data class RegistryAdded(
    val path: String = "",
    val install: RegistryInstallView = RegistryInstallView(),
    val servers: ServersSnapshot = ServersSnapshot(),
)

// ---- host/*: between the shared webview and its host (docs/protocol.md) ----

/** `{}`: a host message without params. */
class HostNoParams

/** `null`: the answer of a host request that returns nothing. */
object HostDone

data class HostOpenFileParams(val path: String = "")

/** Params of `host/openExternal`: a link of the assistant's answer (USE-4). */
data class HostOpenExternalParams(val url: String = "")

data class HostCloseSettingsParams(val prefill: String? = null)

enum class HostNotifyLevel {
    @SerializedName("info") INFO,
    @SerializedName("warning") WARNING,
    @SerializedName("error") ERROR,
}

data class HostNotifyParams(val level: HostNotifyLevel? = null, val message: String = "")

data class HostCancelLoginParams(val name: String = "", val sessionId: String? = null)

data class HostChatOpened(val prefill: String? = null)

data class HostPrefillParams(val text: String = "")

// ---- elicitation (LONG-5, LONG-6): a server asks the user; the chat page answers ----

enum class ElicitMode {
    @SerializedName("form") FORM,
    @SerializedName("url") URL,
}

/** Params of the sidecar's `wave/session/elicit` request (answered by the chat page). */
data class SessionElicitParams(
    val sessionId: String = "",
    val server: String = "",
    val mode: ElicitMode? = null,
    val message: String = "",
    val requestedSchema: JsonObject? = null,
    val url: String? = null,
    val elicitationId: String? = null,
)

enum class ElicitAction {
    @SerializedName("accept") ACCEPT,
    @SerializedName("decline") DECLINE,
    @SerializedName("cancel") CANCEL,
}

data class SessionElicitResult(val action: ElicitAction? = null, val content: JsonObject? = null)

data class SessionElicitationCompleteParams(val sessionId: String = "", val server: String = "", val elicitationId: String = "")

/** Params of the page's `host/answer`: its answer to the page request with this id. */
data class HostAnswerParams(val id: Long = 0, val result: com.google.gson.JsonElement? = null, val error: String? = null)

/** `host/teardownApps` (APPS-3): the host asks the chat page to tear its live app views down. */
data class HostTeardownAppsParams(val reason: String = "")

/** The chat page's answer to `host/teardownApps`: live views torn down, apps that answered. */
data class HostAppsTornDown(val total: Int = 0, val answered: Int = 0)
