// The client against the real sidecar (`wave-mcp lsp`) and our test MCP server: the typed MCP
// methods, the serversChanged stream, config paths and shutdown. Each test has its own HOME and
// workspace and ends with the sidecar shut down and no test-server process left (Sandbox.close).

package dev.wavemcp.client

import com.google.gson.JsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

class SidecarClientTest {
    @Test
    fun `LIFE-1 LAZY-1 UI-2 list shows every server disconnected with its source and spawns nothing`() = Sandbox().use { sb ->
        sb.writeUser(sb.config("u" to sb.server("u")))
        sb.writeProject(sb.config("p" to sb.server("p")))
        val constructor = JsonObject().apply { add("c", sb.server("c")) }
        val sidecar = sb.start(constructor)
        assertEquals("wave-mcp", sidecar.initializeResult.getAsJsonObject("serverInfo").get("name").asString)

        val snapshot = sidecar.servers()
        assertEquals(DEFAULT_SESSION_ID, snapshot.sessionId)
        assertTrue(snapshot.version >= 1)
        assertEquals(listOf("c", "p", "u"), snapshot.servers.map { it.name }.sorted())
        val u = snapshot.server("u")!!
        assertEquals(McpSource.USER, u.source)
        assertEquals(McpStatus.DISCONNECTED, u.status)
        assertEquals("stdio", u.transport)
        assertEquals(Binaries.testServer.toString(), u.command)
        assertEquals(0, u.toolCount)
        assertFalse(u.readOnly)
        assertEquals(sb.userConfig.toString(), u.configPath)
        assertEquals(McpSource.PROJECT, snapshot.server("p")!!.source)
        assertEquals(sb.projectConfig.toString(), snapshot.server("p")!!.configPath)
        // DEL-4: constructor rows are read-only and have no file.
        assertTrue(snapshot.server("c")!!.readOnly)
        assertNull(snapshot.server("c")!!.configPath)
        // LAZY-1: nothing was started.
        assertEquals(emptyList<Long>(), sb.pids("u") + sb.pids("p") + sb.pids("c"))
        assertEquals(emptyList<Long>(), sb.liveProcesses())
    }

    @Test
    fun `LAZY-5 UI-2 connect reports connected and counts the tools`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("files" to sb.server("files"), "other" to sb.server("other")))
        val sidecar = sb.start()
        val reply = sidecar.connect("files")
        val row = reply.server("files")!!
        assertEquals(McpStatus.CONNECTED, row.status, "row: $row")
        assertEquals(2, row.toolCount)
        assertEquals(listOf("mcp__files__add", "mcp__files__echo"), row.tools.map { it.fullName }.sorted())
        assertFalse(row.toolsFromCache)
        assertNotNull(row.lastConnectedAt)
        assertEquals(McpStatus.DISCONNECTED, reply.server("other")!!.status)
        val pids = sb.pids("files")
        assertTrue(pids.isNotEmpty() && pids.all(::alive), "server pids $pids")
        // The reply is what is shown now (UI-11 bookkeeping).
        assertEquals(reply.version, sidecar.snapshots.latest()!!.version)
    }

    @Test
    fun `UI-12 a failed connect is the row's error, not an exception`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("broken" to sb.server("broken", "--fail-initialize")))
        val sidecar = sb.start()
        val row = sidecar.connect("broken").server("broken")!!
        assertEquals(McpStatus.ERROR, row.status)
        assertTrue(!row.error.isNullOrBlank(), "row: $row")
        // An unknown name is a request error with its kind.
        val e = assertThrows(RpcException::class.java) { sidecar.connect("nope") }
        assertEquals(REQUEST_FAILED, e.code)
        assertEquals(ErrorKind.UNKNOWN_SERVER, e.kind)
    }

    @Test
    fun `UI-4 LIFE-6 LAZY-8 disconnect answers with a snapshot and ends the server, config untouched`() = Sandbox().use { sb ->
        val text = sb.config("files" to sb.server("files", "--spawn-descendants", "2"))
        sb.writeProject(text)
        val sidecar = sb.start()
        val connected = sidecar.connect("files")
        assertEquals(McpStatus.CONNECTED, connected.server("files")!!.status)
        eventually(message = { "pids: ${sb.pids("files")}" }) { sb.pids("files").size >= 3 }
        val pids = sb.pids("files")

        val reply = sidecar.disconnect("files")
        val row = reply.server("files")!!
        assertEquals(McpStatus.DISCONNECTED, row.status)
        assertTrue(reply.version > connected.version)
        // CACHE-2: the tools of the last connection stay visible, marked as cached.
        assertTrue(row.toolsFromCache)
        assertEquals(2, row.toolCount)
        eventually(message = { "still alive: ${pids.filter(::alive)}" }) { pids.none(::alive) }
        assertEquals(text, Files.readString(sb.projectConfig))
        // UI-4: a server that is not connected (or not there) still gets the latest list.
        assertEquals(McpStatus.DISCONNECTED, sidecar.disconnect("files").server("files")!!.status)
        assertNull(sidecar.disconnect("nope").server("nope"))
    }

    @Test
    fun `DEL-2 delete removes only that entry from the file on disk and the list drops it`() = Sandbox().use { sb ->
        val keep1 = WIRE_GSON.toJson(sb.server("keep1"))
        val victim = WIRE_GSON.toJson(sb.server("victim"))
        val keep2 = WIRE_GSON.toJson(sb.server("keep2"))
        val victimLine = "    \"victim\":   $victim,\n"
        val text = "{\n  \"mcpServers\": {\n    \"keep1\": $keep1,\n$victimLine    \"keep2\" :$keep2\n  },\n\t\"x-unknown\": [1, {\"a\": null}]\n}\n"
        sb.writeProject(text)
        val userText = sb.config("mine" to sb.server("mine"))
        sb.writeUser(userText)
        val sidecar = sb.start()
        assertEquals(McpStatus.CONNECTED, sidecar.connect("victim").server("victim")!!.status)
        val pids = sb.pids("victim")

        val reply = sidecar.delete("victim", McpSource.PROJECT)
        assertNull(reply.server("victim"))
        assertEquals(listOf("keep1", "keep2", "mine"), reply.servers.map { it.name }.sorted())
        // Every other byte stays: order, odd spacing, the unknown field, the trailing newline.
        assertEquals(text.replace(victimLine, ""), Files.readString(sb.projectConfig))
        assertEquals(userText, Files.readString(sb.userConfig))
        eventually(message = { "the deleted server still runs: $pids" }) { pids.none(::alive) }
        // DEL-2: it appears under no tab afterwards.
        assertNull(sidecar.servers().server("victim"))
    }

    @Test
    fun `DEL-3 DEL-4 refused deletes name their kind and change nothing`() = Sandbox().use { sb ->
        val text = sb.config("p" to sb.server("p"))
        sb.writeProject(text)
        val constructor = JsonObject().apply { add("c", sb.server("c")) }
        val sidecar = sb.start(constructor)
        val before = sidecar.servers().servers

        val readOnly = assertThrows(RpcException::class.java) { sidecar.delete("c", McpSource.CONSTRUCTOR) }
        assertEquals(ErrorKind.READ_ONLY, readOnly.kind)
        val missingFile = assertThrows(RpcException::class.java) { sidecar.delete("u", McpSource.USER) }
        assertEquals(ErrorKind.FILE_MISSING, missingFile.kind)
        assertEquals(sb.userConfig.toString(), missingFile.errorData!!.path)
        val missingEntry = assertThrows(RpcException::class.java) { sidecar.delete("zz", McpSource.PROJECT) }
        assertEquals(ErrorKind.ENTRY_MISSING, missingEntry.kind)

        assertEquals(text, Files.readString(sb.projectConfig))
        assertFalse(Files.exists(sb.userConfig))
        assertEquals(before, sidecar.servers().servers)
    }

    @Test
    fun `EDIT-2 config paths are absolute, whether or not the files exist`() = Sandbox("my-project").use { sb ->
        val sidecar = sb.start()
        val paths = sidecar.configPaths()
        assertEquals(sb.userConfig.toString(), paths.userConfigPath)
        assertEquals(sb.projectConfig.toString(), paths.projectConfigPath)
        assertEquals("my-project", paths.projectName)
        assertEquals(sb.workdir.toString(), paths.workdir)
        for (p in listOf(paths.userConfigPath, paths.projectConfigPath)) {
            assertTrue(Path.of(p).isAbsolute && ConfigFiles.isAbsolute(p), p)
            assertFalse(Files.exists(Path.of(p)))
        }
    }

    @Test
    fun `UI-5 UI-11 the serversChanged stream shows connecting then connected with growing versions`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("slow" to sb.server("slow", "--slow-initialize-ms", "300")))
        val sidecar = sb.start()
        val listed = sidecar.servers()
        val stream = java.util.Collections.synchronizedList(mutableListOf<ServersSnapshot>())
        sidecar.onServersChanged { stream += it }

        val reply = sidecar.connect("slow")
        assertEquals(McpStatus.CONNECTED, reply.server("slow")!!.status)
        sidecar.drain()
        val pushed = synchronized(stream) { stream.toList() }
        val versions = pushed.map { it.version }
        assertTrue(versions.zipWithNext().all { (a, b) -> a < b }, "versions $versions")
        assertTrue(versions.all { it > listed.version }, "versions $versions after ${listed.version}")
        val statuses = pushed.map { it.server("slow")!!.status }
        assertTrue(McpStatus.CONNECTING in statuses, "statuses $statuses")
        // Nothing newer than the reply is left unshown, nothing older than what is shown is kept.
        val latest = sidecar.snapshots.latest()!!
        assertTrue(latest.version >= reply.version)
        assertEquals(McpStatus.CONNECTED, latest.server("slow")!!.status)
    }

    @Test
    fun `LIFE-8 shutdown ends the sidecar and every MCP server it started`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("a" to sb.server("a", "--spawn-descendants", "2"), "b" to sb.server("b")))
        val sidecar = sb.start()
        sidecar.connect("a")
        sidecar.connect("b")
        eventually(message = { "pids ${sb.pids("a")}" }) { sb.pids("a").size >= 3 }
        val pids = sb.pids("a") + sb.pids("b")
        assertTrue(pids.all(::alive))

        assertEquals(0, sidecar.shutdown())
        assertFalse(sidecar.isAlive)
        assertEquals(emptyList<Long>(), pids.filter(::alive))
        // A request after the end fails at once instead of hanging.
        val e = assertThrows(RpcException::class.java) { sidecar.servers() }
        assertEquals(RpcException.LOCAL, e.code)
        assertEquals(0, sidecar.shutdown(), "shutdown is idempotent")
    }
}
