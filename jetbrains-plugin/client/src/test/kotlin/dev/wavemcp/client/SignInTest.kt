// Sign-in (AUTH-*) through the client against the real sidecar and a REAL authorization server:
// the MCP TypeScript SDK's `simpleStreamableHttp.js --oauth` example (installed by
// scripts/install-peers.sh under $WAVE_PEERS_DIR, default ~/.cache/wave-mcp-peers). Its
// authorization server approves at once: the "browser" of these tests follows the
// authorization URL's redirects to the sidecar's loopback callback, as a browser would.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.net.ServerSocket
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit

/** The SDK example as one process (its own tree); [close] ends it and checks nothing is left. */
class OAuthMcpServer : AutoCloseable {
    val port = freePort()
    val authPort = generateSequence { freePort() }.first { it != port }
    val url = "http://localhost:$port/mcp"
    private val process: Process

    init {
        val peers = System.getenv("WAVE_PEERS_DIR")?.takeIf { it.isNotEmpty() }?.let { Path.of(it) }
            ?: Path.of(System.getProperty("user.home"), ".cache", "wave-mcp-peers")
        val script = peers.resolve("sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js")
        check(Files.exists(script)) { "$script is missing: run bash scripts/install-peers.sh" }
        val builder = ProcessBuilder("node", script.toString(), "--oauth").redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        builder.environment()["MCP_PORT"] = port.toString()
        builder.environment()["MCP_AUTH_PORT"] = authPort.toString()
        process = builder.start()
        try {
            eventually(30_000, { "the OAuth MCP server did not come up on $port/$authPort" }) {
                ok("http://localhost:$port/.well-known/oauth-protected-resource/mcp") &&
                    ok("http://localhost:$authPort/.well-known/oauth-authorization-server")
            }
        } catch (e: Throwable) {
            close()
            throw e
        }
    }

    private fun ok(url: String): Boolean = runCatching {
        HTTP.send(HttpRequest.newBuilder(URI(url)).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding())
            .statusCode() == 200
    }.getOrDefault(false)

    override fun close() {
        val tree = listOf(process.toHandle()) + process.toHandle().descendants().toList()
        tree.forEach { it.destroy() }
        if (!process.waitFor(5, TimeUnit.SECONDS)) tree.forEach { it.destroyForcibly() }
        process.waitFor(5, TimeUnit.SECONDS)
        eventually(message = { "the OAuth MCP server's processes outlived it: ${tree.filter { it.isAlive }}" }) {
            tree.none { it.isAlive }
        }
    }

    companion object {
        val HTTP: HttpClient = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
            .connectTimeout(Duration.ofSeconds(5)).build()

        fun freePort(): Int = ServerSocket(0).use { it.localPort }

        /** The user's browser: open the URL, follow the redirects to the callback. */
        fun browse(url: String): HttpResponse<String> =
            HTTP.send(HttpRequest.newBuilder(URI(url)).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString())
    }
}

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SignInTest {
    private lateinit var oauth: OAuthMcpServer

    @BeforeAll
    fun startAuthorizationServer() {
        oauth = OAuthMcpServer()
    }

    @AfterAll
    fun stopAuthorizationServer() {
        oauth.close()
    }

    private fun remoteConfig(sb: Sandbox): String {
        val entry = JsonObject().apply {
            addProperty("type", "http")
            addProperty("url", oauth.url)
        }
        return sb.config("remote" to entry)
    }

    /** A host that opens the URL in "the browser" a moment after answering (as BrowserUtil does). */
    private class FollowingBrowser : OpenUrlHandler {
        val asked = CopyOnWriteArrayList<OpenUrlParams>()
        val visits = CopyOnWriteArrayList<HttpResponse<String>>()
        override fun openUrl(params: OpenUrlParams): Boolean {
            asked += params
            Thread({ runCatching { visits += OAuthMcpServer.browse(params.url) } }, "test-browser").apply { isDaemon = true }.start()
            return true
        }
    }

    @Test
    fun `AUTH-1 AUTH-2 AUTH-3 AUTH-5 needs-auth, login, connected and signed in, logout, needs-auth again`() = Sandbox().use { sb ->
        sb.writeProject(remoteConfig(sb))
        val browser = FollowingBrowser()
        val sidecar = sb.start(openUrl = browser)

        // AUTH-1: a 401 is needs-auth with a reason that says how to sign in; no browser yet.
        val first = sidecar.connect("remote").server("remote")!!
        assertEquals(McpStatus.NEEDS_AUTH, first.status, "row: $first")
        assertTrue(first.error!!.contains("sign in", ignoreCase = true), first.error)
        assertFalse(first.signedIn)
        assertTrue(browser.asked.isEmpty(), "a dial never opens a browser")

        // AUTH-2: login → the host is asked to open the authorization URL → connected, signed in.
        val row = sidecar.login("remote", timeoutMs = 60_000).server("remote")!!
        assertEquals(McpStatus.CONNECTED, row.status, "row: $row")
        assertTrue(row.signedIn)
        assertTrue(row.toolCount > 0)
        assertEquals(1, browser.asked.size)
        val asked = browser.asked[0]
        assertEquals("remote", asked.name)
        assertEquals(DEFAULT_SESSION_ID, asked.sessionId)
        assertTrue(asked.url.startsWith("http://localhost:${oauth.authPort}/authorize?"), asked.url)
        assertTrue("code_challenge_method=S256" in asked.url, asked.url)
        eventually(message = { "the browser's visit" }) { browser.visits.isNotEmpty() }
        assertEquals(200, browser.visits[0].statusCode())
        assertTrue(browser.visits[0].uri().toString().startsWith("http://127.0.0.1:"), "${browser.visits[0].uri()}")
        assertNull(sidecar.pendingLogin("remote"), "the login is no longer tracked")
        assertEquals(row.signedIn, sidecar.snapshots.latest()!!.server("remote")!!.signedIn)

        // AUTH-5: logout → disconnected, not signed in; the next dial finds it needs-auth.
        val out = sidecar.logout("remote").server("remote")!!
        assertFalse(out.signedIn)
        assertEquals(McpStatus.DISCONNECTED, out.status)
        assertEquals(McpStatus.NEEDS_AUTH, sidecar.connect("remote").server("remote")!!.status)
        assertEquals(1, browser.asked.size, "connect never opens a browser")
    }

    @Test
    fun `AUTH-9 a pending login is cancelled with cancelRequest, the row stays needs-auth`() = Sandbox().use { sb ->
        sb.writeProject(remoteConfig(sb))
        // A browser the user never finishes in.
        val asked = CopyOnWriteArrayList<OpenUrlParams>()
        val sidecar = sb.start(openUrl = { p -> asked += p; true })
        assertEquals(McpStatus.NEEDS_AUTH, sidecar.connect("remote").server("remote")!!.status)
        val login = sidecar.loginAsync("remote")
        eventually(message = { "wave/mcp/openUrl" }) { asked.isNotEmpty() }
        assertTrue(sidecar.pendingLogin("remote") === login)
        assertFalse(login.reply.isDone)
        assertTrue(sidecar.cancelLogin("remote"))
        val failure = runCatching { login.snapshot.get(20, TimeUnit.SECONDS) }.exceptionOrNull()
        val cause = (failure as? ExecutionException)?.cause
        assertTrue(cause is RpcException, "failure: $failure")
        assertEquals(RpcException.REQUEST_CANCELLED, (cause as RpcException).code)
        assertNull(sidecar.pendingLogin("remote"))
        assertFalse(sidecar.cancelLogin("remote"), "nothing left to cancel")
        // The sidecar stopped waiting: its loopback callback is closed.
        val callback = Regex("redirect_uri=([^&]+)").find(asked[0].url)!!.groupValues[1].let { java.net.URLDecoder.decode(it, Charsets.UTF_8) }
        eventually(message = { "the callback $callback still listens" }) { runCatching { OAuthMcpServer.browse(callback) }.isFailure }
        val row = sidecar.servers().server("remote")!!
        assertEquals(McpStatus.NEEDS_AUTH, row.status)
        assertFalse(row.signedIn)
    }

    @Test
    fun `AUTH-9 a newer login of the same server cancels the older one (signInCancelled), then signs in`() = Sandbox().use { sb ->
        sb.writeProject(remoteConfig(sb))
        val asked = CopyOnWriteArrayList<OpenUrlParams>()
        // The first URL is left alone (the user never finishes there); the second is followed.
        val sidecar = sb.start(openUrl = { p ->
            asked += p
            if (asked.size > 1) Thread { runCatching { OAuthMcpServer.browse(p.url) } }.apply { isDaemon = true }.start()
            true
        })
        assertEquals(McpStatus.NEEDS_AUTH, sidecar.connect("remote").server("remote")!!.status)
        val first = sidecar.loginAsync("remote")
        eventually(message = { "the first wave/mcp/openUrl" }) { asked.size == 1 }
        val second = sidecar.loginAsync("remote")
        assertTrue(sidecar.pendingLogin("remote") === second, "the newer login is the one tracked")
        val failure = runCatching { first.snapshot.get(20, TimeUnit.SECONDS) }.exceptionOrNull()
        val cause = (failure as? ExecutionException)?.cause as? RpcException
        assertEquals(ErrorKind.SIGN_IN_CANCELLED, cause?.kind, "failure: $failure")
        val row = second.snapshot.get(60, TimeUnit.SECONDS).server("remote")!!
        assertEquals(McpStatus.CONNECTED, row.status, "row: $row")
        assertTrue(row.signedIn)
        assertNull(sidecar.pendingLogin("remote"))
        assertFalse(sidecar.logout("remote").server("remote")!!.signedIn)
    }

    @Test
    fun `AUTH-9 UI-12 the page bridge forwards login and logout and cancels through host-cancelLogin`() = Sandbox().use { sb ->
        sb.writeProject(remoteConfig(sb))
        val asked = CopyOnWriteArrayList<OpenUrlParams>()
        val sidecar = sb.start(openUrl = { p -> asked += p; true })
        val host = RecordingHost()
        PageBridge(host).use { bridge ->
            bridge.attach(sidecar)
            fun query(method: String, params: String) = """{"method":"$method","params":$params}"""
            val login = bridge.handle(PageKind.SETTINGS, query(Methods.MCP_LOGIN, """{"name":"remote","sessionId":"default"}"""))
            eventually(message = { "wave/mcp/openUrl" }) { asked.isNotEmpty() }
            assertEquals(
                """{"result":null}""",
                bridge.handle(PageKind.SETTINGS, query("host/cancelLogin", """{"name":"remote","sessionId":"default"}""")).get(10, TimeUnit.SECONDS),
            )
            val answer = JsonParser.parseString(login.get(20, TimeUnit.SECONDS)).asJsonObject
            assertEquals(RpcException.REQUEST_CANCELLED, answer.getAsJsonObject("error").get("code").asInt, "answer: $answer")
            // Logout is forwarded unchanged and answers with the snapshot.
            val out = JsonParser.parseString(
                bridge.handle(PageKind.SETTINGS, query(Methods.MCP_LOGOUT, """{"name":"remote"}""")).get(20, TimeUnit.SECONDS),
            ).asJsonObject
            assertTrue(WaveSidecar.looksLikeSnapshot(out.get("result")), "answer: $out")
            // UI-12: the bridge itself turns nothing into a chat message or a notification.
            assertTrue(host.recorded().isEmpty(), "host actions: ${host.recorded()}")
            assertFalse(Methods.SESSION_SEND in sidecar.sentRequests)
        }
    }
}
