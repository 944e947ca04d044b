// The sidecar process (`wave-mcp lsp`) and typed access to its `wave/*` methods.

package dev.wavemcp.client

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import java.io.InputStream
import java.io.OutputStream
import java.nio.file.Path
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** How to start the sidecar. */
data class SidecarOptions(
    /** The `wave-mcp` executable. */
    val executable: Path,
    /** The project directory: the process's working directory and `initializationOptions.workdir`. */
    val workdir: Path,
    /** Replaces `~` for `~/.wave/...` (`initializationOptions.home`; also `HOME` of the process). */
    val home: Path? = null,
    /** Constructor-level servers (`initializationOptions.mcpServers`). */
    val mcpServers: JsonObject? = null,
    val model: ModelOptions? = null,
    /**
     * USE-5: the model endpoint's API key (the IDE keeps it in PasswordSafe). It reaches the
     * sidecar as `WAVE_API_KEY` in its environment only: never in `initializationOptions`, an LSP
     * message, the command line or a log line.
     */
    val apiKey: ApiKey? = null,
    /** Environment changes for the process; a null value removes the variable. */
    val env: Map<String, String?> = emptyMap(),
    /** Longest wait for one reply of a blocking call. */
    val timeoutMs: Long = 60_000,
    /** Gets every line the sidecar writes to stderr (its logs). */
    val stderr: ((String) -> Unit)? = null,
    /**
     * Answers the sidecar's `wave/mcp/openUrl` (sign-in wants the user's browser, AUTH-2). Null:
     * answered `opened = false`, so the sidecar opens the URL itself (`$BROWSER`, `xdg-open`).
     */
    val openUrl: OpenUrlHandler? = null,
    /**
     * TRUST-9: the IDE trusts the project (`initializationOptions.workspaceTrusted`). False: no
     * project server can be approved and nothing of the project runs until [WaveSidecar.workspaceTrust].
     */
    val workspaceTrusted: Boolean = true,
)

/**
 * Answers a sidecar request the chat page answers (`Methods.PAGE_ANSWERED_REQUESTS`, e.g.
 * `wave/session/elicit`). Runs on a pool thread and may block until the user answered; a throw
 * is an error reply.
 */
fun interface PageRequestHandler {
    fun answer(method: String, params: JsonElement): JsonElement
}

/**
 * The host side of `wave/mcp/openUrl`. The IntelliJ layer shows a notification with the URL and
 * a copy action and opens it with `BrowserUtil`. Runs on a pool thread; return quickly (do not
 * wait for the user to finish signing in): true = the URL was handed to a browser, false (or a
 * throw) = the sidecar should open it itself.
 */
fun interface OpenUrlHandler {
    fun openUrl(params: OpenUrlParams): Boolean
}

/**
 * A running `wave/mcp/login` (AUTH-2): completes with the snapshot once signed in and connected,
 * or fails with [RpcException] (`signInFailed`, `signInCancelled`, or -32800
 * [RpcException.REQUEST_CANCELLED] after [cancel]).
 */
class PendingLogin internal constructor(
    val name: String,
    val sessionId: String?,
    /** The raw reply (what the page bridge forwards). */
    val reply: CompletableFuture<JsonElement>,
    private val cancelRequest: () -> Unit,
) {
    val snapshot: CompletableFuture<ServersSnapshot> = reply.thenApply { WIRE_GSON.fromJson(it, ServersSnapshot::class.java) }

    /** LSP `$/cancelRequest` for this login (AUTH-9's Cancel); the sidecar stops waiting for the browser. */
    fun cancel() = cancelRequest()
}

class WaveSidecar private constructor(
    val options: SidecarOptions,
    /** Null when [over] made this client on streams of someone else's. */
    private val process: Process?,
    input: InputStream,
    private val output: OutputStream,
    private val errors: InputStream?,
) : AutoCloseable {
    private val connection = JsonRpcConnection(input, output)
    private val stderrTail = ArrayDeque<String>()
    private val streamListeners = CopyOnWriteArrayList<(ServersSnapshot) -> Unit>()
    private val logins = java.util.concurrent.ConcurrentHashMap<String, PendingLogin>()
    private val stream: ExecutorService = Executors.newSingleThreadExecutor { r ->
        Thread(r, "wave-mcp-servers-changed").apply { isDaemon = true }
    }

    /** UI-11: the newest snapshot shown per session; replies and pushes both count. */
    val snapshots = SnapshotTracker()

    /** Who answers the sidecar's page requests (the page bridge); null: they get an error. */
    @Volatile var pageRequests: PageRequestHandler? = null

    /**
     * Who answers the consent questions (TRUST-3, TRUST-5); null: [PageConsent] over
     * [pageRequests], i.e. the chat page's cards.
     */
    @Volatile var consent: ConsentHandler? = null

    /** The `initialize` result. */
    lateinit var initializeResult: JsonObject
        private set

    /** Methods sent so far, in order (for tests: prove a request was or was not made). */
    val sentRequests: List<String> get() = connection.sentRequests

    val pid: Long get() = process?.pid() ?: -1
    val isAlive: Boolean get() = process?.isAlive ?: !connection.isClosed

    companion object {
        private val SNAPSHOT_REPLIES =
            setOf(
                Methods.MCP_SERVERS, Methods.MCP_CONNECT, Methods.MCP_DISCONNECT, Methods.MCP_DELETE, Methods.MCP_LOGIN,
                Methods.MCP_LOGOUT, Methods.MCP_APPROVE, Methods.MCP_REVOKE, Methods.MCP_SET_TOOL_ENABLED,
            )

        /** Longest wait of the blocking [login]: the sidecar's own callback timeout is 5 minutes. */
        const val LOGIN_TIMEOUT_MS = 6 * 60_000L

        /** Spawns `wave-mcp lsp`, then `initialize` and `initialized`. */
        fun start(options: SidecarOptions): WaveSidecar {
            val builder = ProcessBuilder(options.executable.toString(), "lsp")
                .directory(options.workdir.toFile())
                .redirectErrorStream(false)
            val env = builder.environment()
            options.home?.let { env["HOME"] = it.toString() }
            for ((key, value) in options.env) if (value == null) env.remove(key) else env[key] = value
            options.apiKey?.let { env[ApiKey.ENV] = it.value }
            val process = builder.start()
            val sidecar = WaveSidecar(options, process, process.inputStream, process.outputStream, process.errorStream)
            try {
                sidecar.begin()
            } catch (e: Throwable) {
                sidecar.close()
                throw e
            }
            return sidecar
        }

        /**
         * A client over streams already connected to a sidecar (or to a fake one in tests):
         * `initialize` and `initialized` are sent as by [start]; no process is spawned.
         */
        fun over(input: InputStream, output: OutputStream, options: SidecarOptions): WaveSidecar {
            val sidecar = WaveSidecar(options, null, input, output, null)
            sidecar.begin()
            return sidecar
        }

        /** Whether a JSON value has the shape of a [ServersSnapshot]. */
        fun looksLikeSnapshot(value: JsonElement): Boolean {
            if (!value.isJsonObject) return false
            val o = value.asJsonObject
            return o.get("version")?.isJsonPrimitive == true && o.get("sessionId")?.isJsonPrimitive == true &&
                o.get("servers")?.isJsonArray == true
        }
    }

    private fun begin() {
        if (errors != null) Thread({
            errors.bufferedReader(Charsets.UTF_8).useLines { lines ->
                for (line in lines) {
                    synchronized(stderrTail) {
                        stderrTail.addLast(line)
                        if (stderrTail.size > 200) stderrTail.removeFirst()
                    }
                    options.stderr?.let { sink -> runCatching { sink(line) } }
                }
            }
        }, "wave-mcp-stderr").apply { isDaemon = true }.start()

        // Versions are checked on the reader thread, in arrival order, before anyone sees the
        // message; accepted pushes then go to the stream listeners on their own thread.
        connection.observeInOrder { method, payload ->
            if (method == Methods.MCP_SERVERS_CHANGED || (method in SNAPSHOT_REPLIES && looksLikeSnapshot(payload))) {
                val snapshot = WIRE_GSON.fromJson(payload, ServersSnapshot::class.java)
                val accepted = snapshots.offer(snapshot)
                if (accepted && method == Methods.MCP_SERVERS_CHANGED) {
                    stream.execute { streamListeners.forEach { runCatching { it(snapshot) } } }
                }
            }
        }
        // Registered before `initialize`: the handler is there before any sign-in can ask.
        connection.onRequest(Methods.MCP_OPEN_URL) { raw ->
            val params = WIRE_GSON.fromJson(raw, OpenUrlParams::class.java)
            val handler = options.openUrl
            val opened = handler != null && runCatching { handler.openUrl(params) }.getOrDefault(false)
            OpenUrlResult(opened)
        }
        // LONG-5, LONG-6: sidecar requests the chat page answers (a server asks the user), handed
        // to [pageRequests]; without one the sidecar gets an error, which it takes as a decline.
        for (method in Methods.PAGE_ANSWERED_REQUESTS - Consent.METHODS) {
            connection.onRequest(method) { raw ->
                val handler = pageRequests ?: throw IllegalStateException("no Wave chat page is showing")
                handler.answer(method, raw)
            }
        }
        // TRUST-3, TRUST-5: the consent questions, typed, to [consent] (default: the chat page).
        // No handler and no page: an error reply, which approves nothing and declines the call.
        connection.onRequest(Methods.SESSION_APPROVE_SERVERS) { raw ->
            consentHandler().approveServers(WIRE_GSON.fromJson(raw, SessionApproveServersParams::class.java))
        }
        connection.onRequest(Methods.SESSION_CONFIRM_TOOL) { raw ->
            consentHandler().confirmTool(WIRE_GSON.fromJson(raw, SessionConfirmToolParams::class.java))
        }
        connection.start()

        val params = JsonObject()
        params.addProperty("processId", ProcessHandle.current().pid())
        params.add("clientInfo", JsonObject().apply { addProperty("name", "wave-mcp-jetbrains") })
        params.addProperty("rootUri", options.workdir.toUri().toString())
        params.add("capabilities", JsonObject())
        val init = InitializationOptions(
            mcpServers = options.mcpServers,
            home = options.home?.toString(),
            workdir = options.workdir.toString(),
            model = options.model,
            workspaceTrusted = options.workspaceTrusted,
            // APPS-1: the shared chat page shows MCP Apps (JCEF).
            apps = true,
        )
        params.add("initializationOptions", WIRE_GSON.toJsonTree(init))
        initializeResult = await("initialize", connection.request("initialize", params)).asJsonObject
        connection.notify("initialized", JsonObject())
    }

    private fun consentHandler(): ConsentHandler =
        consent ?: pageRequests?.let { PageConsent(it) } ?: throw IllegalStateException("no Wave chat page is showing")

    // ---- typed requests (blocking, bounded by options.timeoutMs) ----

    /** LIFE-1: every server of a session with its status. */
    fun servers(sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_SERVERS, SessionParams(sessionId), ServersSnapshot::class.java)

    /** LAZY-5, LIFE-2: connect now; a failure is the row's `error`, not an exception (UI-12). */
    fun connect(name: String, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_CONNECT, ServerParams(name, sessionId), ServersSnapshot::class.java)

    /** LAZY-6, LIFE-6, UI-4: always answers with a snapshot. */
    fun disconnect(name: String, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_DISCONNECT, ServerParams(name, sessionId), ServersSnapshot::class.java)

    /** DEL-2: removes one entry from the user or project file. Errors (DEL-3, DEL-4) throw [RpcException]. */
    fun delete(name: String, source: McpSource, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_DELETE, DeleteParams(name, source, sessionId), ServersSnapshot::class.java)

    /** SRV-2: one server's log; new entries come as `wave/mcp/logAppended` ([McpLogAppendedParams]). */
    /** Suggested values for a prompt's argument or a template's variable (SRV-3). */
    fun complete(params: McpCompleteParams): McpCompleteResult =
        typed(Methods.MCP_COMPLETE, params, McpCompleteResult::class.java)

    fun logs(name: String, sessionId: String? = null): McpLogsResult =
        typed(Methods.MCP_LOGS, ServerParams(name, sessionId), McpLogsResult::class.java)

    /** EDIT-2: absolute paths of the config files and the project name. */
    fun configPaths(sessionId: String? = null): ConfigPaths =
        typed(Methods.MCP_CONFIG_PATHS, SessionParams(sessionId), ConfigPaths::class.java)

    /**
     * AUTH-2: signs in to a remote server and connects it; the sidecar asks [SidecarOptions.openUrl]
     * to open the authorization URL. Returns at once; [PendingLogin.cancel] cancels it. A newer
     * login of the same server cancels this one (the sidecar answers it `signInCancelled`).
     */
    fun loginAsync(name: String, sessionId: String? = null): PendingLogin {
        val sent = connection.requestWithId(Methods.MCP_LOGIN, ServerParams(name, sessionId))
        val key = loginKey(sessionId, name)
        val login = PendingLogin(name, sessionId, sent.future) { connection.cancel(sent.id) }
        logins[key] = login
        sent.future.whenComplete { _, _ -> logins.remove(key, login) }
        return login
    }

    /** [loginAsync], waiting for the end (bounded by [timeoutMs]). Errors throw [RpcException]. */
    fun login(name: String, sessionId: String? = null, timeoutMs: Long = LOGIN_TIMEOUT_MS): ServersSnapshot {
        val login = loginAsync(name, sessionId)
        try {
            return login.snapshot.get(timeoutMs, TimeUnit.MILLISECONDS)
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: TimeoutException) {
            login.cancel()
            throw RpcException(RpcException.LOCAL, "no reply to ${Methods.MCP_LOGIN} within $timeoutMs ms")
        }
    }

    /** The running login of a server, if any. */
    fun pendingLogin(name: String, sessionId: String? = null): PendingLogin? = logins[loginKey(sessionId, name)]

    /** AUTH-9: cancels the running login of [name] (`$/cancelRequest`); false when none runs. */
    fun cancelLogin(name: String, sessionId: String? = null): Boolean {
        val login = logins[loginKey(sessionId, name)] ?: return false
        login.cancel()
        return true
    }

    /** AUTH-5: disconnects and deletes the stored credentials; the row ends `signedIn = false`. */
    fun logout(name: String, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_LOGOUT, ServerParams(name, sessionId), ServersSnapshot::class.java)

    /** TRUST-3: approves the project server [name] exactly as written now, and connects it. */
    fun approve(name: String, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_APPROVE, ServerParams(name, sessionId), ServersSnapshot::class.java)

    /** TRUST-3: disconnects the project server [name] and forgets its approval. */
    fun revoke(name: String, sessionId: String? = null): ServersSnapshot =
        typed(Methods.MCP_REVOKE, ServerParams(name, sessionId), ServersSnapshot::class.java)

    /** TRUST-9: the IDE's trust in the project changed (`wave/workspace/trust`). */
    fun workspaceTrust(trusted: Boolean) = connection.notify(Methods.WORKSPACE_TRUST, WorkspaceTrustParams(trusted))

    private fun loginKey(sessionId: String?, name: String) = "${sessionId ?: DEFAULT_SESSION_ID}\u0000$name"

    fun createSession(params: SessionCreateParams = SessionCreateParams()): SessionCreated =
        typed(Methods.SESSION_CREATE, params, SessionCreated::class.java)

    /** ADD-4: the text goes verbatim, `/settings ...` included. */
    fun send(sessionId: String, text: String): SessionSendAccepted =
        typed(Methods.SESSION_SEND, SessionSendParams(sessionId, text), SessionSendAccepted::class.java)

    /** CHAT-1: the session's whole conversation, as the sidecar records it. */
    fun history(sessionId: String = DEFAULT_SESSION_ID): SessionHistoryResult =
        typed(Methods.SESSION_HISTORY, SessionHistoryParams(sessionId), SessionHistoryResult::class.java)

    fun destroySession(sessionId: String): SessionDestroyed =
        typed(Methods.SESSION_DESTROY, SessionDestroyParams(sessionId), SessionDestroyed::class.java)

    /** Any request, untyped: what the page bridge forwards. Fails with [RpcException]. */
    fun requestAsync(method: String, params: Any?): CompletableFuture<JsonElement> = connection.request(method, params)

    private fun <T> typed(method: String, params: Any, type: Class<T>): T =
        WIRE_GSON.fromJson(await(method, connection.request(method, params)), type)

    private fun await(method: String, future: CompletableFuture<JsonElement>): JsonElement {
        try {
            return future.get(options.timeoutMs, TimeUnit.MILLISECONDS)
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: TimeoutException) {
            throw RpcException(RpcException.LOCAL, "no reply to $method within ${options.timeoutMs} ms")
        }
    }

    // ---- notifications ----

    /** UI-5, UI-11: `serversChanged` pushes newer than anything shown, in order. */
    fun onServersChanged(listener: (ServersSnapshot) -> Unit): AutoCloseable {
        streamListeners += listener
        return AutoCloseable { streamListeners -= listener }
    }

    /** Every notification, raw (session messages, turn ends, ...). */
    fun onNotification(listener: (method: String, params: JsonElement) -> Unit): AutoCloseable =
        connection.onNotification(listener)

    /** The sidecar's stdout ended (it exited or crashed). */
    fun onExit(listener: (Throwable?) -> Unit) = connection.onClose(listener)

    /** The last lines the sidecar wrote to stderr. */
    fun stderrTail(): List<String> = synchronized(stderrTail) { stderrTail.toList() }

    /** Waits until every push received so far reached the listeners. */
    fun drain() {
        connection.drain()
        runCatching { stream.submit {}.get(5, TimeUnit.SECONDS) }
    }

    /**
     * LIFE-8: `shutdown` (the sidecar ends every MCP process tree before it answers), `exit`, and
     * waits for the process; kills it if it does not end. Returns the exit code. Idempotent.
     */
    fun shutdown(timeoutMs: Long = 20_000): Int {
        if ((process?.isAlive ?: true) && !connection.isClosed) {
            try {
                connection.request("shutdown").get(timeoutMs, TimeUnit.MILLISECONDS)
                connection.notify("exit")
            } catch (_: Exception) {
                // Ending stdin acts like `exit` too.
            }
        }
        runCatching { output.close() }
        if (process == null) {
            connection.close()
            stream.shutdown()
            return 0
        }
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            process.destroy()
            if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(5, TimeUnit.SECONDS)
        }
        connection.close()
        stream.shutdown()
        return if (process.isAlive) -1 else process.exitValue()
    }

    override fun close() {
        shutdown()
    }
}
