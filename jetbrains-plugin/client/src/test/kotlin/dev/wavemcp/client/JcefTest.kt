// The JavaScript and HTML handed to JCEF: escaping, the page HTML, and the injected query
// function's round trip, run in Node.js with a stand-in for `JBCefJSQuery`.

package dev.wavemcp.client

import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.util.concurrent.TimeUnit

class JcefTest {
    @Test
    fun `JS string literals survive quotes, newlines, U+2028 and a closing script tag`() {
        val text = "a\"b\\c\nd\u2028e\u2029</script><!--中文\u0001"
        val literal = JcefScripts.jsString(text)
        assertFalse(literal.contains("</script"), literal)
        assertFalse(literal.contains('\u2028') || literal.contains('\n'))
        // A JS string literal built this way is also a JSON string: parse it back.
        assertEquals(text, JsonParser.parseString(literal).asString)
    }

    @Test
    fun `UI-1 the page HTML selects the page, language and session, with one nonce and a strict CSP`() {
        val html = PageHtml.build(PageKind.SETTINGS, "zh-CN", "var s = '</script>';", "body{}</style>", nonce = "N0nce")
        assertTrue(html.contains("""data-page="settings" data-lang="zh-CN" data-session="default""""), html)
        assertTrue(html.contains("script-src 'nonce-N0nce'") && html.contains("default-src 'none'"))
        assertTrue(html.contains("""<script nonce="N0nce">"""))
        assertEquals(1, Regex("</script>").findAll(html).count(), "the inlined code cannot end the element")
        assertEquals(1, Regex("</style>").findAll(html).count())
        assertTrue(PageHtml.build(PageKind.CHAT, "en", "", "").contains("""data-page="chat""""))
        assertTrue(PageHtml.nonce().length >= 16)
    }

    @Test
    fun `the injected waveHostQuery resolves with the plugin's answer, waveReceive gets pushes (Node)`() {
        val node = listOf("/usr/bin/node", "/usr/local/bin/node").firstOrNull { Files.isExecutable(java.nio.file.Path.of(it)) }
            ?: System.getenv("PATH").split(':').map { "$it/node" }.firstOrNull { Files.isExecutable(java.nio.file.Path.of(it)) }
        // Outside CI a machine without node skips this test; in CI (`CI` set) that is a failure.
        if (node == null && !System.getenv("CI").isNullOrEmpty()) {
            fail<Unit>("node is not installed, and CI is set, so this test may not be skipped")
        }
        assumeTrue(node != null, "node is not installed")
        // JBCefJSQuery.inject(request, onSuccess, onFailure) produces a call of a function like this one.
        val bridge = JcefScripts.bridge { request, onSuccess, onFailure ->
            "window.fakeCefQuery({request: $request, onSuccess: $onSuccess, onFailure: $onFailure});"
        }
        val answer = PageBridge.resultAnswer(JsonParser.parseString("""{"text":"中文 \u2028 </script>"}"""))
        val push = PageBridge.envelope("host/prefill", JsonParser.parseString("""{"text":"帮我编辑"}"""))
        val script = """
            globalThis.window = globalThis;
            window.dispatchEvent = function () {};
            var sent = [];
            window.fakeCefQuery = function (q) {
              sent.push(q.request);
              if (sent.length === 2) { q.onFailure(-1, 'refused'); return; }
              setTimeout(function () { ${JcefScripts.answer(1, answer)} }, 10);
            };
            window.waveReceive = function (json) { console.log('push ' + json); };
            $bridge
            $bridge
            window.waveHostQuery('{"method":"wave/mcp/servers","params":{}}').then(function (json) {
              console.log('answer ' + json);
              console.log('sent ' + sent[0]);
              return window.waveHostQuery('{"method":"host/notify"}');
            }).catch(function (e) { console.log('rejected ' + e); ${JcefScripts.push(push)} });
        """.trimIndent()
        val process = ProcessBuilder(node!!, "-e", script).redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(20, TimeUnit.SECONDS))
        assertEquals(0, process.exitValue(), output)
        val lines = output.trim().lines()
        assertEquals("answer $answer", lines[0])
        val envelope = JcefScripts.parseEnvelope(lines[1].removePrefix("sent "))
        assertEquals(1L, envelope.id)
        assertEquals("""{"method":"wave/mcp/servers","params":{}}""", envelope.query)
        assertEquals("rejected refused", lines[2])
        assertEquals("push $push", lines[3])
        assertEquals(4, lines.size, output)
    }
}
