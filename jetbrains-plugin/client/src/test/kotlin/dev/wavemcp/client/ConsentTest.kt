// TRUST-3, TRUST-5, TRUST-8: the client's checks of what a page answers to the consent questions
// and of every query a page sends before it is relayed. (The round trip through the real sidecar:
// ConsentRelayTest.)

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Assertions.assertThrows
import java.util.concurrent.TimeUnit

class ConsentTest {
    private val asked = SessionApproveServersParams(
        "default",
        listOf(ServerApproval(name = "db", configPath = "/p/.mcp.json", transport = "stdio"), ServerApproval(name = "web", configPath = "/p/.mcp.json", transport = "http")),
    )

    private fun json(s: String) = JsonParser.parseString(s)

    @Test
    fun `TRUST-3 a page's approval counts only names that were asked, once each, in the asked order`() {
        assertEquals(listOf("db", "web"), Consent.approval(asked, json("""{"approved":["web","db","db"]}""")).approved)
        assertEquals(listOf("web"), Consent.approval(asked, json("""{"approved":["web","evil","../x"]}""")).approved)
        assertEquals(emptyList<String>(), Consent.approval(asked, json("""{"approved":[]}""")).approved)
        for (bad in listOf("""null""", """[]""", """{"approved":"db"}""", """{"approved":[1]}""", """{}""")) {
            assertThrows(IllegalArgumentException::class.java, { Consent.approval(asked, json(bad)) }, bad)
        }
    }

    @Test
    fun `TRUST-5 a page's decision is one of once, session, always, deny, anything else is a decline (an error reply)`() {
        assertEquals(ToolDecision.ONCE, Consent.decision(json("""{"decision":"once"}""")).decision)
        assertEquals(ToolDecision.SESSION, Consent.decision(json("""{"decision":"session"}""")).decision)
        assertEquals(ToolDecision.ALWAYS, Consent.decision(json("""{"decision":"always"}""")).decision)
        assertEquals(ToolDecision.DENY, Consent.decision(json("""{"decision":"deny"}""")).decision)
        for (bad in listOf("""{"decision":"ALWAYS"}""", """{"decision":"yes"}""", """{"decision":1}""", """{}""", """"once"""")) {
            assertThrows(IllegalArgumentException::class.java, { Consent.decision(json(bad)) }, bad)
        }
        // The typed answers go to the sidecar in its wire form.
        assertEquals("""{"decision":"session"}""", WIRE_GSON.toJson(SessionConfirmToolResult(ToolDecision.SESSION)))
        assertEquals("""{"approved":["db"]}""", WIRE_GSON.toJson(SessionApproveServersResult(listOf("db"))))
    }

    @Test
    fun `TRUST-5 PageConsent relays the typed question to the page and checks its answer`() {
        val seen = mutableListOf<Pair<String, JsonObject>>()
        val consent = PageConsent { method, params ->
            seen += method to params.asJsonObject
            if (method == Methods.SESSION_CONFIRM_TOOL) json("""{"decision":"deny"}""") else json("""{"approved":["db","zzz"]}""")
        }
        val call = SessionConfirmToolParams(
            sessionId = "default", turn = 2, toolCallId = "c1", server = "db", tool = "drop", fullName = "mcp__db__drop",
            arguments = JsonObject().apply { addProperty("table", "users") },
            annotations = ToolAnnotationsView(title = "Drop a table", destructiveHint = true),
        )
        assertEquals(ToolDecision.DENY, consent.confirmTool(call).decision)
        assertEquals(listOf("db"), consent.approveServers(asked).approved)
        assertEquals(Methods.SESSION_CONFIRM_TOOL, seen[0].first)
        assertEquals("users", seen[0].second.getAsJsonObject("arguments").get("table").asString)
        assertEquals(true, seen[0].second.getAsJsonObject("annotations").get("destructiveHint").asBoolean)
        assertEquals(Methods.SESSION_APPROVE_SERVERS, seen[1].first)
        assertEquals("/p/.mcp.json", seen[1].second.getAsJsonArray("servers")[0].asJsonObject.get("configPath").asString)
    }

    @Test
    fun `TRUST-8 the page bridge relays only known methods with object params within the size limit`() {
        val refused = listOf(
            "not json" to "the query is not a JSON object",
            "[1]" to "the query is not a JSON object",
            """{"params":{}}""" to "the query has no method",
            """{"method":7}""" to "the query has no method",
            """{"method":"wave/session/approveServers","params":{}}""" to "unknown request wave/session/approveServers",
            """{"method":"wave/session/confirmTool","params":{}}""" to "unknown request wave/session/confirmTool",
            """{"method":"wave/session/destroy","params":{"sessionId":"default"}}""" to "unknown request wave/session/destroy",
            """{"method":"shutdown"}""" to "unknown request shutdown",
            """{"method":"host/runCommand","params":{}}""" to "unknown request host/runCommand",
            """{"method":"wave/mcp/approve","params":["db"]}""" to "the params of wave/mcp/approve must be an object",
            """{"method":"wave/mcp/approve","params":"db"}""" to "the params of wave/mcp/approve must be an object",
            """{"method":"host/answer","params":{"id":"1","result":{}}}""" to "host/answer needs an integer id",
            """{"method":"host/answer","params":{"id":1.5}}""" to "host/answer needs an integer id",
            """{"method":"host/answer","params":{"id":1,"error":{"x":1}}}""" to "host/answer's error must be a string",
        )
        for ((query, reason) in refused) assertEquals(PageBridge.Checked.Refused(reason), PageBridge.check(query), query)
        val big = """{"method":"wave/session/send","params":{"sessionId":"default","text":"${"x".repeat(PageBridge.MAX_QUERY_CHARS)}"}}"""
        assertEquals(PageBridge.Checked.Refused("the query is larger than ${PageBridge.MAX_QUERY_CHARS} characters"), PageBridge.check(big))
        assertEquals(PageBridge.Checked.Ok(Methods.MCP_APPROVE, JsonObject().apply { addProperty("name", "db") }), PageBridge.check("""{"method":"wave/mcp/approve","params":{"name":"db"}}"""))
        assertEquals(PageBridge.Checked.Ok(Methods.HOST_CHAT_OPENED, JsonObject()), PageBridge.check("""{"method":"host/chatOpened","params":null}"""))

        // Refused queries are answered with an error and reach neither the IDE nor a sidecar.
        val host = RecordingHost()
        PageBridge(host).use { bridge ->
            for ((query, reason) in refused) {
                val answer = JsonParser.parseString(bridge.handle(PageKind.CHAT, query).get(5, TimeUnit.SECONDS)).asJsonObject
                assertEquals(reason, answer.getAsJsonObject("error").get("message").asString)
            }
            assertTrue(host.recorded().isEmpty())
        }
    }

    @Test
    fun `TRUST-8 the JCEF envelope needs a positive integer id and a string query`() {
        assertEquals(JcefScripts.Envelope(3, """{"method":"host/chatOpened"}"""), JcefScripts.parseEnvelope("""{"id":3,"query":"{\"method\":\"host/chatOpened\"}"}"""))
        for (bad in listOf("x", "[]", """{"id":0,"query":"{}"}""", """{"id":-1,"query":"{}"}""", """{"id":1.5,"query":"{}"}""", """{"id":"1","query":"{}"}""", """{"id":1,"query":{}}""", """{"id":1}""")) {
            assertThrows(IllegalArgumentException::class.java, { JcefScripts.parseEnvelope(bad) }, bad)
        }
    }
}
