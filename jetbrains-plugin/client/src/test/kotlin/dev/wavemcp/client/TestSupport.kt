// Test support: a sandbox per test (its own HOME and workspace under one temp root), the real
// sidecar binary and our test MCP server, process checks through /proc, and the fake model.

package dev.wavemcp.client

import com.google.gson.JsonArray
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

object Binaries {
    private fun find(envName: String, file: String): Path {
        System.getenv(envName)?.takeIf { it.isNotEmpty() }?.let { return Path.of(it).toAbsolutePath() }
        var dir: Path? = Path.of("").toAbsolutePath()
        while (dir != null) {
            val candidate = dir.resolve("target").resolve("debug").resolve(file)
            if (Files.isExecutable(candidate)) return candidate
            dir = dir.parent
        }
        throw IllegalStateException("$file not found: build it (cargo build --bin $file) or set $envName")
    }

    val sidecar: Path by lazy { find("WAVE_MCP_BIN", "wave-mcp") }
    val testServer: Path by lazy { find("WAVE_MCP_TEST_SERVER", "wave-mcp-test-server") }

    /** Every test's sandbox lives under this root, so leftovers can be found by path. */
    val runRoot: Path by lazy {
        val root = System.getenv("WAVE_JB_TMP")?.takeIf { it.isNotEmpty() }?.let { Path.of(it) }
            ?: Path.of(System.getProperty("java.io.tmpdir"), "wave-mcp-jetbrains-tests")
        Files.createDirectories(root).toRealPath()
    }
}

/** Polls [check] until it holds or [limitMs] passed (a bound, not a speed assertion). */
fun eventually(limitMs: Long = 15_000, message: () -> String, check: () -> Boolean) {
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs)
    while (!check()) {
        if (System.nanoTime() > deadline) throw AssertionError(message())
        Thread.sleep(25)
    }
}

fun alive(pid: Long): Boolean {
    val stat = Path.of("/proc/$pid/stat")
    if (!Files.exists(stat)) return false
    // A zombie has ended; it only waits for its parent to reap it.
    val text = runCatching { Files.readString(stat) }.getOrNull() ?: return false
    val state = text.substringAfterLast(')').trim().firstOrNull()
    return state != 'Z' && state != 'X'
}

class Sandbox(projectName: String = "demo-app") : AutoCloseable {
    val root: Path = Files.createTempDirectory(Binaries.runRoot, "t-").toRealPath()
    val home: Path = Files.createDirectories(root.resolve("home"))
    val workdir: Path = Files.createDirectories(root.resolve("work").resolve(projectName))
    val userConfig: Path = home.resolve(".wave").resolve("mcp.json")
    val projectConfig: Path = workdir.resolve(".mcp.json")
    private val pidDir: Path = Files.createDirectories(root.resolve("pids"))
    private val started = mutableListOf<WaveSidecar>()

    /** A stdio entry running our test server (tools `echo` and `add`), writing its pids. */
    fun server(name: String, vararg extra: String): JsonObject {
        val args = JsonArray()
        listOf("--name", name, "--tools", "echo,add", "--pid-file", pidFile(name).toString(), *extra).forEach { args.add(it) }
        return JsonObject().apply {
            addProperty("command", Binaries.testServer.toString())
            add("args", args)
        }
    }

    fun pidFile(name: String): Path = pidDir.resolve("$name.pids")

    fun pids(name: String): List<Long> =
        runCatching { Files.readAllLines(pidFile(name)).mapNotNull { it.trim().toLongOrNull() } }.getOrDefault(emptyList())

    fun config(vararg entries: Pair<String, JsonObject>): String {
        val servers = JsonObject()
        for ((name, entry) in entries) servers.add(name, entry)
        val file = JsonObject().apply { add("mcpServers", servers) }
        return com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(file) + "\n"
    }

    fun writeUser(text: String) {
        Files.createDirectories(userConfig.parent)
        Files.writeString(userConfig, text)
    }

    /** Writes the project's `.mcp.json` and approves its servers as a user does (the CLI, TRUST-1). */
    fun writeProject(text: String) {
        writeProjectUnapproved(text)
        approveProject()
    }

    /** Writes the project's `.mcp.json` as a cloned repository brings it: nothing approved. */
    fun writeProjectUnapproved(text: String) {
        Files.writeString(projectConfig, text)
    }

    /**
     * Approves every server of the project's `.mcp.json` as a user does: `wave-mcp approve NAME
     * --workdir <workdir>` with this sandbox's HOME (never the trust store by hand).
     */
    fun approveProject() {
        val names = com.google.gson.JsonParser.parseString(Files.readString(projectConfig)).asJsonObject
            .getAsJsonObject("mcpServers")?.keySet().orEmpty()
        for (name in names) {
            val process = ProcessBuilder(Binaries.sidecar.toString(), "approve", name, "--workdir", workdir.toString())
                .redirectErrorStream(true)
                .apply { environment()["HOME"] = home.toString(); environment()["NO_COLOR"] = "1" }
                .start()
            val output = process.inputStream.readAllBytes().toString(Charsets.UTF_8)
            check(process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0) { "wave-mcp approve $name failed: $output" }
        }
    }

    /**
     * The user's own permission rules (TRUST-5) in `~/.wave/settings.json`, e.g. `allow` patterns,
     * for tests whose tool calls are not about consent.
     */
    fun allowTools(vararg patterns: String) {
        val file = home.resolve(".wave").resolve("settings.json")
        Files.createDirectories(file.parent)
        val allow = JsonArray().apply { patterns.forEach { add(it) } }
        Files.writeString(file, JsonObject().apply { add("permissions", JsonObject().apply { add("allow", allow) }) }.toString() + "\n")
    }

    /** Starts the real sidecar on this sandbox (home and workdir), logging to stderr. */
    fun start(
        constructor: JsonObject? = null,
        env: Map<String, String?> = emptyMap(),
        openUrl: OpenUrlHandler? = null,
        workspaceTrusted: Boolean = true,
        apiKey: ApiKey? = null,
        stderr: (String) -> Unit = { line -> System.err.println("[sidecar] $line") },
    ): WaveSidecar {
        val sidecar = WaveSidecar.start(
            SidecarOptions(
                executable = Binaries.sidecar,
                workdir = workdir,
                home = home,
                mcpServers = constructor,
                env = mapOf("WAVE_LOG" to "warn", "NO_COLOR" to "1", "WAVE_MODEL" to null, "WAVE_BASE_URL" to null, "WAVE_API_KEY" to null) + env,
                stderr = stderr,
                openUrl = openUrl,
                workspaceTrusted = workspaceTrusted,
                apiKey = apiKey,
            ),
        )
        started += sidecar
        return sidecar
    }

    /** Processes whose command line mentions this sandbox (its MCP servers and their children). */
    fun liveProcesses(): List<Long> {
        val needle = root.toString().toByteArray()
        val found = mutableListOf<Long>()
        Files.list(Path.of("/proc")).use { entries ->
            for (entry in entries) {
                val pid = entry.fileName.toString().toLongOrNull() ?: continue
                if (pid == ProcessHandle.current().pid()) continue
                val cmdline = runCatching { Files.readAllBytes(entry.resolve("cmdline")) }.getOrNull() ?: continue
                if (contains(cmdline, needle) && alive(pid)) found += pid
            }
        }
        return found
    }

    private fun contains(haystack: ByteArray, needle: ByteArray): Boolean {
        outer@ for (i in 0..haystack.size - needle.size) {
            for (j in needle.indices) if (haystack[i + j] != needle[j]) continue@outer
            return true
        }
        return false
    }

    /**
     * Shuts down every sidecar this sandbox started (`shutdown` + `exit`, LIFE-8), then asserts
     * that each exited with 0 and that no test-server process of this sandbox is left.
     */
    override fun close() {
        for (sidecar in started) {
            val code = sidecar.shutdown()
            assertEquals(0, code, "sidecar exit code; stderr: ${sidecar.stderrTail()}")
            assertTrue(!sidecar.isAlive, "the sidecar is still running")
        }
        eventually(message = { "test-server processes outlived the sidecar: ${liveProcesses()}" }) { liveProcesses().isEmpty() }
        root.toFile().deleteRecursively()
    }
}

/** A host that records what it is asked to do. */
class RecordingHost : Host {
    val actions: MutableList<HostAction> = java.util.Collections.synchronizedList(mutableListOf())

    override fun perform(action: HostAction): Boolean {
        actions += action
        return true
    }

    fun recorded(): List<HostAction> = synchronized(actions) { actions.toList() }
}

/**
 * An OpenAI-compatible model on 127.0.0.1 (the JDK's HTTP server) that never streams: each
 * request is answered with the assistant message [answer] makes of it.
 */
class FakeModel(private val answer: (request: JsonObject) -> JsonObject) : AutoCloseable {
    private val requests = java.util.Collections.synchronizedList(mutableListOf<JsonObject>())
    private val authorizations = java.util.Collections.synchronizedList(mutableListOf<String?>())
    private val server = com.sun.net.httpserver.HttpServer.create(java.net.InetSocketAddress("127.0.0.1", 0), 0).apply {
        createContext("/v1/chat/completions") { exchange ->
            val request = JsonParser.parseString(exchange.requestBody.readBytes().toString(Charsets.UTF_8)).asJsonObject
            requests += request
            authorizations += exchange.requestHeaders.getFirst("Authorization")
            val choice = JsonObject().apply {
                addProperty("index", 0)
                add("message", answer(request))
                addProperty("finish_reason", "stop")
            }
            val reply = JsonObject().apply {
                addProperty("id", "fake")
                addProperty("object", "chat.completion")
                add("choices", JsonArray().apply { add(choice) })
            }
            val body = reply.toString().toByteArray()
            exchange.responseHeaders.add("content-type", "application/json")
            exchange.sendResponseHeaders(200, body.size.toLong())
            exchange.responseBody.use { it.write(body) }
        }
        start()
    }

    val baseUrl: String get() = "http://127.0.0.1:${server.address.port}/v1"

    /** The sidecar's environment for this model (see [Sandbox.start]). */
    val env: Map<String, String> get() = mapOf("WAVE_BASE_URL" to baseUrl, "WAVE_MODEL" to "fake")

    /** The `Authorization` header of every request, in order (null: none). */
    fun authorizationsSeen(): List<String?> = synchronized(authorizations) { authorizations.toList() }

    /** The last user message of every request, in order. */
    fun seen(): List<String> = synchronized(requests) { requests.toList() }.map(::lastUserText)

    override fun close() = server.stop(0)

    companion object {
        /** Answers `reply to <last user message>`. */
        fun replying() = FakeModel { request -> assistant().apply { addProperty("content", "reply to ${lastUserText(request)}") } }

        /** Calls [tool] (no arguments) when the last message is not a tool result, else says "done". */
        fun callingOnce(tool: String) = FakeModel { request ->
            val last = request.getAsJsonArray("messages").last().asJsonObject
            if (last.get("role").asString == "tool") {
                assistant().apply { addProperty("content", "done") }
            } else {
                val function = JsonObject().apply {
                    addProperty("name", tool)
                    addProperty("arguments", "{}")
                }
                val call = JsonObject().apply {
                    addProperty("id", "c1")
                    addProperty("type", "function")
                    add("function", function)
                }
                assistant().apply { add("tool_calls", JsonArray().apply { add(call) }) }
            }
        }

        private fun assistant() = JsonObject().apply { addProperty("role", "assistant") }
    }
}

private fun lastUserText(request: JsonObject): String =
    request.getAsJsonArray("messages").map { it.asJsonObject }.last { it.get("role").asString == "user" }.get("content").asString
