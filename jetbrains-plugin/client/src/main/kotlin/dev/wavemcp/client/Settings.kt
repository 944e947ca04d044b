// What the shared webview's `host/*` requests ask of the IDE, as host actions the IntelliJ layer
// executes in order (EDIT-3). The settings page's own logic (prompts, Add/Edit/Delete plans) lives
// in the webview only (vscode-extension/webview/src/settingsState.ts).

package dev.wavemcp.client

/** One thing the IDE does for the settings page. Executed in list order. */
sealed interface HostAction {
    /** EDIT-1: open this absolute path in an editor tab. */
    data class OpenFile(val path: String) : HostAction

    /** UI-7: close the settings tab (disposes its webview). */
    data object CloseSettings : HostAction

    /** Return to the session view (the chat tool window). */
    data object FocusChat : HostAction

    /** ADD-1, EDIT-1: put this text in the chat input, focused, not sent. */
    data class PrefillPrompt(val text: String) : HostAction

    /** UI-1: open the settings tab with "MCP services" selected. */
    data object OpenSettings : HostAction

    /**
     * USE-4: a link of the assistant's answer (http, https or mailto, checked by the bridge):
     * opened in the browser only after the user confirms.
     */
    data class OpenExternal(val url: String) : HostAction

    /** UI-12: a host notification, never a chat message. */
    data class Notify(val level: Level, val message: String) : HostAction

    enum class Level { INFO, WARNING, ERROR }
}

/** The IDE side. [perform] runs one action and returns only when it is done. */
fun interface Host {
    /** True when the action was done. */
    fun perform(action: HostAction): Boolean
}

/** Runs the actions in order, stopping at one that was not done. Returns whether all ran. */
fun Host.performAll(actions: List<HostAction>): Boolean {
    for (action in actions) if (!perform(action)) return false
    return true
}

enum class Lang {
    EN, ZH;

    companion object {
        /** `zh`, `zh-CN`, `zh_TW`, ... are Chinese; everything else English (as the webview). */
        fun of(tag: String?): Lang = if (tag != null && tag.trim().lowercase().startsWith("zh")) ZH else EN
    }
}

/** EDIT-2: config files as absolute OS paths, or unknown — never `~` or a relative path. */
object ConfigFiles {
    /** `/x`, `C:\x`, `C:/x`, `\\server\share`: absolute on some OS, whatever this one is. */
    fun isAbsolute(path: String?): Boolean {
        if (path.isNullOrEmpty()) return false
        if (path.startsWith("/") || path.startsWith("\\\\")) return true
        return path.length >= 3 && path[0].isLetter() && path[1] == ':' && (path[2] == '\\' || path[2] == '/')
    }
}
