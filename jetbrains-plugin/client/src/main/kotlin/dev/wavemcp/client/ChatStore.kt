// What the chat page shows, kept by the host so the page can be hidden or reloaded without
// losing the conversation or a pending prefill (the same as the VS Code extension's chatStore.ts).

package dev.wavemcp.client

import com.google.gson.JsonArray
import com.google.gson.JsonObject

class ChatStore(val sessionId: String = DEFAULT_SESSION_ID) {
    private val messages = mutableListOf<SessionMessageParams>()
    private val running = linkedSetOf<Long>()
    private var pendingPrefill: String? = null

    @Synchronized
    fun message(params: SessionMessageParams): Boolean {
        if (params.sessionId != sessionId) return false
        val m = params.message
        val duplicateUser = m.role == ChatRole.USER &&
            messages.any { it.turn == params.turn && it.message.role == ChatRole.USER && it.message.content == m.content }
        if (!duplicateUser) messages += params
        return true
    }

    /** The user's own message, recorded once the sidecar accepted it. */
    @Synchronized
    fun sent(turn: Long, text: String) {
        running += turn
        if (messages.none { it.turn == turn && it.message.role == ChatRole.USER }) {
            messages += SessionMessageParams(sessionId, turn, ChatMessage(role = ChatRole.USER, content = text))
        }
    }

    @Synchronized
    fun turnEnded(params: SessionTurnEndedParams): Boolean {
        if (params.sessionId != sessionId) return false
        running -= params.turn
        return true
    }

    /** A prefill for a chat page that is not showing yet; taken by the next [snapshot]. */
    @Synchronized
    fun setPrefill(text: String?) {
        pendingPrefill = text
    }

    @Synchronized
    fun pendingPrefill(): String? = pendingPrefill

    /** `host/chatState`'s answer (`ChatHostState` of the webview's hostApi.ts). */
    @Synchronized
    fun snapshot(takePrefill: Boolean = true): JsonObject {
        val state = JsonObject()
        state.addProperty("sessionId", sessionId)
        state.add("messages", WIRE_GSON.toJsonTree(messages.toList()))
        state.add("runningTurns", JsonArray().apply { running.forEach { add(it) } })
        if (takePrefill && pendingPrefill != null) {
            state.addProperty("prefill", pendingPrefill)
            pendingPrefill = null
        }
        return state
    }

    @Synchronized
    fun reset() {
        messages.clear()
        running.clear()
    }
}
