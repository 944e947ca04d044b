// The plugin's side of the page bridge, fed the exact queries the shared webview sends
// (vscode-extension/webview/src/hostApi.ts), against the real sidecar.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

class PageBridgeTest {
    private fun query(method: String, params: String = "{}") = """{"method":"$method","params":$params}"""
    private fun parse(answer: String): JsonObject = JsonParser.parseString(answer).asJsonObject

    @Test
    fun `EDIT-3 the page's Edit - the file is open before settings close, then the prompt is prefilled`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("p" to sb.server("p")))
        val sidecar = sb.start()
        // A host whose file opening is slow: the close request arrives while it is still opening.
        val opening = CountDownLatch(1)
        val log = java.util.Collections.synchronizedList(mutableListOf<String>())
        val host = Host { action ->
            log += "start $action"
            if (action is HostAction.OpenFile) opening.await(10, TimeUnit.SECONDS)
            log += "done $action"
            true
        }
        PageBridge(host).use { bridge ->
            bridge.attach(sidecar)
            val paths = parse(bridge.handle(PageKind.SETTINGS, query(Methods.MCP_CONFIG_PATHS)).get(10, TimeUnit.SECONDS))
                .getAsJsonObject("result")
            val path = paths.get("projectConfigPath").asString
            assertEquals(sb.projectConfig.toString(), path)

            val open = bridge.handle(PageKind.SETTINGS, query("host/openFile", """{"path":${JcefScripts.jsString(path)}}"""))
            val prompt = "Help me edit the MCP server p: change <what to change> to <new value>"
            val close = bridge.handle(PageKind.SETTINGS, query("host/closeSettings", """{"prefill":${JcefScripts.jsString(prompt)}}"""))
            Thread.sleep(200)
            assertFalse(open.isDone, "openFile is answered only when the file is open")
            assertEquals(listOf("start ${HostAction.OpenFile(path)}"), log.toList(), "nothing overtakes the open")
            opening.countDown()
            assertEquals("""{"result":null}""", open.get(10, TimeUnit.SECONDS))
            assertEquals("""{"result":null}""", close.get(10, TimeUnit.SECONDS))
            assertEquals(
                listOf(HostAction.OpenFile(path), HostAction.CloseSettings, HostAction.FocusChat, HostAction.PrefillPrompt(prompt))
                    .flatMap { listOf("start $it", "done $it") },
                log.toList(),
            )
        }
    }

    @Test
    fun `USE-4 host openExternal - an http, https or mailto link becomes OpenExternal, any other scheme an error`() {
        val host = RecordingHost()
        PageBridge(host).use { bridge ->
            for (url in listOf("https://example.com/docs?q=1", "http://127.0.0.1:8080/", "mailto:dev@example.com")) {
                val answer = bridge.handle(PageKind.CHAT, query("host/openExternal", """{"url":${JcefScripts.jsString(url)}}""")).get(5, TimeUnit.SECONDS)
                assertEquals("""{"result":null}""", answer)
            }
            assertEquals(
                listOf(
                    HostAction.OpenExternal("https://example.com/docs?q=1"),
                    HostAction.OpenExternal("http://127.0.0.1:8080/"),
                    HostAction.OpenExternal("mailto:dev@example.com"),
                ),
                host.recorded(),
            )
            host.actions.clear()
            for (url in listOf("javascript:alert(1)", "file:///etc/passwd", "relative/page", "")) {
                val refused = parse(bridge.handle(PageKind.CHAT, query("host/openExternal", """{"url":${JcefScripts.jsString(url)}}""")).get(5, TimeUnit.SECONDS))
                assertTrue(refused.getAsJsonObject("error").get("message").asString.startsWith("host/openExternal"), "$url: $refused")
            }
            assertTrue(PageBridge.check(query("host/openExternal", """{"url":"https://example.com"}""")) is PageBridge.Checked.Ok)
            assertEquals(emptyList<HostAction>(), host.recorded(), "nothing opens for another scheme")
        }
    }

    @Test
    fun `EDIT-2 UI-7 ADD-1 host requests - relative paths refused, Back prefills nothing, Add opens no file`() {
        val host = RecordingHost()
        PageBridge(host).use { bridge ->
            val refused = parse(bridge.handle(PageKind.SETTINGS, query("host/openFile", """{"path":".mcp.json"}""")).get(5, TimeUnit.SECONDS))
            assertTrue(refused.getAsJsonObject("error").get("message").asString.contains("absolute"), "$refused")
            bridge.handle(PageKind.SETTINGS, query("host/closeSettings")).get(5, TimeUnit.SECONDS)
            assertEquals(listOf(HostAction.CloseSettings, HostAction.FocusChat), host.recorded())
            host.actions.clear()
            val add = "/settings 帮我在【demo】下配 MCP 服务器<名字>：连<command/url>，参数<args>"
            bridge.handle(PageKind.SETTINGS, query("host/closeSettings", """{"prefill":${JcefScripts.jsString(add)}}""")).get(5, TimeUnit.SECONDS)
            assertEquals(listOf(HostAction.CloseSettings, HostAction.FocusChat, HostAction.PrefillPrompt(add)), host.recorded())
            // UI-1: the chat's `/mcp` asks for the settings page.
            host.actions.clear()
            bridge.handle(PageKind.CHAT, query("host/openSettings")).get(5, TimeUnit.SECONDS)
            bridge.handle(PageKind.SETTINGS, query("host/notify", """{"level":"error","message":"boom"}""")).get(5, TimeUnit.SECONDS)
            assertEquals(listOf(HostAction.OpenSettings, HostAction.Notify(HostAction.Level.ERROR, "boom")), host.recorded())
            // Unknown methods and broken queries are answered with errors, never thrown.
            assertTrue(parse(bridge.handle(PageKind.SETTINGS, query("wave/unknown")).get(5, TimeUnit.SECONDS)).has("error"))
            assertTrue(parse(bridge.handle(PageKind.SETTINGS, "not json").get(5, TimeUnit.SECONDS)).has("error"))
            // A request made while the sidecar starts waits for it; with none, a clear error.
            val waiting = bridge.handle(PageKind.SETTINGS, query(Methods.MCP_SERVERS))
            Thread.sleep(100)
            assertFalse(waiting.isDone)
            bridge.unavailable("wave-mcp was not found")
            val noSidecar = parse(waiting.get(5, TimeUnit.SECONDS))
            assertEquals("wave-mcp was not found", noSidecar.getAsJsonObject("error").get("message").asString)
            val later = parse(bridge.handle(PageKind.SETTINGS, query(Methods.MCP_SERVERS)).get(5, TimeUnit.SECONDS))
            assertEquals("wave-mcp was not found", later.getAsJsonObject("error").get("message").asString)
        }
    }

    @Test
    fun `UI-5 DEL-4 forwarded requests answer with the sidecar's result or error, pushes reach the page`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("p" to sb.server("p")))
        val sidecar = sb.start(JsonObject().apply { add("c", sb.server("c")) })
        val pushes = java.util.Collections.synchronizedList(mutableListOf<JsonObject>())
        PageBridge(RecordingHost()).use { bridge ->
            // The page may ask before the sidecar is attached: the request waits for it.
            val early = bridge.handle(PageKind.SETTINGS, query(Methods.MCP_SERVERS, "{}"))
            bridge.setPage(PageKind.SETTINGS) { json -> pushes += parse(json) }
            bridge.attach(sidecar)

            val listed = parse(early.get(10, TimeUnit.SECONDS))
            assertEquals(2, listed.getAsJsonObject("result").getAsJsonArray("servers").size())
            val connected = parse(bridge.handle(PageKind.SETTINGS, query(Methods.MCP_CONNECT, """{"name":"p"}""")).get(30, TimeUnit.SECONDS))
            val row = connected.getAsJsonObject("result").getAsJsonArray("servers").map { it.asJsonObject }.first { it.get("name").asString == "p" }
            assertEquals("connected", row.get("status").asString)

            // The sidecar's error goes to the page as sent: message, code, data.kind.
            val refused = parse(bridge.handle(PageKind.SETTINGS, query(Methods.MCP_DELETE, """{"name":"c","source":"constructor"}""")).get(10, TimeUnit.SECONDS))
            val error = refused.getAsJsonObject("error")
            assertEquals(REQUEST_FAILED, error.get("code").asInt)
            assertEquals("readOnly", error.getAsJsonObject("data").get("kind").asString)
            val bad = parse(bridge.handle(PageKind.SETTINGS, query(Methods.MCP_CONNECT, """{"name":5}""")).get(10, TimeUnit.SECONDS))
            assertEquals(RpcException.INVALID_PARAMS, bad.getAsJsonObject("error").get("code").asInt)

            sidecar.drain()
            eventually(message = { "pushes: $pushes" }) {
                synchronized(pushes) { pushes.any { p -> p.get("method").asString == Methods.MCP_SERVERS_CHANGED } }
            }
            val versions = synchronized(pushes) { pushes.toList() }.map {
                assertEquals(Methods.MCP_SERVERS_CHANGED, it.get("method").asString)
                it.getAsJsonObject("params").get("version").asLong
            }
            assertTrue(versions.zipWithNext().all { (a, b) -> a < b }, "UI-11: pushed versions grow: $versions")
        }
    }

    @Test
    fun `ADD-1 EDIT-1 a prefill reaches the chat page, now or when it next opens`() {
        val host = RecordingHost()
        PageBridge(host).use { bridge ->
            // No chat page yet: the prefill waits for host-chatOpened.
            bridge.prefillChat("/settings x")
            val pushes = mutableListOf<String>()
            bridge.setPage(PageKind.CHAT) { pushes += it }
            val opened = parse(bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)).getAsJsonObject("result")
            assertEquals("/settings x", opened.get("prefill").asString)
            // Taken once.
            val again = parse(bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)).getAsJsonObject("result")
            assertFalse(again.has("prefill"))
            // An open chat page gets it pushed.
            bridge.prefillChat("帮我编辑 MCP 服务器a：把<要改的内容>改成<新内容>")
            assertEquals(listOf("""{"method":"host/prefill","params":{"text":"帮我编辑 MCP 服务器a：把<要改的内容>改成<新内容>"}}"""), pushes)
        }
    }

    @Test
    fun `CHAT-1 CHAT-2 the chat page's messages come from the sidecar - pushed in order, and the whole history for a reopened page`() = Sandbox().use { sb ->
        FakeModel.replying().use { model ->
            val sidecar = sb.start(env = model.env)
            PageBridge(RecordingHost()).use { bridge ->
                bridge.attach(sidecar)
                val pushes = java.util.Collections.synchronizedList(mutableListOf<JsonObject>())
                bridge.setPage(PageKind.CHAT) { json -> pushes += parse(json) }
                bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)
                // Sent without waiting: turns 1 and 2 in that order.
                val first = bridge.handle(PageKind.CHAT, query(Methods.SESSION_SEND, """{"sessionId":"default","text":"one"}"""))
                val second = bridge.handle(PageKind.CHAT, query(Methods.SESSION_SEND, """{"sessionId":"default","text":"two"}"""))
                assertEquals(1, parse(first.get(10, TimeUnit.SECONDS)).getAsJsonObject("result").get("turn").asInt)
                assertEquals(2, parse(second.get(10, TimeUnit.SECONDS)).getAsJsonObject("result").get("turn").asInt)
                eventually(message = { "pushes: $pushes" }) {
                    synchronized(pushes) { pushes.count { it.get("method").asString == Methods.SESSION_TURN_ENDED } == 2 }
                }
                val messages = synchronized(pushes) { pushes.toList() }.filter { it.get("method").asString == Methods.SESSION_MESSAGE }
                    .map { it.getAsJsonObject("params") }
                assertEquals((0 until messages.size).map { it.toLong() }, messages.map { it.get("index").asLong })
                assertEquals(listOf("one", "two"), model.seen(), "CHAT-2: the model saw the turns in order")

                // A chat page opened later asks for the history: the whole conversation.
                val history = parse(bridge.handle(PageKind.CHAT, query(Methods.SESSION_HISTORY, """{"sessionId":"default"}""")).get(10, TimeUnit.SECONDS))
                    .getAsJsonObject("result")
                val byTurn = history.getAsJsonArray("messages").map { it.asJsonObject }
                    .sortedBy { it.get("turn").asLong }
                    .map { it.get("turn").asLong to it.getAsJsonObject("message").let { m -> m.get("role").asString + ":" + m.get("content").asString } }
                assertEquals(
                    listOf(1L to "user:one", 1L to "assistant:reply to one", 2L to "user:two", 2L to "assistant:reply to two"),
                    byTurn,
                )
                val typed = sidecar.history()
                assertEquals(4, typed.messages.size)
                assertEquals(history.getAsJsonArray("messages").size(), typed.messages.size)
            }
        }
    }

    @Test
    fun `APPS-3 before the chat goes, host teardownApps asks the page to tear its apps down and returns its counts, bounded`() {
        PageBridge(RecordingHost()).use { bridge ->
            // No chat page showing: nothing to ask, nothing pushed.
            assertEquals(null, bridge.teardownChatApps("the project is closing"))
            val pushes = mutableListOf<JsonObject>()
            // A page that answers as the shared webview does: host/answer with the ask's id.
            bridge.setPage(PageKind.CHAT) { json ->
                val push = parse(json)
                pushes += push
                val id = push.get("id").asLong
                bridge.handle(PageKind.CHAT, query(Methods.HOST_ANSWER, """{"id":$id,"result":{"total":2,"answered":1}}"""))
            }
            // Not opened yet (no host/chatOpened): it takes no pushes.
            assertEquals(null, bridge.teardownChatApps("the project is closing"))
            assertEquals(emptyList<JsonObject>(), pushes)
            bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)
            assertEquals(HostAppsTornDown(total = 2, answered = 1), bridge.teardownChatApps("the project is closing"))
            assertEquals(1, pushes.size)
            assertEquals(Methods.HOST_TEARDOWN_APPS, pushes[0].get("method").asString)
            assertEquals("the project is closing", pushes[0].getAsJsonObject("params").get("reason").asString)
        }
    }

    @Test
    fun `APPS-3 a chat page that does not answer host teardownApps holds the plugin up only for the bounded wait`() {
        PageBridge(RecordingHost()).use { bridge ->
            val pushed = CountDownLatch(1)
            bridge.setPage(PageKind.CHAT) { pushed.countDown() }
            bridge.handle(PageKind.CHAT, query(Methods.HOST_CHAT_OPENED)).get(5, TimeUnit.SECONDS)
            // The page got the request and never answers: null once the wait is over.
            assertEquals(null, bridge.teardownChatApps("the project is closing", waitMs = 50))
            assertTrue(pushed.await(0, TimeUnit.SECONDS))
            // A late answer to it is ignored (unknown id by then).
            val late = parse(bridge.handle(PageKind.CHAT, query(Methods.HOST_ANSWER, """{"id":1,"result":{"total":1,"answered":1}}""")).get(5, TimeUnit.SECONDS))
            assertTrue(late.has("result"))
        }
    }
}
