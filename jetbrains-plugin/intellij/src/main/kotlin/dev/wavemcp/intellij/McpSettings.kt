// The settings page as an editor tab (UI-1): a JCEF FileEditor on a virtual file.

package dev.wavemcp.intellij

import com.intellij.openapi.fileEditor.FileEditor
import com.intellij.openapi.fileEditor.FileEditorPolicy
import com.intellij.openapi.fileEditor.FileEditorProvider
import com.intellij.openapi.fileEditor.FileEditorState
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.Project
import com.intellij.openapi.util.UserDataHolderBase
import com.intellij.openapi.vfs.VirtualFile
import com.intellij.testFramework.LightVirtualFile
import com.intellij.ui.jcef.JBCefApp
import dev.wavemcp.client.PageKind
import java.beans.PropertyChangeListener
import javax.swing.JComponent
import javax.swing.JLabel

/** The settings tab's file; it has no content, only a name for the tab. */
class McpSettingsFile(title: String) : LightVirtualFile(title) {
    init {
        isWritable = false
    }
}

class McpSettingsEditorProvider : FileEditorProvider, DumbAware {
    override fun accept(project: Project, file: VirtualFile): Boolean = file is McpSettingsFile

    override fun createEditor(project: Project, file: VirtualFile): FileEditor = McpSettingsEditor(project, file as McpSettingsFile)

    override fun getEditorTypeId(): String = "wave-mcp-settings"

    override fun getPolicy(): FileEditorPolicy = FileEditorPolicy.HIDE_DEFAULT_EDITOR
}

class McpSettingsEditor(project: Project, private val file: McpSettingsFile) : UserDataHolderBase(), FileEditor {
    // Disposed with this editor, that is when the tab closes (host/closeSettings, UI-7).
    private val page: JcefPage? = if (JBCefApp.isSupported()) JcefPage(project, PageKind.SETTINGS, this) else null
    private val fallback = JLabel("The MCP services page needs JCEF, which this IDE runtime does not provide.")

    override fun getComponent(): JComponent = page?.component ?: fallback

    override fun getPreferredFocusedComponent(): JComponent = getComponent()

    override fun getName(): String = file.name

    override fun getFile(): VirtualFile = file

    override fun setState(state: FileEditorState) {}

    override fun isModified(): Boolean = false

    override fun isValid(): Boolean = true

    override fun addPropertyChangeListener(listener: PropertyChangeListener) {}

    override fun removePropertyChangeListener(listener: PropertyChangeListener) {}

    override fun dispose() {}
}
