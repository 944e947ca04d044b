// The JavaScript and HTML the IntelliJ layer hands to JCEF, built here so they are tested here.
//
// The shared webview (vscode-extension/webview/src/bridge.ts) expects the host to inject
// `window.waveHostQuery(json) => Promise<string>` and calls nothing else; the host delivers pushes
// by calling `window.waveReceive(json)`, which the page defines. A `JBCefJSQuery` answers only
// synchronously, so the injected function tags each query with an id, the plugin answers later
// with `executeJavaScript(JcefScripts.answer(id, json))`, and the promise of that id resolves.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.security.SecureRandom
import java.util.Base64

object JcefScripts {
    /** A JavaScript string literal of [s], safe inside an HTML `<script>` and for U+2028/U+2029. */
    fun jsString(s: String): String {
        val out = StringBuilder(s.length + 16).append('"')
        for (c in s) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                '\u2028' -> out.append("\\u2028")
                '\u2029' -> out.append("\\u2029")
                '<' -> out.append("\\u003c")
                else -> if (c < ' ') out.append(String.format("\\u%04x", c.code)) else out.append(c)
            }
        }
        return out.append('"').toString()
    }

    /**
     * The script that defines `window.waveHostQuery`. [inject] is `JBCefJSQuery.inject`: given a
     * JavaScript expression of the request string and the success and failure callbacks, it returns
     * the JavaScript that sends the request to the plugin.
     */
    fun bridge(inject: (request: String, onSuccess: String, onFailure: String) -> String): String {
        val send = inject(
            "request",
            "function (response) {}",
            "function (code, message) { var w = waiting[id]; delete waiting[id]; if (w) w.reject(message || ('query failed: ' + code)); }",
        )
        return """
(function () {
  if (window.__waveBridge) return;
  var next = 1;
  var waiting = {};
  window.__waveBridge = {
    answer: function (id, json) {
      var w = waiting[id];
      if (!w) return;
      delete waiting[id];
      w.resolve(json);
    }
  };
  window.waveHostQuery = function (json) {
    return new Promise(function (resolve, reject) {
      var id = next++;
      waiting[id] = { resolve: resolve, reject: reject };
      var request = JSON.stringify({ id: id, query: String(json) });
      $send
    });
  };
  window.dispatchEvent(new Event('wave-host-ready'));
})();
""".trimStart()
    }

    /** Resolves the page's query [id] with the answer JSON. */
    fun answer(id: Long, answerJson: String): String =
        "window.__waveBridge && window.__waveBridge.answer($id, ${jsString(answerJson)});"

    /** Delivers a push (`{method, params}` JSON) to the page. */
    fun push(envelopeJson: String): String =
        "window.waveReceive && window.waveReceive(${jsString(envelopeJson)});"

    /** What the injected function sent: the query's id and the page's `{method, params}` JSON. */
    data class Envelope(val id: Long, val query: String)

    /**
     * TRUST-8: the injected function's request, checked: a JSON object of bounded size with a
     * positive integer `id` and a string `query` (itself checked by [PageBridge.check]). Anything
     * else throws [IllegalArgumentException] and is relayed nowhere.
     */
    fun parseEnvelope(request: String): Envelope {
        // A coarse bound before parsing (escaping may grow a query up to 6 times); the query
        // itself is held to PageBridge.MAX_QUERY_CHARS.
        require(request.length <= PageBridge.MAX_QUERY_CHARS * 6L + ENVELOPE_OVERHEAD) { "the query is too large" }
        val o: JsonObject = runCatching { JsonParser.parseString(request) }.getOrNull()?.takeIf { it.isJsonObject }?.asJsonObject
            ?: throw IllegalArgumentException("the query envelope is not a JSON object")
        val id = o.get("id")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isNumber }?.asDouble
        require(id != null && id >= 1 && id == Math.floor(id) && id <= Long.MAX_VALUE.toDouble()) { "the query envelope needs a positive integer id" }
        val query = o.get("query")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString
            ?: throw IllegalArgumentException("the query envelope needs a query string")
        return Envelope(id.toLong(), query)
    }

    /** What the envelope adds to a query: its id and the keys. */
    private const val ENVELOPE_OVERHEAD = 64
}

/** The page HTML for JCEF: the shared bundle inlined, one nonce for its script and style. */
object PageHtml {
    fun nonce(): String {
        val bytes = ByteArray(18)
        SecureRandom().nextBytes(bytes)
        return Base64.getEncoder().encodeToString(bytes).filter { it.isLetterOrDigit() }
    }

    /** UI-1 (settings, "MCP services" selected) or the chat page, in the IDE's language. */
    fun build(
        page: PageKind,
        locale: String,
        script: String,
        style: String,
        sessionId: String = DEFAULT_SESSION_ID,
        title: String = if (page == PageKind.SETTINGS) "MCP services" else "Wave chat",
        nonce: String = nonce(),
    ): String {
        val csp = listOf(
            "default-src 'none'",
            "script-src 'nonce-$nonce'",
            "style-src 'nonce-$nonce'",
            // Servers' icons (SRV-4): the sidecar passes only https: and raster data: URLs.
            "img-src data: https:",
            "font-src data:",
            "connect-src 'none'",
            // MCP apps (APPS-2) run in the sidecar's sandbox proxy on a loopback origin of its own.
            "frame-src http://127.0.0.1:*",
            "form-action 'none'",
            "base-uri 'none'",
        ).joinToString("; ")
        val pageName = if (page == PageKind.SETTINGS) "settings" else "chat"
        // Inlined text must not end its element early.
        val safeScript = script.replace("</script", "<\\/script", ignoreCase = true)
        val safeStyle = style.replace("</style", "<\\/style", ignoreCase = true)
        return """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${attr(title)}</title>
<style nonce="$nonce">
$safeStyle
</style>
</head>
<body data-page="$pageName" data-lang="${attr(locale)}" data-session="${attr(sessionId)}">
<div id="app"></div>
<script nonce="$nonce">
$safeScript
</script>
</body>
</html>
"""
    }

    private fun attr(s: String) = s.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;").replace(">", "&gt;")
}
