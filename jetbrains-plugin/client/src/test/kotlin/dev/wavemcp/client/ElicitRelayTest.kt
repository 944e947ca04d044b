// LONG-5: a server's question to the user goes from the real sidecar through the page bridge to
// the chat page (a push with an id) and the page's `host/answer` back, with the official Python
// SDK server tests/peers/py_elicit.py; without a chat page the sidecar gets an error and declines.

package dev.wavemcp.client

import com.google.gson.JsonArray
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

class ElicitRelayTest {
    private fun query(method: String, params: String = "{}") = """{"method":"$method","params":$params}"""
    private fun parse(answer: String): JsonObject = JsonParser.parseString(answer).asJsonObject

    private val python: Path = Path.of(
        System.getenv("WAVE_PEERS_DIR")?.takeIf { it.isNotEmpty() } ?: (System.getProperty("user.home") + "/.cache/wave-mcp-peers"),
        "venv", "bin", "python",
    )

    /** tests/peers/py_elicit.py, found upwards from the sidecar binary (…/target/debug/wave-mcp). */
    private fun script(): Path {
        var dir: Path? = Binaries.sidecar.parent
        while (dir != null) {
            val candidate = dir.resolve("tests").resolve("peers").resolve("py_elicit.py")
            if (Files.exists(candidate)) return candidate
            dir = dir.parent
        }
        throw IllegalStateException("tests/peers/py_elicit.py not found above ${Binaries.sidecar}")
    }

    @Test
    fun `LONG-5 the chat page answers a server's form through host-answer, and no chat page is a decline`() = Sandbox().use { sb ->
        if (System.getenv("CI").isNullOrEmpty()) assumeTrue(Files.isExecutable(python), "PyPI mcp not installed (scripts/install-peers.sh)")
        val entry = JsonObject().apply {
            addProperty("command", python.toString())
            add("args", JsonArray().apply { add(script().toString()) })
        }
        sb.writeProject(sb.config("py" to entry))
        // Its tools allowed in the user's own settings: this test is about the form, not consent.
        sb.allowTools("mcp__py__*")
        FakeModel.callingOnce("mcp__py__ask_form").use { model ->
            val sidecar = sb.start(env = model.env)
            PageBridge(RecordingHost()).use { bridge ->
                bridge.attach(sidecar)
                val pushes = java.util.Collections.synchronizedList(mutableListOf<JsonObject>())
                bridge.setPage(PageKind.CHAT) { json -> pushes += parse(json) }
                bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)
                bridge.handle(PageKind.CHAT, query(Methods.SESSION_SEND, """{"sessionId":"default","text":"sign me up"}""")).get(10, TimeUnit.SECONDS)
                var asked: JsonObject? = null
                eventually(30_000, message = { "pushes: $pushes" }) {
                    asked = synchronized(pushes) { pushes.firstOrNull { it.get("method").asString == Methods.SESSION_ELICIT && it.has("id") } }
                    asked != null
                }
                val params = asked!!.getAsJsonObject("params")
                assertEquals("py", params.get("server").asString)
                assertEquals("form", params.get("mode").asString)
                assertEquals("Tell me about you", params.get("message").asString)
                val id = asked!!.get("id").asLong
                val answer = """{"id":$id,"result":{"action":"accept","content":{"name":"Ada","age":36,"subscribe":true,"colour":"red"}}}"""
                assertEquals("""{"result":null}""", bridge.handle(PageKind.CHAT, query(Methods.HOST_ANSWER, answer)).get(5, TimeUnit.SECONDS))
                assertEquals(
                    """accept: {"age": 36, "colour": "red", "name": "Ada", "subscribe": true}""",
                    toolResult(pushes, 1),
                )

                // The chat page is gone: the sidecar's question gets an error, which is a decline.
                bridge.setPage(PageKind.CHAT, null)
                bridge.handle(PageKind.CHAT, query(Methods.SESSION_SEND, """{"sessionId":"default","text":"again"}""")).get(10, TimeUnit.SECONDS)
                val history = sidecar.history()
                eventually(30_000, message = { "history: ${sidecar.history().messages}" }) {
                    sidecar.history().messages.any { it.turn == 2L && it.message.role == ChatRole.TOOL }
                }
                val declined = sidecar.history().messages.first { it.turn == 2L && it.message.role == ChatRole.TOOL }
                assertEquals("decline", declined.message.content, "history before: ${history.messages}")
            }
        }
    }

    private fun toolResult(pushes: MutableList<JsonObject>, turn: Long): String {
        var found: String? = null
        eventually(30_000, message = { "pushes: $pushes" }) {
            found = synchronized(pushes) { pushes.toList() }
                .filter { it.get("method").asString == Methods.SESSION_MESSAGE }
                .map { it.getAsJsonObject("params") }
                .firstOrNull { it.get("turn").asLong == turn && it.getAsJsonObject("message").get("role").asString == "tool" }
                ?.getAsJsonObject("message")?.get("content")?.asString
            found != null
        }
        return found!!
    }
}
