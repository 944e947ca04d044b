// The session view (the shared chat page in a tool window) and the "Wave: MCP Servers" action.
// `/mcp` typed in the chat is turned by the page into `host/openSettings`, which the bridge
// executes as HostAction.OpenSettings: the settings tab opens and nothing is sent (UI-1).

package dev.wavemcp.intellij

import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.components.service
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.Project
import com.intellij.openapi.wm.ToolWindow
import com.intellij.openapi.wm.ToolWindowFactory
import com.intellij.ui.content.ContentFactory
import com.intellij.ui.jcef.JBCefApp
import dev.wavemcp.client.PageKind
import javax.swing.JLabel

class ChatToolWindowFactory : ToolWindowFactory, DumbAware {
    override fun createToolWindowContent(project: Project, toolWindow: ToolWindow) {
        val page = if (JBCefApp.isSupported()) JcefPage(project, PageKind.CHAT, toolWindow.disposable) else null
        val component = page?.component ?: JLabel("The Wave chat needs JCEF, which this IDE runtime does not provide.")
        val content = ContentFactory.getInstance().createContent(component, "", false)
        // APPS-3: the content removed (or the project closing, through the tool window's
        // disposable) disposes the page, which first asks the chat to tear its apps down.
        page?.let { content.setDisposer(it) }
        toolWindow.contentManager.addContent(content)
    }
}

class OpenMcpSettingsAction : AnAction(), DumbAware {
    override fun actionPerformed(e: AnActionEvent) {
        e.project?.service<WaveProjectService>()?.openSettings()
    }

    override fun update(e: AnActionEvent) {
        e.presentation.isEnabled = e.project != null
    }

    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT
}
