// The plugin's side of the shared webview's JCEF bridge (vscode-extension/webview/src/hostApi.ts):
// the page calls `window.waveHostQuery(json)` with `{method, params}` and gets `{result}` or
// `{error: {message, code?, data?}}`; pushes reach it through `window.waveReceive(json)` with
// `{method, params}`. The `wave/*` requests declared as forwarded in protocol/
// (`Methods.FORWARDED_REQUESTS`) go to the sidecar unchanged, and so do the forwarded
// notifications to the pages; `host/*` requests (docs/protocol.md) become host actions, run one at a time in the order they arrived (EDIT-3: the page's `host/openFile`
// is answered only once the file is open, and the page sends `host/closeSettings` after that).

package dev.wavemcp.client

import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/** Which page a query comes from or a push goes to. */
enum class PageKind { SETTINGS, CHAT }

/** Delivers a push (`{method, params}` as JSON) to a page, e.g. through `executeJavaScript`. */
fun interface PagePush {
    fun push(json: String)
}

class PageBridge(private val host: Host) : AutoCloseable {
    @Volatile private var sidecar: WaveSidecar? = null
    /** Completed by [attach] (or failed by [unavailable]): requests made before wait for it. */
    @Volatile private var ready = CompletableFuture<WaveSidecar>()
    private var subscriptions: List<AutoCloseable> = emptyList()
    @Volatile private var settingsPage: PagePush? = null
    @Volatile private var chatPage: PagePush? = null
    /** The chat page said `host/chatOpened`, so it can take pushes. */
    @Volatile private var chatReady = false
    /**
     * A prefill that waits for a chat page. The conversation itself is the sidecar's (CHAT-1):
     * the chat page loads it with `wave/session/history`; this bridge keeps no transcript.
     */
    private var pendingPrefill: String? = null

    /** Sidecar requests handed to the chat page (a push with an id), until its `host/answer`. */
    private val asked = java.util.concurrent.ConcurrentHashMap<Long, CompletableFuture<JsonElement>>()
    private val nextAsk = java.util.concurrent.atomic.AtomicLong(1)

    /** Host requests, one at a time, in arrival order. */
    private val hostQueue: ExecutorService = Executors.newSingleThreadExecutor { r ->
        Thread(r, "wave-mcp-host-actions").apply { isDaemon = true }
    }

    /** Uses this sidecar from now on; the pages are told when it replaces another. */
    fun attach(next: WaveSidecar) {
        val restarted = sidecar != null
        subscriptions.forEach { runCatching { it.close() } }
        sidecar = next
        subscriptions = listOf(
            // UI-5, UI-11: only snapshots newer than the one shown reach the page.
            next.onServersChanged { s -> settingsPage?.push(envelope(Methods.MCP_SERVERS_CHANGED, WIRE_GSON.toJsonTree(s))) },
            next.onNotification { method, params ->
                // serversChanged goes through the snapshot tracker above; the other forwarded
                // notifications (the chat's) go to a chat page that is showing.
                if (method in Methods.FORWARDED_NOTIFICATIONS && method != Methods.MCP_SERVERS_CHANGED && chatReady) {
                    chatPage?.push(envelope(method, params))
                }
                if (method == Methods.SESSION_TURN_ENDED) {
                    val p = WIRE_GSON.fromJson(params, SessionTurnEndedParams::class.java)
                    p.error?.let { host.perform(HostAction.Notify(HostAction.Level.WARNING, "Wave: $it")) }
                }
            },
        )
        next.pageRequests = PageRequestHandler { method, params -> askChatPage(method, params) }
        if (!ready.complete(next)) ready = CompletableFuture.completedFuture(next)
        if (restarted) settingsPage?.push(envelope(Methods.HOST_SIDECAR_RESTARTED, JsonObject()))
    }

    /** There is no sidecar (not found, did not start, exited): requests fail with [reason]. */
    fun unavailable(reason: String) {
        sidecar = null
        val failure = IllegalStateException(reason)
        if (!ready.completeExceptionally(failure)) ready = failed(failure)
    }

    /** The page of this kind is showing (or gone, with null). */
    @Synchronized
    fun setPage(kind: PageKind, push: PagePush?) {
        when (kind) {
            PageKind.SETTINGS -> settingsPage = push
            PageKind.CHAT -> {
                chatPage = push
                chatReady = false
                // Questions the old page never answered: the sidecar declines them.
                failAsked("the chat page closed")
            }
        }
    }

    /**
     * LONG-5, LONG-6: hands a sidecar request to the chat page that is showing, as a push with an
     * id, and blocks (on the sidecar client's pool) until the page's `host/answer`.
     */
    private fun askChatPage(method: String, params: JsonElement): JsonElement {
        val page = synchronized(this) { chatPage.takeIf { chatReady } } ?: throw IllegalStateException("no Wave chat page is showing")
        val id = nextAsk.getAndIncrement()
        val answer = CompletableFuture<JsonElement>()
        asked[id] = answer
        val o = JsonObject()
        o.addProperty("method", method)
        o.add("params", params)
        o.addProperty("id", id)
        page.push(WIRE_GSON.toJson(o))
        try {
            return answer.get(ASK_TIMEOUT_S, TimeUnit.SECONDS)
        } catch (e: ExecutionException) {
            throw IllegalStateException(e.cause?.message ?: e.toString())
        } finally {
            asked.remove(id)
        }
    }

    /**
     * APPS-3, `host/teardownApps`: asks the chat page that is showing to tear its app views down
     * (each app gets `ui/resource-teardown` first) and waits for its `host/answer`, at most
     * [waitMs]: the page's counts, or null when no chat page shows, it failed, or it did not
     * answer in time (a stuck page never holds the caller up). The plugin calls it before the
     * chat's JCEF browser is disposed.
     */
    fun teardownChatApps(reason: String, waitMs: Long = TEARDOWN_WAIT_MS): HostAppsTornDown? {
        val page = synchronized(this) { chatPage.takeIf { chatReady } } ?: return null
        val id = nextAsk.getAndIncrement()
        val answer = CompletableFuture<JsonElement>()
        asked[id] = answer
        val o = JsonObject()
        o.addProperty("method", Methods.HOST_TEARDOWN_APPS)
        o.add("params", WIRE_GSON.toJsonTree(HostTeardownAppsParams(reason)))
        o.addProperty("id", id)
        return try {
            page.push(WIRE_GSON.toJson(o))
            WIRE_GSON.fromJson(answer.get(waitMs, TimeUnit.MILLISECONDS), HostAppsTornDown::class.java)
        } catch (e: Exception) {
            null
        } finally {
            asked.remove(id)
        }
    }

    /** `host/answer`: settles the question it answers (unknown ids are ignored). */
    private fun answered(p: JsonObject) {
        val id = p.get("id")?.takeIf { it.isJsonPrimitive }?.asLong ?: throw IllegalArgumentException("host/answer needs an id")
        val waiting = asked.remove(id) ?: return
        val error = p.get("error")?.takeIf { it.isJsonPrimitive }?.asString
        if (error != null) waiting.completeExceptionally(IllegalStateException(error))
        else waiting.complete(p.get("result") ?: JsonNull.INSTANCE)
    }

    private fun failAsked(reason: String) {
        for (id in asked.keys.toList()) asked.remove(id)?.completeExceptionally(IllegalStateException(reason))
    }

    /** The page behind [push] is gone; a newer page of the same kind stays. */
    @Synchronized
    fun removePage(kind: PageKind, push: PagePush) {
        val current = if (kind == PageKind.SETTINGS) settingsPage else chatPage
        if (current === push) setPage(kind, null)
    }

    /**
     * ADD-1, EDIT-1: the text goes into the chat input (not sent): pushed to a chat page that is
     * showing, else kept for the next one that says `host/chatOpened`.
     */
    @Synchronized
    fun prefillChat(text: String) {
        val page = chatPage
        if (page != null && chatReady) {
            page.push(envelope(Methods.HOST_PREFILL, WIRE_GSON.toJsonTree(HostPrefillParams(text))))
        } else {
            pendingPrefill = text
        }
    }

    /** `host/chatOpened`: the chat page takes pushes from now on, and the prefill that waited. */
    @Synchronized
    private fun chatOpened(page: PageKind): HostChatOpened {
        if (page == PageKind.CHAT) chatReady = true
        val prefill = pendingPrefill
        pendingPrefill = null
        return HostChatOpened(prefill)
    }

    /**
     * Answers one `waveHostQuery` call. The future never fails: errors are `{error}` answers.
     * TRUST-8: every query is checked first ([check]); one that fails is answered with an error
     * and reaches neither the sidecar nor the IDE.
     */
    fun handle(page: PageKind, queryJson: String): CompletableFuture<String> {
        val (method, params) = when (val checked = check(queryJson)) {
            is Checked.Ok -> checked.method to checked.params
            is Checked.Refused -> return CompletableFuture.completedFuture(errorAnswer(checked.reason))
        }
        val answer: CompletableFuture<JsonElement> =
            if (method.startsWith("host/")) {
                CompletableFuture.supplyAsync({ hostRequest(page, method, params) }, hostQueue)
            } else {
                forward(method, params)
            }
        return answer.handle { result, failure ->
            if (failure == null) resultAnswer(result) else errorAnswer(unwrap(failure))
        }
    }

    private fun forward(method: String, params: JsonElement): CompletableFuture<JsonElement> {
        if (method !in Methods.FORWARDED_REQUESTS) return failed(IllegalArgumentException("unknown request $method"))
        // AUTH-9: a login is tracked by the sidecar client, so that the page's Cancel
        // (`host/cancelLogin`) can send `$/cancelRequest` for it.
        val login = if (method == Methods.MCP_LOGIN) WIRE_GSON.fromJson(params, ServerParams::class.java) else null
        val send = { side: WaveSidecar ->
            if (login != null) side.loginAsync(login.name, login.sessionId).reply else side.requestAsync(method, params)
        }
        return sidecar?.let(send)
            ?: ready.orTimeout(START_TIMEOUT_S, TimeUnit.SECONDS).thenCompose { send(it) }
    }

    private fun hostRequest(page: PageKind, method: String, params: JsonElement): JsonElement {
        val p = params as? JsonObject ?: JsonObject()
        when (method) {
            Methods.HOST_OPEN_FILE -> {
                val path = p.get("path")?.takeIf { it.isJsonPrimitive }?.asString
                require(ConfigFiles.isAbsolute(path)) { "host/openFile needs an absolute path, got ${path ?: "none"} (EDIT-2)" }
                host.perform(HostAction.OpenFile(path!!))
            }
            Methods.HOST_CLOSE_SETTINGS -> {
                val prefill = p.get("prefill")?.takeIf { it.isJsonPrimitive }?.asString
                val actions = mutableListOf<HostAction>(HostAction.CloseSettings, HostAction.FocusChat)
                prefill?.let { actions += HostAction.PrefillPrompt(it) }
                host.performAll(actions)
            }
            Methods.HOST_OPEN_SETTINGS -> host.perform(HostAction.OpenSettings)
            Methods.HOST_OPEN_EXTERNAL -> host.perform(HostAction.OpenExternal(externalLink(p.get("url"))))
            Methods.HOST_NOTIFY -> {
                val level = when (p.get("level")?.asString) {
                    "error" -> HostAction.Level.ERROR
                    "warning" -> HostAction.Level.WARNING
                    else -> HostAction.Level.INFO
                }
                host.perform(HostAction.Notify(level, p.get("message")?.asString ?: ""))
            }
            // AUTH-9: the row's Cancel while waiting for the browser. The login's own answer
            // (-32800, RequestCancelled) then goes to the page, which takes it quietly.
            Methods.HOST_CANCEL_LOGIN -> {
                val name = p.get("name")?.takeIf { it.isJsonPrimitive }?.asString ?: throw IllegalArgumentException("host/cancelLogin needs a name")
                val sessionId = p.get("sessionId")?.takeIf { it.isJsonPrimitive }?.asString
                sidecar?.cancelLogin(name, sessionId)
            }
            Methods.HOST_CHAT_OPENED -> return WIRE_GSON.toJsonTree(chatOpened(page))
            Methods.HOST_ANSWER -> answered(p)
            else -> throw IllegalArgumentException("unknown request $method")
        }
        return JsonNull.INSTANCE
    }

    override fun close() {
        subscriptions.forEach { runCatching { it.close() } }
        failAsked("the page bridge closed")
        hostQueue.shutdown()
    }

    /** What [check] says of a page's query. */
    sealed interface Checked {
        data class Ok(val method: String, val params: JsonObject) : Checked
        data class Refused(val reason: String) : Checked
    }

    companion object {
        /** TRUST-8: the largest query a page may send, as JSON text. */
        const val MAX_QUERY_CHARS = 1_000_000

        /** The `host/…` requests a page may make (docs/protocol.md); any other `host/` method is unknown. */
        val HOST_REQUESTS: Set<String> = setOf(
            Methods.HOST_OPEN_FILE, Methods.HOST_CLOSE_SETTINGS, Methods.HOST_OPEN_SETTINGS, Methods.HOST_NOTIFY,
            Methods.HOST_CANCEL_LOGIN, Methods.HOST_CHAT_OPENED, Methods.HOST_ANSWER, Methods.HOST_OPEN_EXTERNAL,
        )

        /** USE-4: the URL of `host/openExternal` when it is an http, https or mailto link; else a clear error. */
        fun externalLink(raw: JsonElement?): String {
            val url = raw?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString
            require(!url.isNullOrEmpty()) { "host/openExternal needs a url" }
            val scheme = try {
                java.net.URI(url).scheme?.lowercase()
            } catch (e: java.net.URISyntaxException) {
                throw IllegalArgumentException("host/openExternal: not a URL: ${url.take(200)}")
            }
            require(scheme == "http" || scheme == "https" || scheme == "mailto") {
                "host/openExternal opens only http, https and mailto links, not ${scheme ?: "a link without a scheme"}"
            }
            return url
        }

        /**
         * TRUST-8: a page's query is a JSON object of at most [MAX_QUERY_CHARS] characters with a
         * known method (a forwarded `wave/…` request or one of [HOST_REQUESTS]) and object params
         * (absent or null: `{}`); `host/answer` also needs an integer `id` and, if any, a string
         * `error`. The JCEF query handler relays nothing else.
         */
        fun check(queryJson: String): Checked {
            if (queryJson.length > MAX_QUERY_CHARS) return Checked.Refused("the query is larger than $MAX_QUERY_CHARS characters")
            val query = try {
                JsonParser.parseString(queryJson).takeIf { it.isJsonObject }?.asJsonObject
            } catch (e: RuntimeException) {
                null
            } ?: return Checked.Refused("the query is not a JSON object")
            val method = query.get("method")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString
                ?: return Checked.Refused("the query has no method")
            if (method !in Methods.FORWARDED_REQUESTS && method !in HOST_REQUESTS) return Checked.Refused("unknown request ${method.take(100)}")
            val raw = query.get("params")
            val params = when {
                raw == null || raw.isJsonNull -> JsonObject()
                raw.isJsonObject -> raw.asJsonObject
                else -> return Checked.Refused("the params of $method must be an object")
            }
            if (method == Methods.HOST_ANSWER) {
                val id = params.get("id")
                if (id == null || !id.isJsonPrimitive || !id.asJsonPrimitive.isNumber || id.asDouble != Math.floor(id.asDouble)) {
                    return Checked.Refused("host/answer needs an integer id")
                }
                val error = params.get("error")
                if (error != null && !error.isJsonNull && !(error.isJsonPrimitive && error.asJsonPrimitive.isString)) {
                    return Checked.Refused("host/answer's error must be a string")
                }
            }
            return Checked.Ok(method, params)
        }

        /** Longest wait of a page request for a sidecar that is starting. */
        const val START_TIMEOUT_S = 60L

        /** APPS-3: longest wait for the chat page to tear its apps down (each app: 1 s). */
        const val TEARDOWN_WAIT_MS = 3_000L

        /** Longest wait for the user's answer to a server's question. */
        const val ASK_TIMEOUT_S = 30L * 60

        fun envelope(method: String, params: JsonElement): String {
            val o = JsonObject()
            o.addProperty("method", method)
            o.add("params", params)
            return WIRE_GSON.toJson(o)
        }

        fun resultAnswer(result: JsonElement?): String {
            val o = JsonObject()
            o.add("result", result ?: JsonNull.INSTANCE)
            return WIRE_GSON.newBuilder().serializeNulls().create().toJson(o)
        }

        /** The sidecar's error as the page's `HostErrorPayload`: message, code, data as sent. */
        fun errorAnswer(e: Throwable): String {
            val error = JsonObject()
            error.addProperty("message", e.message ?: e.toString())
            if (e is RpcException) {
                if (e.code != RpcException.LOCAL) error.addProperty("code", e.code)
                e.data?.let { error.add("data", it) }
            }
            return WIRE_GSON.toJson(JsonObject().apply { add("error", error) })
        }

        fun errorAnswer(message: String): String = errorAnswer(IllegalArgumentException(message))

        private fun unwrap(e: Throwable): Throwable {
            var cause = e
            while ((cause is CompletionException || cause is ExecutionException) && cause.cause != null) cause = cause.cause!!
            return cause
        }

        internal fun <T> failed(e: Throwable): CompletableFuture<T> = CompletableFuture<T>().apply { completeExceptionally(e) }
    }
}
