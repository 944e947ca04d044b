// LSP framing and the JSON-RPC connection, against a scripted peer.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.ByteArrayInputStream
import java.io.ByteArrayOutputStream
import java.io.EOFException
import java.io.PipedInputStream
import java.io.PipedOutputStream
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit

class JsonRpcTest {
    @Test
    fun `Content-Length counts bytes - multi-byte UTF-8 bodies, header case and extra headers`() {
        val body = """{"text":"帮我编辑 MCP 服务器a"}""".toByteArray(Charsets.UTF_8)
        val out = ByteArrayOutputStream()
        Framing.write(out, body)
        Framing.write(out, "{}".toByteArray())
        assertTrue(out.toString(Charsets.UTF_8).startsWith("Content-Length: ${body.size}\r\n\r\n"))
        val input = ByteArrayInputStream(out.toByteArray())
        assertArrayEquals(body, Framing.read(input))
        assertArrayEquals("{}".toByteArray(), Framing.read(input))
        assertNull(Framing.read(input), "clean end of input")

        val odd = "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[]"
        assertArrayEquals("[]".toByteArray(), Framing.read(ByteArrayInputStream(odd.toByteArray())))
        assertThrows(EOFException::class.java) { Framing.read(ByteArrayInputStream("Content-Length: 10\r\n\r\n{}".toByteArray())) }
        assertThrows(java.io.IOException::class.java) { Framing.read(ByteArrayInputStream("X: 1\r\n\r\n{}".toByteArray())) }
    }

    @Test
    fun `replies match their ids in any order, sidecar requests are refused, pending calls fail at the end`() {
        val toPeer = PipedInputStream(1 shl 16)
        val clientOut = PipedOutputStream(toPeer)
        val fromPeer = PipedInputStream(1 shl 16)
        val peerOut = PipedOutputStream(fromPeer)
        val received = java.util.Collections.synchronizedList(mutableListOf<JsonObject>())
        val peer = Thread {
            fun send(text: String) = Framing.write(peerOut, text.toByteArray())
            val a = JsonParser.parseString(String(Framing.read(toPeer)!!)).asJsonObject
            val b = JsonParser.parseString(String(Framing.read(toPeer)!!)).asJsonObject
            received += a
            received += b
            // A request from the sidecar, a notification, then the replies in reverse order.
            send("""{"jsonrpc":"2.0","id":"s1","method":"client/registerCapability","params":{}}""")
            send("""{"jsonrpc":"2.0","method":"wave/session/turnEnded","params":{"sessionId":"default","turn":1}}""")
            send("""{"jsonrpc":"2.0","id":${b["id"]},"error":{"code":-32803,"message":"no","data":{"kind":"readOnly","path":"/x"}}}""")
            send("""{"jsonrpc":"2.0","id":${a["id"]},"result":{"ok":true}}""")
            received += JsonParser.parseString(String(Framing.read(toPeer)!!)).asJsonObject
            Framing.read(toPeer) // the third request: never answered
            peerOut.close()
        }
        peer.isDaemon = true
        peer.start()

        val connection = JsonRpcConnection(fromPeer, clientOut)
        val notifications = java.util.Collections.synchronizedList(mutableListOf<String>())
        connection.onNotification { method, _ -> notifications += method }
        connection.start()
        val first = connection.request("a", mapOf("x" to 1))
        val second = connection.request("b")
        assertEquals(true, first.get(5, TimeUnit.SECONDS).asJsonObject["ok"].asBoolean)
        val error = assertThrows(ExecutionException::class.java) { second.get(5, TimeUnit.SECONDS) }.cause as RpcException
        assertEquals(REQUEST_FAILED, error.code)
        assertEquals(ErrorKind.READ_ONLY, error.kind)
        assertEquals("/x", error.errorData!!.path)
        assertEquals(1, received[0]["params"].asJsonObject["x"].asInt)
        assertTrue(!received[1].has("params"), "absent params are left out")

        val third = connection.request("c")
        val ended = assertThrows(ExecutionException::class.java) { third.get(5, TimeUnit.SECONDS) }.cause as RpcException
        assertEquals(RpcException.LOCAL, ended.code)
        assertTrue(ended.message.contains("no reply to c"), ended.message)
        // The sidecar's own request got MethodNotFound with its id.
        val refusal = received[2]
        assertEquals("s1", refusal["id"].asString)
        assertEquals(RpcException.METHOD_NOT_FOUND, refusal["error"].asJsonObject["code"].asInt)
        connection.drain()
        assertEquals(listOf(Methods.SESSION_TURN_ENDED), notifications.toList())
        peer.join(5_000)
    }

    @Test
    fun `the log of sent requests is bounded - a long-lived client does not grow it`() {
        val out = ByteArrayOutputStream()
        // No reader is started: nothing answers, every request stays pending on the peer's side.
        val connection = JsonRpcConnection(ByteArrayInputStream(ByteArray(0)), out)
        repeat(JsonRpcConnection.SENT_LOG_LIMIT + 50) { i -> connection.request(if (i == 0) "first" else "wave/mcp/servers") }
        connection.request("last")
        val log = connection.sentRequests
        assertEquals(JsonRpcConnection.SENT_LOG_LIMIT, log.size)
        assertEquals("last", log.last())
        assertTrue("first" !in log, "the oldest entries go first")
        connection.close()
    }
}
