// One shared-webview page in JCEF: loads the bundle, injects `window.waveHostQuery` (the query
// function the page's JCEF adapter expects) through a JBCefJSQuery, answers each query from the
// client's PageBridge, and delivers pushes with `window.waveReceive`. Before the browser is
// disposed (the tool window's content removed, the project closing), the chat page is asked to
// tear its MCP apps down (APPS-3, `host/teardownApps`, bounded): the browser and its query are
// therefore disposed by this page's `dispose`, not as its Disposer children (those would go
// first).

package dev.wavemcp.intellij

import com.intellij.openapi.Disposable
import com.intellij.openapi.components.service
import com.intellij.openapi.project.Project
import com.intellij.openapi.util.Disposer
import com.intellij.ui.jcef.JBCefBrowser
import com.intellij.ui.jcef.JBCefBrowserBase
import com.intellij.ui.jcef.JBCefJSQuery
import dev.wavemcp.client.JcefScripts
import dev.wavemcp.client.PageBridge
import dev.wavemcp.client.PageHtml
import dev.wavemcp.client.PageKind
import dev.wavemcp.client.PagePush
import org.cef.browser.CefBrowser
import org.cef.browser.CefFrame
import org.cef.handler.CefLoadHandlerAdapter
import javax.swing.JComponent

class JcefPage(project: Project, private val kind: PageKind, parent: Disposable) : Disposable {
    private val service = project.service<WaveProjectService>()
    private val bridge: PageBridge = service.bridge
    private val browser = JBCefBrowser()
    // Created before the page loads, as JCEF requires.
    private val query = JBCefJSQuery.create(browser as JBCefBrowserBase)
    @Volatile private var disposed = false
    private val push = PagePush { json -> run(JcefScripts.push(json)) }

    val component: JComponent get() = browser.component

    init {
        Disposer.register(parent, this)

        // TRUST-8: every query is validated before anything is relayed: the envelope here (bounded
        // size, integer id, string query), the query in PageBridge.handle (known method, object
        // params, size limit). Only the main frame gets the query function (onLoadEnd below), and
        // the page's CSP admits only the sidecar's MCP app sandbox (a loopback origin of its own, whose app
        // runs with an opaque origin), and no frame can reach a cross-origin page's functions.
        query.addHandler { request ->
            val envelope = runCatching { JcefScripts.parseEnvelope(request) }.getOrNull()
                ?: return@addHandler JBCefJSQuery.Response(null, 1, "malformed query")
            // Answered later: a connect may take many seconds, and the CEF thread must not wait.
            bridge.handle(kind, envelope.query).thenAccept { answer -> run(JcefScripts.answer(envelope.id, answer)) }
            JBCefJSQuery.Response("")
        }
        browser.jbCefClient.addLoadHandler(object : CefLoadHandlerAdapter() {
            override fun onLoadEnd(cefBrowser: CefBrowser, frame: CefFrame, httpStatusCode: Int) {
                if (!frame.isMain) return
                val script = JcefScripts.bridge { request, onSuccess, onFailure -> query.inject(request, onSuccess, onFailure) }
                cefBrowser.executeJavaScript(script, cefBrowser.url, 0)
            }
        }, browser.cefBrowser)

        bridge.setPage(kind, push)
        val bundle = WebviewBundle.load()
        browser.loadHTML(
            if (bundle == null) WebviewBundle.MISSING_HTML else PageHtml.build(kind, service.locale, bundle.script, bundle.style),
        )
        service.ensureStarted()
    }

    private fun run(js: String) {
        if (disposed) return
        browser.cefBrowser.executeJavaScript(js, browser.cefBrowser.url, 0)
    }

    override fun dispose() {
        // APPS-3: every live app gets `ui/resource-teardown` before its frame goes with the
        // browser. Bounded (PageBridge.TEARDOWN_WAIT_MS): a stuck page never blocks the close.
        // The page's answer comes through the query handler on the CEF thread, not this one.
        if (kind == PageKind.CHAT) bridge.teardownChatApps("the chat closed")
        disposed = true
        bridge.removePage(kind, push)
        Disposer.dispose(query)
        Disposer.dispose(browser)
    }
}

/** The shared webview bundle (vscode-extension/dist/webview), packaged as plugin resources. */
class WebviewBundle(val script: String, val style: String) {
    companion object {
        const val MISSING_HTML =
            "<html><body><p>The Wave webview bundle is missing from this build of the plugin.</p></body></html>"

        fun load(): WebviewBundle? {
            fun text(name: String) = WebviewBundle::class.java.getResourceAsStream("/webview/$name")?.use {
                String(it.readAllBytes(), Charsets.UTF_8)
            }
            return WebviewBundle(text("webview.js") ?: return null, text("webview.css") ?: "")
        }
    }
}
