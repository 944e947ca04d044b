// Generated from protocol/src/lib.rs (wave-mcp-protocol) by `WAVE_UPDATE_GENERATED=1 cargo test -p wave-mcp-protocol`.
// Do not edit: change the Rust declarations and regenerate. See docs/protocol.md.

package dev.wavemcp.client

/** Method names of the sidecar protocol and of the messages between webview and host. */
object Methods {
    const val MCP_SERVERS = "wave/mcp/servers"
    const val MCP_CONNECT = "wave/mcp/connect"
    const val MCP_DISCONNECT = "wave/mcp/disconnect"
    const val MCP_DELETE = "wave/mcp/delete"
    const val MCP_SET_TOOL_ENABLED = "wave/mcp/setToolEnabled"
    const val MCP_LOGIN = "wave/mcp/login"
    const val MCP_LOGOUT = "wave/mcp/logout"
    const val MCP_OPEN_URL = "wave/mcp/openUrl"
    const val MCP_CONFIG_PATHS = "wave/mcp/configPaths"
    const val MCP_PROMPTS = "wave/mcp/prompts"
    const val MCP_RESOURCES = "wave/mcp/resources"
    const val MCP_COMPLETE = "wave/mcp/complete"
    const val MCP_LOGS = "wave/mcp/logs"
    const val MCP_LOG_APPENDED = "wave/mcp/logAppended"
    const val MCP_SERVERS_CHANGED = "wave/mcp/serversChanged"
    const val SESSION_CREATE = "wave/session/create"
    const val SESSION_SEND = "wave/session/send"
    const val SESSION_HISTORY = "wave/session/history"
    const val SESSION_MESSAGE = "wave/session/message"
    const val SESSION_TURN_ENDED = "wave/session/turnEnded"
    const val SESSION_DELTA = "wave/session/delta"
    const val SESSION_PROGRESS = "wave/session/progress"
    const val SESSION_CANCEL = "wave/session/cancel"
    const val SESSION_DESTROY = "wave/session/destroy"
    const val SESSION_ELICIT = "wave/session/elicit"
    const val SESSION_ELICITATION_COMPLETE = "wave/session/elicitationComplete"
    const val MCP_APPROVE = "wave/mcp/approve"
    const val MCP_REVOKE = "wave/mcp/revoke"
    const val SESSION_APPROVE_SERVERS = "wave/session/approveServers"
    const val SESSION_CONFIRM_TOOL = "wave/session/confirmTool"
    const val WORKSPACE_TRUST = "wave/workspace/trust"
    const val REGISTRY_SEARCH = "wave/registry/search"
    const val REGISTRY_GET = "wave/registry/get"
    const val REGISTRY_ADD = "wave/registry/add"
    const val APP_RESOURCE = "wave/app/resource"
    const val APP_CLOSED = "wave/app/closed"
    const val APP_CALL_TOOL = "wave/app/callTool"
    const val APP_READ_RESOURCE = "wave/app/readResource"
    const val HOST_OPEN_FILE = "host/openFile"
    const val HOST_CLOSE_SETTINGS = "host/closeSettings"
    const val HOST_OPEN_SETTINGS = "host/openSettings"
    const val HOST_NOTIFY = "host/notify"
    const val HOST_CANCEL_LOGIN = "host/cancelLogin"
    const val HOST_CHAT_OPENED = "host/chatOpened"
    const val HOST_PREFILL = "host/prefill"
    const val HOST_SIDECAR_RESTARTED = "host/sidecarRestarted"
    const val HOST_ANSWER = "host/answer"
    const val HOST_OPEN_EXTERNAL = "host/openExternal"
    const val HOST_TEARDOWN_APPS = "host/teardownApps"

    /** Page requests the hosts forward to the sidecar unchanged. */
    val FORWARDED_REQUESTS: Set<String> = setOf(MCP_SERVERS, MCP_CONNECT, MCP_DISCONNECT, MCP_DELETE, MCP_SET_TOOL_ENABLED, MCP_LOGIN, MCP_LOGOUT, MCP_CONFIG_PATHS, MCP_PROMPTS, MCP_RESOURCES, MCP_COMPLETE, MCP_LOGS, SESSION_SEND, SESSION_HISTORY, SESSION_CANCEL, MCP_APPROVE, MCP_REVOKE, REGISTRY_SEARCH, REGISTRY_GET, REGISTRY_ADD, APP_RESOURCE, APP_CLOSED, APP_CALL_TOOL, APP_READ_RESOURCE)

    /** Sidecar notifications the hosts push to their pages unchanged. */
    val FORWARDED_NOTIFICATIONS: Set<String> = setOf(MCP_LOG_APPENDED, MCP_SERVERS_CHANGED, SESSION_MESSAGE, SESSION_TURN_ENDED, SESSION_DELTA, SESSION_PROGRESS, SESSION_ELICITATION_COMPLETE)

    /** Sidecar requests the hosts pass to their chat page, with the page's answer back. */
    val PAGE_ANSWERED_REQUESTS: Set<String> = setOf(SESSION_ELICIT, SESSION_APPROVE_SERVERS, SESSION_CONFIRM_TOOL)
}
