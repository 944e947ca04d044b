// What the settings page's actions ask of the host, as ordered lists of host actions: the same
// plans the shared webview makes (vscode-extension/webview/src/settingsState.ts), so the IntelliJ
// layer only executes them and their order (EDIT-3) is tested here.

package dev.wavemcp.client

import java.nio.file.Path
import java.util.Locale

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

    /** DEL-1: ask before deleting, naming the server and its config file (null: unknown). */
    data class Confirm(val name: String, val path: String?) : HostAction

    /** UI-12: a host notification, never a chat message. */
    data class Notify(val level: Level, val message: String) : HostAction

    enum class Level { INFO, WARNING, ERROR }
}

/** The IDE side. [perform] runs one action and returns only when it is done. */
fun interface Host {
    /** Returns the user's answer for [HostAction.Confirm], true for every other action. */
    fun perform(action: HostAction): Boolean
}

/** Runs the actions in order, stopping at a refused confirmation. Returns whether all ran. */
fun Host.performAll(actions: List<HostAction>): Boolean {
    for (action in actions) if (!perform(action)) return false
    return true
}

enum class Lang {
    EN, ZH;

    companion object {
        /** `zh`, `zh-CN`, `zh_TW`, ... are Chinese; everything else English (as the webview). */
        fun of(locale: Locale): Lang = if (locale.language.equals("zh", ignoreCase = true)) ZH else EN
        fun of(tag: String?): Lang = if (tag != null && tag.trim().lowercase().startsWith("zh")) ZH else EN
    }
}

/** The prefilled prompts of the specification (ADD-1, ADD-2, EDIT-1), as the webview writes them. */
object Prompts {
    fun addUser(lang: Lang): String = when (lang) {
        Lang.ZH -> "/settings 帮我配个用户级 MCP 服务器<名字>：连<command/url>，参数<args>"
        Lang.EN -> "/settings Help me add a user-level MCP server <name>: connect to <command/url>, args <args>"
    }

    fun addProject(lang: Lang, projectName: String?): String {
        val known = !projectName.isNullOrEmpty()
        return when (lang) {
            Lang.ZH -> "/settings 帮我在【${if (known) projectName else "项目名称"}】下配 MCP 服务器<名字>：连<command/url>，参数<args>"
            Lang.EN -> "/settings Help me add an MCP server <name> to the project \"${if (known) projectName else "<project name>"}\": connect to <command/url>, args <args>"
        }
    }

    fun edit(lang: Lang, name: String): String = when (lang) {
        Lang.ZH -> "帮我编辑 MCP 服务器$name：把<要改的内容>改成<新内容>"
        Lang.EN -> "Help me edit the MCP server $name: change <what to change> to <new value>"
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

    /**
     * The config file of a row: the sidecar's absolute path for its source (`configPaths`), else
     * the row's own absolute `configPath`, else null (unknown). Plugin and constructor rows have
     * none to edit (DEL-4).
     */
    fun of(server: McpServerView, paths: ConfigPaths?): String? {
        val fromPaths = when (server.source) {
            McpSource.USER -> paths?.userConfigPath
            McpSource.PROJECT -> paths?.projectConfigPath
            else -> null
        }
        if (isAbsolute(fromPaths)) return normalize(fromPaths!!)
        if (isAbsolute(server.configPath)) return normalize(server.configPath!!)
        return null
    }

    /** Removes `.`/`..` segments of a path of this OS; other OSes' paths stay as given. */
    private fun normalize(path: String): String =
        runCatching { Path.of(path).takeIf { it.isAbsolute }?.normalize()?.toString() }.getOrNull() ?: path
}

/** The settings page's Add, Edit and Delete as host actions. */
object SettingsFlows {
    /** Edit and Delete exist for user and project rows only (DEL-4). */
    fun editable(server: McpServerView): Boolean =
        !server.readOnly && (server.source == McpSource.USER || server.source == McpSource.PROJECT)

    /**
     * EDIT-1…3: open the config file FIRST (closing the settings tab disposes its webview, so an
     * open request after the close would be lost), then close settings, return to the chat and
     * prefill the edit prompt. Path unknown: no file is opened, only the prompt (EDIT-2).
     */
    fun edit(server: McpServerView, paths: ConfigPaths?, lang: Lang): List<HostAction> {
        if (!editable(server)) return emptyList()
        val path = ConfigFiles.of(server, paths)
        return listOfNotNull(
            path?.let { HostAction.OpenFile(it) },
            HostAction.CloseSettings,
            HostAction.FocusChat,
            HostAction.PrefillPrompt(Prompts.edit(lang, server.name)),
        )
    }

    /** ADD-1, ADD-2, ADD-4: close, back to the chat, prefill; never open a file. */
    fun add(source: McpSource, paths: ConfigPaths?, lang: Lang): List<HostAction> {
        val prompt = when (source) {
            McpSource.USER -> Prompts.addUser(lang)
            McpSource.PROJECT -> Prompts.addProject(lang, paths?.projectName)
            else -> throw IllegalArgumentException("servers can be added at user or project level only, not $source")
        }
        return listOf(HostAction.CloseSettings, HostAction.FocusChat, HostAction.PrefillPrompt(prompt))
    }

    /** UI-7: Back closes the page and returns to the chat; it prefills and sends nothing. */
    fun back(): List<HostAction> = listOf(HostAction.CloseSettings, HostAction.FocusChat)

    sealed interface DeleteOutcome {
        /** The row may not be deleted (plugin, constructor: DEL-4); nothing was asked or sent. */
        data object NotAllowed : DeleteOutcome
        /** DEL-1: the user cancelled; nothing was sent. */
        data object Cancelled : DeleteOutcome
        /** DEL-2: the entry is gone; the list without it. */
        data class Deleted(val snapshot: ServersSnapshot) : DeleteOutcome
        /** DEL-3: the sidecar refused; the file and the list are as they were. */
        data class Failed(val error: RpcException) : DeleteOutcome
    }

    /** DEL-1…4: confirm (naming the server and its file), then delete through the sidecar. */
    fun delete(server: McpServerView, paths: ConfigPaths?, host: Host, sidecar: WaveSidecar, sessionId: String? = null): DeleteOutcome {
        if (!editable(server)) return DeleteOutcome.NotAllowed
        if (!host.perform(HostAction.Confirm(server.name, ConfigFiles.of(server, paths)))) return DeleteOutcome.Cancelled
        return try {
            DeleteOutcome.Deleted(sidecar.delete(server.name, server.source!!, sessionId))
        } catch (e: RpcException) {
            host.perform(HostAction.Notify(HostAction.Level.ERROR, e.message))
            DeleteOutcome.Failed(e)
        }
    }
}
