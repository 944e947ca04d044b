// TRUST-3, TRUST-5: the sidecar's consent questions, typed. `wave/session/approveServers` (project
// servers a turn would run) and `wave/session/confirmTool` (a tool call no allow rule covers) are
// sidecar-to-client requests the chat page answers (`Relay::PageAnswers`). The client hands them
// to a [ConsentHandler]: the IntelliJ layer may set its own; the default, [PageConsent], relays
// them to the chat page like `wave/session/elicit` and checks what the page answers before the
// sidecar sees it.

package dev.wavemcp.client

import com.google.gson.JsonElement

/**
 * Answers the sidecar's consent questions. Runs on a pool thread and may block until the user
 * answered; a throw is an error reply, which approves nothing (TRUST-3) or declines the call
 * (TRUST-5).
 */
interface ConsentHandler {
    /** The names of [SessionApproveServersParams.servers] the user approved (others stay `needs-approval`). */
    fun approveServers(params: SessionApproveServersParams): SessionApproveServersResult

    /** Once, for this session, always, or deny. */
    fun confirmTool(params: SessionConfirmToolParams): SessionConfirmToolResult
}

/** The default [ConsentHandler]: the chat page that is showing asks the user (its cards). */
class PageConsent(private val page: PageRequestHandler) : ConsentHandler {
    override fun approveServers(params: SessionApproveServersParams): SessionApproveServersResult =
        Consent.approval(params, page.answer(Methods.SESSION_APPROVE_SERVERS, WIRE_GSON.toJsonTree(params)))

    override fun confirmTool(params: SessionConfirmToolParams): SessionConfirmToolResult =
        Consent.decision(page.answer(Methods.SESSION_CONFIRM_TOOL, WIRE_GSON.toJsonTree(params)))
}

object Consent {
    /** The consent requests, answered through a [ConsentHandler] rather than the generic page relay. */
    val METHODS: Set<String> = setOf(Methods.SESSION_APPROVE_SERVERS, Methods.SESSION_CONFIRM_TOOL)

    /**
     * A page's answer to `approveServers`, checked: an object whose `approved` is an array of
     * strings. Only names that were asked count, each once, in the order asked; anything else in
     * the answer approves nothing more. A malformed answer throws (an error reply: nothing approved).
     */
    fun approval(asked: SessionApproveServersParams, answer: JsonElement): SessionApproveServersResult {
        require(answer.isJsonObject) { "the answer to ${Methods.SESSION_APPROVE_SERVERS} is not an object" }
        val list = answer.asJsonObject.get("approved")
        require(list != null && list.isJsonArray) { "the answer to ${Methods.SESSION_APPROVE_SERVERS} has no approved list" }
        val named = list.asJsonArray.map { e ->
            require(e.isJsonPrimitive && e.asJsonPrimitive.isString) { "approved names must be strings" }
            e.asString
        }.toSet()
        return SessionApproveServersResult(asked.servers.map { it.name }.filter { it in named }.distinct())
    }

    /** A page's answer to `confirmTool`, checked: `decision` is one of the four. Else it throws (a decline). */
    fun decision(answer: JsonElement): SessionConfirmToolResult {
        require(answer.isJsonObject) { "the answer to ${Methods.SESSION_CONFIRM_TOOL} is not an object" }
        val raw = answer.asJsonObject.get("decision")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString
        val decision = ToolDecision.entries.firstOrNull { wireName(it) == raw }
            ?: throw IllegalArgumentException("unknown decision ${raw ?: "(none)"} for ${Methods.SESSION_CONFIRM_TOOL}")
        return SessionConfirmToolResult(decision)
    }

    private fun wireName(d: ToolDecision): String =
        ToolDecision::class.java.getField(d.name).getAnnotation(com.google.gson.annotations.SerializedName::class.java).value
}
