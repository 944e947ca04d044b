// One per project: the sidecar, the page bridge, and the IDE side of the host actions. Everything
// that can be decided without IntelliJ lives in the client module (dev.wavemcp.client) and is
// tested there; this class only executes.

package dev.wavemcp.intellij

import com.intellij.DynamicBundle
import com.intellij.ide.BrowserUtil
import com.intellij.ide.impl.isTrusted
import com.intellij.ide.trustedProjects.TrustedProjectsListener
import com.intellij.ide.plugins.PluginManagerCore
import com.intellij.notification.NotificationAction
import com.intellij.notification.NotificationGroupManager
import com.intellij.notification.NotificationType
import com.intellij.openapi.Disposable
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.application.ModalityState
import com.intellij.openapi.components.Service
import com.intellij.openapi.diagnostic.logger
import com.intellij.openapi.extensions.PluginId
import com.intellij.openapi.fileEditor.FileEditorManager
import com.intellij.openapi.ide.CopyPasteManager
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.Messages
import com.intellij.openapi.util.text.StringUtil
import com.intellij.openapi.vfs.LocalFileSystem
import com.intellij.openapi.wm.ToolWindowManager
import dev.wavemcp.client.ApiKey
import dev.wavemcp.client.Host
import dev.wavemcp.client.HostAction
import dev.wavemcp.client.Lang
import dev.wavemcp.client.OpenUrlHandler
import dev.wavemcp.client.OpenUrlParams
import dev.wavemcp.client.PageBridge
import dev.wavemcp.client.SidecarLocator
import dev.wavemcp.client.SidecarOptions
import dev.wavemcp.client.WaveSidecar
import java.awt.datatransfer.StringSelection
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.atomic.AtomicBoolean

@Service(Service.Level.PROJECT)
class WaveProjectService(private val project: Project) : Disposable {
    private val log = logger<WaveProjectService>()
    private val starting = AtomicBoolean(false)
    @Volatile private var disposed = false
    @Volatile private var sidecar: WaveSidecar? = null

    /** The IDE's language decides the page's texts and the prompts (English or Chinese). */
    val locale: String = DynamicBundle.getLocale().toLanguageTag()
    val lang: Lang = Lang.of(locale)

    val bridge = PageBridge(IdeHost())

    /** The settings tab's file: one per project, so opening it again shows the same tab. */
    val settingsFile = McpSettingsFile(if (lang == Lang.ZH) "MCP 服务" else "MCP services")

    /** Starts the sidecar in the background unless it runs; page requests wait for it. */
    fun ensureStarted() {
        if (disposed || sidecar?.isAlive == true || !starting.compareAndSet(false, true)) return
        ApplicationManager.getApplication().executeOnPooledThread {
            try {
                start()
            } catch (e: Exception) {
                log.warn("the Wave sidecar did not start", e)
                bridge.unavailable("the Wave sidecar did not start: ${e.message}")
                notify(NotificationType.ERROR, "Wave: the sidecar did not start: ${e.message}")
            } finally {
                starting.set(false)
            }
        }
    }

    private fun start() {
        val workdir = project.basePath?.let { Path.of(it) } ?: error("the project has no directory")
        val pluginDir = PluginManagerCore.getPlugin(PluginId.getId("dev.wavemcp"))?.pluginPath
        pluginDir?.resolve("bin")?.resolve("wave-mcp")?.takeIf { Files.isRegularFile(it) && !Files.isExecutable(it) }
            ?.toFile()?.setExecutable(true)
        // TRUST-9: an untrusted project (opened in safe mode) gets no project server approved and
        // runs nothing of the project until the user trusts it (then `wave/workspace/trust`); not
        // even a `wave-mcp` in its target/.
        val trusted = project.isTrusted()
        val executable = SidecarLocator.find(pluginDir = pluginDir, projectDir = workdir, projectTrusted = trusted)
            ?: error("wave-mcp was not found (bundled, in a trusted project's target/, on PATH or in WAVE_MCP_SIDECAR)")
        log.info("starting $executable lsp in $workdir")
        val started = WaveSidecar.start(
            SidecarOptions(
                executable = executable,
                workdir = workdir,
                stderr = { log.debug(it) },
                openUrl = SignInBrowser(),
                workspaceTrusted = trusted,
                // USE-5: from PasswordSafe, into the sidecar's environment only.
                apiKey = ModelApiKeyStore.read(),
            ),
        )
        if (disposed) {
            started.shutdown()
            return
        }
        started.onExit {
            if (!disposed && sidecar === started) {
                bridge.unavailable("the Wave sidecar exited")
                notify(NotificationType.WARNING, "Wave: the sidecar exited; reopen the MCP page to start it again")
            }
        }
        sidecar = started
        // TRUST-3, TRUST-5: the consent questions are answered by the chat page's cards (the
        // client's default, PageConsent over the page bridge): nothing to set here.
        bridge.attach(started)
        if (!trusted) {
            TrustedProjectsListener.onceWhenProjectTrusted(this) { trustedProject ->
                if (trustedProject == project && sidecar === started) started.workspaceTrust(true)
            }
        }
    }

    /** UI-1: the settings page in an editor tab, "MCP services" selected. */
    fun openSettings() {
        ensureStarted()
        FileEditorManager.getInstance(project).openFile(settingsFile, true)
    }

    fun notify(type: NotificationType, message: String) {
        NotificationGroupManager.getInstance().getNotificationGroup("Wave").createNotification(message, type).notify(project)
    }

    /**
     * USE-5: a new API key takes effect in a new sidecar (as VS Code's "Wave: Set API Key" restarts
     * its sidecar): the running one is shut down and the next page request starts another.
     */
    fun restartSidecar() {
        val side = sidecar ?: return
        sidecar = null
        bridge.unavailable("the Wave sidecar restarts with the new API key")
        ApplicationManager.getApplication().executeOnPooledThread {
            side.shutdown()
            ensureStarted()
        }
    }

    override fun dispose() {
        disposed = true
        bridge.close()
        val side = sidecar ?: return
        sidecar = null
        // LIFE-8: the sidecar ends every MCP process tree before it answers `shutdown`. Off the
        // EDT; should the IDE exit first, the end of the sidecar's stdin does the same.
        ApplicationManager.getApplication().executeOnPooledThread { side.shutdown() }
    }

    /**
     * AUTH-2: the sidecar's `wave/mcp/openUrl`. The URL is always shown (a notification with
     * "Copy URL") and opened in the user's browser with BrowserUtil; `false` (BrowserUtil threw)
     * lets the sidecar open it itself. Called on a pool thread; answers without waiting for the
     * user to finish signing in.
     */
    private inner class SignInBrowser : OpenUrlHandler {
        override fun openUrl(params: OpenUrlParams): Boolean {
            if (!params.url.startsWith("http://") && !params.url.startsWith("https://")) return false
            val zh = lang == Lang.ZH
            val message = if (zh) "登录 MCP 服务“${params.name}”：请在浏览器中完成登录。${params.url}"
            else "Sign in to the MCP server \"${params.name}\" in your browser: ${params.url}"
            NotificationGroupManager.getInstance().getNotificationGroup("Wave")
                // Notification content is HTML: the URL's `&`s must stay text.
                .createNotification(StringUtil.escapeXmlEntities(message), NotificationType.INFORMATION)
                .addAction(NotificationAction.createSimple(if (zh) "复制链接" else "Copy URL") {
                    CopyPasteManager.getInstance().setContents(StringSelection(params.url))
                })
                .addAction(NotificationAction.createSimple(if (zh) "打开链接" else "Open URL") { BrowserUtil.browse(params.url) })
                .notify(project)
            return try {
                BrowserUtil.browse(params.url)
                true
            } catch (e: Exception) {
                log.info("could not open the sign-in URL of ${params.name}: ${e.message}")
                false
            }
        }
    }

    /** Runs [block] on the EDT and waits for it (host actions run one at a time, in order). */
    private fun <T> onEdt(block: () -> T): T {
        val app = ApplicationManager.getApplication()
        if (app.isDispatchThread) return block()
        var result: Result<T>? = null
        app.invokeAndWait({ result = runCatching(block) }, ModalityState.defaultModalityState())
        return result!!.getOrThrow()
    }

    /** The IDE side of the host actions the pages and the client's flows ask for. */
    private inner class IdeHost : Host {
        override fun perform(action: HostAction): Boolean = when (action) {
            // EDIT-1: an editor tab for the absolute path the sidecar gave (EDIT-2). The page
            // asks for this before it asks to close itself (EDIT-3), and its answer is sent
            // only after the tab is open.
            is HostAction.OpenFile -> onEdt {
                val file = LocalFileSystem.getInstance().refreshAndFindFileByNioFile(Path.of(action.path))
                    ?: throw IllegalStateException("${action.path} does not exist")
                FileEditorManager.getInstance(project).openFile(file, true)
                true
            }
            HostAction.CloseSettings -> onEdt {
                FileEditorManager.getInstance(project).closeFile(settingsFile)
                true
            }
            HostAction.FocusChat -> onEdt {
                ToolWindowManager.getInstance(project).getToolWindow(CHAT_TOOL_WINDOW)?.activate(null)
                true
            }
            is HostAction.PrefillPrompt -> {
                bridge.prefillChat(action.text)
                true
            }
            HostAction.OpenSettings -> onEdt {
                openSettings()
                true
            }
            // USE-4: a link of the answer opens in the browser only when the user confirms it.
            is HostAction.OpenExternal -> onEdt {
                val zh = lang == Lang.ZH
                val confirmed = Messages.showOkCancelDialog(
                    project,
                    (if (zh) "在浏览器中打开 Wave 聊天中的链接？\n" else "Open the link from the Wave chat in your browser?\n") + action.url,
                    if (zh) "打开链接" else "Open Link",
                    if (zh) "打开" else "Open",
                    if (zh) "取消" else "Cancel",
                    Messages.getQuestionIcon(),
                ) == Messages.OK
                if (confirmed) BrowserUtil.browse(action.url)
                true
            }
            // UI-12: failures show as notifications, never as chat messages.
            is HostAction.Notify -> {
                notify(
                    when (action.level) {
                        HostAction.Level.ERROR -> NotificationType.ERROR
                        HostAction.Level.WARNING -> NotificationType.WARNING
                        HostAction.Level.INFO -> NotificationType.INFORMATION
                    },
                    action.message,
                )
                true
            }
        }
    }

    companion object {
        const val CHAT_TOOL_WINDOW = "Wave"
    }
}
