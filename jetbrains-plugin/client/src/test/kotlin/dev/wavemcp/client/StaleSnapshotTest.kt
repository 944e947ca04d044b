// UI-11: a snapshot older than the one shown is ignored, one of the same version is not — with snapshots the real
// sidecar produced, and through the client's stream with a peer that sends them out of order.

package dev.wavemcp.client

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.PipedInputStream
import java.io.PipedOutputStream
import java.nio.file.Path

class StaleSnapshotTest {
    @Test
    fun `UI-11 real snapshots offered out of order - strictly older versions are dropped, equal ones kept`() = Sandbox().use { sb ->
        sb.writeProject(sb.config("s" to sb.server("s")))
        val sidecar = sb.start()
        val pushed = java.util.Collections.synchronizedList(mutableListOf<ServersSnapshot>())
        sidecar.onServersChanged { pushed += it }
        val listed = sidecar.servers()
        val connected = sidecar.connect("s")
        val disconnected = sidecar.disconnect("s")
        sidecar.drain()
        val all = (listOf(listed, connected, disconnected) + synchronized(pushed) { pushed.toList() }).sortedBy { it.version }
        assertTrue(all.size >= 4, "snapshots: ${all.map { it.version }}")
        assertEquals(all.map { it.version }.distinct(), all.map { it.version }, "versions are unique")

        val tracker = SnapshotTracker()
        val shown = mutableListOf<Long>()
        tracker.onAccepted { shown += it.version }
        // The newest arrives first: everything older is stale.
        assertTrue(tracker.offer(all.last()))
        for (older in all.dropLast(1).reversed()) assertFalse(tracker.offer(older), "v${older.version} must be dropped")
        // Equal is not older: shown again (the documented rule drops only strictly older).
        assertTrue(tracker.offer(all.last()))
        assertEquals(listOf(all.last().version, all.last().version), shown)
        assertFalse(tracker.offer(all.first()), "still older after the equal one")
        assertEquals(McpStatus.DISCONNECTED, tracker.latest()!!.server("s")!!.status)

        // In order, each one is shown.
        val inOrder = SnapshotTracker()
        assertTrue(all.all { inOrder.offer(it) })
        // Versions are per session; a new sidecar starts again.
        assertTrue(inOrder.offer(all.first().copy(sessionId = "session-1")))
        inOrder.reset()
        assertTrue(inOrder.offer(all.first()))
    }

    @Test
    fun `UI-11 the serversChanged stream drops pushes older than what was shown`() {
        // A peer playing the sidecar: it answers initialize, then pushes v5, v3 (older), v5
        // (equal), replies to wave-mcp-servers with v6 and pushes v4 (older than that reply) and v7.
        val toPeer = PipedInputStream(1 shl 16)
        val clientOut = PipedOutputStream(toPeer)
        val fromPeer = PipedInputStream(1 shl 16)
        val peerOut = PipedOutputStream(fromPeer)
        val peer = Thread {
            fun send(o: JsonObject) = Framing.write(peerOut, WIRE_GSON.toJson(o).toByteArray())
            fun push(version: Int, status: String) = send(JsonParser.parseString(
                """{"jsonrpc":"2.0","method":"wave/mcp/serversChanged","params":${snapshot(version, status)}}""",
            ).asJsonObject)
            while (true) {
                val body = Framing.read(toPeer) ?: break
                val message = JsonParser.parseString(String(body)).asJsonObject
                val id: JsonElement? = message.get("id")
                when (message.get("method")?.asString) {
                    "initialize" -> send(reply(id!!, JsonParser.parseString("""{"capabilities":{},"serverInfo":{"name":"fake"}}""")))
                    "wave/mcp/servers" -> {
                        push(5, "connecting")
                        push(3, "disconnected")
                        push(5, "connecting")
                        send(reply(id!!, JsonParser.parseString(snapshot(6, "connected"))))
                        push(4, "connecting")
                        push(7, "error")
                    }
                    "shutdown" -> send(reply(id!!, com.google.gson.JsonNull.INSTANCE))
                    "exit" -> break
                }
            }
            peerOut.close()
        }
        peer.isDaemon = true
        peer.start()

        val client = WaveSidecar.over(fromPeer, clientOut, SidecarOptions(Path.of("wave-mcp"), Path.of("/tmp"), timeoutMs = 10_000))
        val stream = java.util.Collections.synchronizedList(mutableListOf<Long>())
        client.onServersChanged { stream += it.version }
        val reply = client.servers()
        assertEquals(6, reply.version)
        eventually(message = { "stream: $stream" }) { client.snapshots.latest()?.version == 7L }
        client.drain()
        // v3 and v4 are older than what was shown; the second v5 is not.
        assertEquals(listOf(5L, 5L, 7L), synchronized(stream) { stream.toList() })
        assertEquals(McpStatus.ERROR, client.snapshots.latest()!!.server("s")!!.status)
        client.shutdown()
        peer.join(5_000)
    }

    private fun snapshot(version: Int, status: String) =
        """{"version":$version,"sessionId":"default","servers":[{"name":"s","source":"project","transport":"stdio","status":"$status","toolCount":0,"tools":[],"toolsFromCache":false,"readOnly":false}]}"""

    private fun reply(id: JsonElement, result: JsonElement) = JsonObject().apply {
        addProperty("jsonrpc", "2.0")
        add("id", id)
        add("result", result)
    }
}
