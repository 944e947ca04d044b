// TRUST-1, TRUST-3, TRUST-5, TRUST-9 through the real sidecar: its consent questions reach the
// client's typed handlers (a ConsentHandler the IntelliJ layer may set) and, by default, the
// chat page through the page bridge, whose answers are checked before the sidecar sees them;
// approve / revoke and the IDE's trust in the project.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.util.Collections
import java.util.concurrent.TimeUnit

class ConsentRelayTest {
    private fun query(method: String, params: String = "{}") = """{"method":"$method","params":$params}"""
    private fun parse(answer: String): JsonObject = JsonParser.parseString(answer).asJsonObject

    /** The tool results of [turn] in the session's history. */
    private fun toolResults(sidecar: WaveSidecar, turn: Long): List<String> =
        sidecar.history().messages.filter { it.turn == turn && it.message.role == ChatRole.TOOL }.map { it.message.content }

    private fun awaitTurn(sidecar: WaveSidecar, turn: Long) = eventually(30_000, message = { "history: ${sidecar.history()}" }) {
        sidecar.history().let { h -> turn !in h.runningTurns && h.messages.any { it.turn == turn && it.message.role == ChatRole.ASSISTANT && it.message.toolCalls.isEmpty() } }
    }

    @Test
    fun `TRUST-3 TRUST-5 the typed handlers get approveServers and confirmTool from the real sidecar, and their answers count`() = Sandbox().use { sb ->
        sb.writeProjectUnapproved(sb.config("p" to sb.server("p")))
        FakeModel.callingOnce("mcp__p__echo").use { model ->
            val sidecar = sb.start(env = model.env)
            val approvals = Collections.synchronizedList(mutableListOf<SessionApproveServersParams>())
            val confirmations = Collections.synchronizedList(mutableListOf<SessionConfirmToolParams>())
            val decisions = ArrayDeque(listOf(ToolDecision.DENY, ToolDecision.SESSION))
            sidecar.consent = object : ConsentHandler {
                override fun approveServers(params: SessionApproveServersParams): SessionApproveServersResult {
                    approvals += params
                    assertTrue(sb.pids("p").isEmpty(), "nothing of p ran before the answer")
                    return SessionApproveServersResult(params.servers.map { it.name })
                }

                override fun confirmTool(params: SessionConfirmToolParams): SessionConfirmToolResult {
                    confirmations += params
                    return SessionConfirmToolResult(synchronized(decisions) { decisions.removeFirst() })
                }
            }
            assertEquals(McpStatus.NEEDS_APPROVAL, sidecar.servers().server("p")!!.status)
            val waiting = sidecar.servers().server("p")!!.approval!!
            assertEquals(Binaries.testServer.toString(), waiting.command)

            // Turn 1: asked to approve p (typed), then to allow its echo: denied.
            sidecar.send(DEFAULT_SESSION_ID, "one")
            awaitTurn(sidecar, 1)
            val asked = approvals.single()
            assertEquals(DEFAULT_SESSION_ID, asked.sessionId)
            assertEquals(listOf("p"), asked.servers.map { it.name })
            assertEquals(sb.projectConfig.toString(), asked.servers[0].configPath)
            assertEquals("stdio", asked.servers[0].transport)
            assertEquals(listOf("--name", "p", "--tools", "echo,add", "--pid-file", sb.pidFile("p").toString()), asked.servers[0].args)
            assertFalse(asked.servers[0].changed)
            assertNull(asked.servers[0].shadows)
            val call = confirmations.single()
            assertEquals(1L, call.turn)
            assertEquals("p", call.server)
            assertEquals("echo", call.tool)
            assertEquals("mcp__p__echo", call.fullName)
            assertEquals("c1", call.toolCallId)
            assertFalse(call.definitionChanged)
            assertEquals(McpStatus.CONNECTED, sidecar.servers().server("p")!!.status, "approved: dialed in that turn")
            assertTrue(toolResults(sidecar, 1).single().contains("declined"), "the model was told: ${toolResults(sidecar, 1)}")

            // Turn 2: asked again, allowed for the session; turn 3 does not ask.
            sidecar.send(DEFAULT_SESSION_ID, "two")
            awaitTurn(sidecar, 2)
            assertFalse(toolResults(sidecar, 2).single().contains("declined"))
            sidecar.send(DEFAULT_SESSION_ID, "three")
            awaitTurn(sidecar, 3)
            assertEquals(2, confirmations.size, "turn 3's call did not ask")
            assertEquals(1, approvals.size, "approved once")
        }
    }

    @Test
    fun `TRUST-3 TRUST-5 by default the chat page answers through the bridge, and only what was asked counts`() = Sandbox().use { sb ->
        sb.writeProjectUnapproved(sb.config("p" to sb.server("p")))
        FakeModel.callingOnce("mcp__p__echo").use { model ->
            val sidecar = sb.start(env = model.env)
            PageBridge(RecordingHost()).use { bridge ->
                bridge.attach(sidecar)
                val pushes = Collections.synchronizedList(mutableListOf<JsonObject>())
                bridge.setPage(PageKind.CHAT) { json -> pushes += parse(json) }
                bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)
                bridge.handle(PageKind.CHAT, query(Methods.SESSION_SEND, """{"sessionId":"default","text":"go"}""")).get(10, TimeUnit.SECONDS)
                fun asked(method: String): JsonObject {
                    var found: JsonObject? = null
                    eventually(30_000, message = { "pushes: $pushes" }) {
                        found = synchronized(pushes) { pushes.firstOrNull { it.get("method").asString == method && it.has("id") } }
                        found != null
                    }
                    return found!!
                }
                val approval = asked(Methods.SESSION_APPROVE_SERVERS)
                assertEquals("p", approval.getAsJsonObject("params").getAsJsonArray("servers")[0].asJsonObject.get("name").asString)
                // The page answers with a name that was not asked as well: only p counts.
                val approveAnswer = """{"id":${approval.get("id").asLong},"result":{"approved":["p","not-asked"]}}"""
                assertEquals("""{"result":null}""", bridge.handle(PageKind.CHAT, query(Methods.HOST_ANSWER, approveAnswer)).get(5, TimeUnit.SECONDS))
                val confirm = asked(Methods.SESSION_CONFIRM_TOOL)
                val params = confirm.getAsJsonObject("params")
                assertEquals("mcp__p__echo", params.get("fullName").asString)
                assertEquals(1L, params.get("turn").asLong)
                // A decision the protocol does not have is a decline.
                val confirmAnswer = """{"id":${confirm.get("id").asLong},"result":{"decision":"yes please"}}"""
                bridge.handle(PageKind.CHAT, query(Methods.HOST_ANSWER, confirmAnswer)).get(5, TimeUnit.SECONDS)
                awaitTurn(sidecar, 1)
                assertTrue(toolResults(sidecar, 1).single().contains("declined"), "declined: ${toolResults(sidecar, 1)}")
                assertEquals(McpStatus.CONNECTED, sidecar.servers().server("p")!!.status)
                assertEquals(listOf("p"), sidecar.servers().servers.filter { it.source == McpSource.PROJECT }.map { it.name })
            }
        }
    }

    @Test
    fun `TRUST-9 TRUST-3 an untrusted project approves nothing until the IDE trusts it, then approve and revoke`() = Sandbox().use { sb ->
        sb.writeProjectUnapproved(sb.config("p" to sb.server("p")))
        val sidecar = sb.start(workspaceTrusted = false)
        val row = sidecar.servers().server("p")!!
        assertEquals(McpStatus.NEEDS_APPROVAL, row.status)
        assertTrue(row.error!!.contains("not trusted"), row.error)
        val refused = assertThrows(RpcException::class.java) { sidecar.approve("p") }
        assertEquals(ErrorKind.UNTRUSTED, refused.kind)
        assertTrue(sb.pids("p").isEmpty())
        assertFalse(Files.exists(sb.home.resolve(".wave").resolve("trusted-servers.json")) &&
            Files.readString(sb.home.resolve(".wave").resolve("trusted-servers.json")).contains("\"p\""))

        sidecar.workspaceTrust(true)
        eventually(message = { "row: ${sidecar.servers().server("p")}" }) { sidecar.servers().server("p")!!.error?.contains("not trusted") == false }
        val approved = sidecar.approve("p")
        assertEquals(McpStatus.CONNECTED, approved.server("p")!!.status)
        val pid = sb.pids("p").single()
        assertTrue(alive(pid))
        val revoked = sidecar.revoke("p")
        assertEquals(McpStatus.NEEDS_APPROVAL, revoked.server("p")!!.status)
        eventually(message = { "p still runs" }) { !alive(pid) }
        assertEquals(ErrorKind.UNKNOWN_SERVER, assertThrows(RpcException::class.java) { sidecar.approve("nope") }.kind)
    }
}
