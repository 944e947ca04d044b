// USE-5: the model endpoint's API key in the IDE's PasswordSafe (the OS keychain or KeePass, as
// the user configured the IDE), like VS Code's SecretStorage; the action that sets it.
// Written against the IntelliJ Platform API; not compiled here (see jetbrains-plugin/README.md).

package dev.wavemcp.intellij

import com.intellij.credentialStore.CredentialAttributes
import com.intellij.credentialStore.Credentials
import com.intellij.credentialStore.generateServiceName
import com.intellij.ide.passwordSafe.PasswordSafe
import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.components.service
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.ProjectManager
import com.intellij.openapi.ui.Messages
import dev.wavemcp.client.ApiKey

object ModelApiKeyStore {
    private val attributes = CredentialAttributes(generateServiceName("Wave", ApiKey.CREDENTIAL_SERVICE))

    /** The stored key, or null. PasswordSafe may block (a keychain prompt): never on the EDT. */
    fun read(): ApiKey? = ApiKey.of(PasswordSafe.instance.getPassword(attributes))

    /** Stores [key]; a blank one removes the stored key. */
    fun write(key: String) {
        val credentials = ApiKey.of(key)?.let { Credentials("wave", it.value) }
        PasswordSafe.instance.set(attributes, credentials)
    }
}

/** "Wave: Set Model API Key": asks with a password field, stores, restarts each project's sidecar. */
class SetModelApiKeyAction : AnAction(), DumbAware {
    override fun actionPerformed(e: AnActionEvent) {
        val key = Messages.showPasswordDialog(
            e.project,
            "API key of the model endpoint (kept in the IDE's password safe; empty removes it)",
            "Wave: Model API Key",
            null,
        ) ?: return
        ApplicationManager.getApplication().executeOnPooledThread {
            ModelApiKeyStore.write(key)
            for (project in ProjectManager.getInstance().openProjects) {
                project.service<WaveProjectService>().restartSidecar()
            }
        }
    }

    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT
}
