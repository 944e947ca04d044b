// Add, Edit and Delete as the ordered host actions the IntelliJ layer executes, with rows and
// config paths from the real sidecar (ADD-*, EDIT-*, DEL-*).

package dev.wavemcp.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.util.Locale

class SettingsFlowsTest {
    @Test
    fun `EDIT-1 EDIT-3 Edit opens the config file first, then closes settings, then prefills`() = Sandbox().use { sb ->
        sb.writeUser(sb.config("u" to sb.server("u")))
        sb.writeProject(sb.config("p" to sb.server("p")))
        val sidecar = sb.start()
        val paths = sidecar.configPaths()
        val rows = sidecar.servers()

        val host = RecordingHost()
        host.performAll(SettingsFlows.edit(rows.server("p")!!, paths, Lang.EN))
        assertEquals(
            listOf(
                HostAction.OpenFile(sb.projectConfig.toString()),
                HostAction.CloseSettings,
                HostAction.FocusChat,
                HostAction.PrefillPrompt("Help me edit the MCP server p: change <what to change> to <new value>"),
            ),
            host.recorded(),
        )
        val actions = host.recorded()
        val open = actions.indexOfFirst { it is HostAction.OpenFile }
        val close = actions.indexOf(HostAction.CloseSettings)
        val prefill = actions.indexOfFirst { it is HostAction.PrefillPrompt }
        assertTrue(open in 0 until close && close < prefill, "EDIT-3 order: $actions")

        // The user row opens ~/.wave/mcp.json, absolute (EDIT-2), with the Chinese prompt.
        val zh = SettingsFlows.edit(rows.server("u")!!, paths, Lang.of(Locale.SIMPLIFIED_CHINESE))
        assertEquals(HostAction.OpenFile(sb.userConfig.toString()), zh.first())
        assertEquals(HostAction.PrefillPrompt("帮我编辑 MCP 服务器u：把<要改的内容>改成<新内容>"), zh.last())
        // Nothing was asked of the sidecar but the two lists: Edit never writes.
        assertEquals(listOf("initialize", Methods.CONFIG_PATHS, Methods.SERVERS), sidecar.sentRequests)
    }

    @Test
    fun `EDIT-2 Edit with an unknown path opens nothing, only the prompt`() {
        val row = McpServerView(name = "x", source = McpSource.USER, transport = "stdio", status = McpStatus.DISCONNECTED)
        val expected = listOf(
            HostAction.CloseSettings,
            HostAction.FocusChat,
            HostAction.PrefillPrompt("Help me edit the MCP server x: change <what to change> to <new value>"),
        )
        assertEquals(expected, SettingsFlows.edit(row, null, Lang.EN))
        // A path that is not absolute is as good as unknown: no placeholder file is opened.
        val relative = ConfigPaths(userConfigPath = "~/.wave/mcp.json", projectConfigPath = ".mcp.json")
        assertEquals(expected, SettingsFlows.edit(row.copy(configPath = ".wave/mcp.json"), relative, Lang.EN))
        // The row's own absolute path serves when configPaths has none.
        assertEquals(HostAction.OpenFile("/home/me/.wave/mcp.json"), SettingsFlows.edit(row.copy(configPath = "/home/me/.wave/mcp.json"), null, Lang.EN).first())
        // Windows paths are absolute too (the sidecar may run there).
        assertTrue(ConfigFiles.isAbsolute("C:\\Users\\me\\.wave\\mcp.json") && ConfigFiles.isAbsolute("\\\\srv\\share\\.mcp.json"))
        // DEL-4: plugin and constructor rows have no Edit.
        assertEquals(emptyList<HostAction>(), SettingsFlows.edit(row.copy(source = McpSource.PLUGIN, readOnly = true, configPath = "/p/.mcp.json"), null, Lang.EN))
    }

    @Test
    fun `ADD-1 ADD-2 Add closes settings, focuses the chat, prefills and never opens a file`() = Sandbox("shop-api").use { sb ->
        val sidecar = sb.start()
        val paths = sidecar.configPaths()
        for (exists in listOf(false, true)) {
            if (exists) {
                sb.writeUser(sb.config("u" to sb.server("u")))
                sb.writeProject(sb.config("p" to sb.server("p")))
            }
            for (lang in Lang.entries) for (source in listOf(McpSource.USER, McpSource.PROJECT)) {
                val host = RecordingHost()
                host.performAll(SettingsFlows.add(source, paths, lang))
                val actions = host.recorded()
                assertTrue(actions.none { it is HostAction.OpenFile }, "ADD-1: no file opened (exists=$exists): $actions")
                assertEquals(listOf(HostAction.CloseSettings, HostAction.FocusChat), actions.take(2))
                assertTrue(actions.last() is HostAction.PrefillPrompt)
            }
        }
        assertEquals(
            HostAction.PrefillPrompt("/settings 帮我配个用户级 MCP 服务器<名字>：连<command/url>，参数<args>"),
            SettingsFlows.add(McpSource.USER, paths, Lang.ZH).last(),
        )
        assertEquals(
            HostAction.PrefillPrompt("/settings 帮我在【shop-api】下配 MCP 服务器<名字>：连<command/url>，参数<args>"),
            SettingsFlows.add(McpSource.PROJECT, paths, Lang.ZH).last(),
        )
        assertEquals(
            HostAction.PrefillPrompt("/settings Help me add a user-level MCP server <name>: connect to <command/url>, args <args>"),
            SettingsFlows.add(McpSource.USER, paths, Lang.EN).last(),
        )
        assertEquals(
            HostAction.PrefillPrompt("/settings Help me add an MCP server <name> to the project \"shop-api\": connect to <command/url>, args <args>"),
            SettingsFlows.add(McpSource.PROJECT, paths, Lang.EN).last(),
        )
        // ADD-4: Add sends nothing; the user sends the prompt as an ordinary message.
        assertEquals(listOf("initialize", Methods.CONFIG_PATHS), sidecar.sentRequests)
        // UI-7: Back closes and returns, nothing else.
        assertEquals(listOf(HostAction.CloseSettings, HostAction.FocusChat), SettingsFlows.back())
    }

    @Test
    fun `DEL-1 Delete asks first, naming the server and its file - cancel changes nothing`() = Sandbox().use { sb ->
        val text = sb.config("keep" to sb.server("keep"), "gone" to sb.server("gone"))
        sb.writeProject(text)
        val sidecar = sb.start()
        val paths = sidecar.configPaths()
        val before = sidecar.servers()

        val host = RecordingHost(confirm = false)
        val outcome = SettingsFlows.delete(before.server("gone")!!, paths, host, sidecar)
        assertEquals(SettingsFlows.DeleteOutcome.Cancelled, outcome)
        assertEquals(listOf(HostAction.Confirm("gone", sb.projectConfig.toString())), host.recorded())
        assertFalse(Methods.DELETE in sidecar.sentRequests, "no delete request was sent")
        assertEquals(text, Files.readString(sb.projectConfig))
        assertEquals(before.servers, sidecar.servers().servers)
    }

    @Test
    fun `DEL-1 DEL-2 DEL-3 DEL-4 Delete confirmed removes the entry, errors change nothing, read-only rows are refused`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("keep" to sb.server("keep"), "gone" to sb.server("gone")))
        sb.writeUser(sb.config("mine" to sb.server("mine")))
        val sidecar = sb.start(com.google.gson.JsonObject().apply { add("c", sb.server("c")) })
        val paths = sidecar.configPaths()
        val rows = sidecar.servers()

        val host = RecordingHost(confirm = true)
        val outcome = SettingsFlows.delete(rows.server("gone")!!, paths, host, sidecar)
        assertTrue(outcome is SettingsFlows.DeleteOutcome.Deleted, "$outcome")
        assertNull((outcome as SettingsFlows.DeleteOutcome.Deleted).snapshot.server("gone"))
        assertEquals(listOf(HostAction.Confirm("gone", sb.projectConfig.toString())), host.recorded())
        assertEquals(sb.config("keep" to sb.server("keep")), Files.readString(sb.projectConfig))

        // DEL-3: a row whose entry is no longer in the file: an error, shown as a notification,
        // and neither the file nor the list changes.
        val projectText = Files.readString(sb.projectConfig)
        val listed = sidecar.servers()
        val ghost = rows.server("gone")!!.copy(name = "ghost")
        val failing = RecordingHost(confirm = true)
        val failed = SettingsFlows.delete(ghost, paths, failing, sidecar)
        assertTrue(failed is SettingsFlows.DeleteOutcome.Failed, "$failed")
        assertEquals(ErrorKind.ENTRY_MISSING, (failed as SettingsFlows.DeleteOutcome.Failed).error.kind)
        assertTrue(failing.recorded().last() is HostAction.Notify, "UI-12: shown as a notification: ${failing.recorded()}")
        assertEquals(projectText, Files.readString(sb.projectConfig))
        assertEquals(listed.servers, sidecar.servers().servers)

        // DEL-4: constructor (and plugin) rows: no confirmation, no request.
        val sent = sidecar.sentRequests.size
        val refused = RecordingHost()
        assertEquals(SettingsFlows.DeleteOutcome.NotAllowed, SettingsFlows.delete(rows.server("c")!!, paths, refused, sidecar))
        assertEquals(emptyList<HostAction>(), refused.recorded())
        assertEquals(sent, sidecar.sentRequests.size)
    }
}
