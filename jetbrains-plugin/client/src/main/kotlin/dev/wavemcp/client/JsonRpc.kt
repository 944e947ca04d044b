// LSP base protocol: `Content-Length` framing and JSON-RPC 2.0 over a pair of byte streams.
// One reader thread reads frames in arrival order; replies complete the caller's future, and
// notifications go to listeners on one dispatcher thread (so listeners see them in order and a
// slow listener never stalls the reader).

package dev.wavemcp.client

import com.google.gson.Gson
import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.io.ByteArrayOutputStream
import java.io.EOFException
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

/** A JSON-RPC error reply (or a local failure with a code of our own, see [RpcException.LOCAL]). */
class RpcException(
    val code: Int,
    override val message: String,
    /** The error's `data`, as sent. */
    val data: JsonElement? = null,
) : RuntimeException(message) {
    /** `data` of a [REQUEST_FAILED] error, typed; null for other errors. */
    val errorData: ErrorData?
        get() = data?.takeIf { it.isJsonObject }?.let { runCatching { WIRE_GSON.fromJson(it, ErrorData::class.java) }.getOrNull() }

    val kind: ErrorKind? get() = errorData?.kind

    companion object {
        /** Our own failures (the sidecar ended, a timeout): not a code the sidecar sends. */
        const val LOCAL = -1
        const val PARSE_ERROR = -32700
        const val METHOD_NOT_FOUND = -32601
        const val INVALID_PARAMS = -32602
        /** LSP RequestCancelled: the answer to a request cancelled with `$/cancelRequest`. */
        const val REQUEST_CANCELLED = -32800
    }
}

/** Gson as the wire wants it: nulls left out (optional fields absent), no HTML escaping. */
val WIRE_GSON: Gson = Gson().newBuilder().disableHtmlEscaping().create()

private const val INTERNAL_ERROR = -32603

/** Reads and writes `Content-Length` frames. */
object Framing {
    /** The frame's body, or null at a clean end of input (no byte of a new frame read). */
    fun read(input: InputStream): ByteArray? {
        var length = -1
        var sawAny = false
        while (true) {
            val line = readHeaderLine(input, sawAny) ?: return null
            sawAny = true
            if (line.isEmpty()) break
            val colon = line.indexOf(':')
            if (colon < 0) throw IOException("malformed header line: $line")
            val name = line.substring(0, colon).trim()
            val value = line.substring(colon + 1).trim()
            if (name.equals("Content-Length", ignoreCase = true)) {
                length = value.toIntOrNull() ?: throw IOException("bad Content-Length: $value")
            }
        }
        if (length < 0) throw IOException("frame without Content-Length")
        val body = input.readNBytes(length)
        if (body.size < length) throw EOFException("end of input inside a frame body")
        return body
    }

    /** One ASCII header line without its CRLF; null at end of input before any byte. */
    private fun readHeaderLine(input: InputStream, inFrame: Boolean): String? {
        val line = ByteArrayOutputStream()
        while (true) {
            val b = input.read()
            if (b < 0) {
                if (line.size() == 0 && !inFrame) return null
                throw EOFException("end of input inside a frame header")
            }
            if (b == '\n'.code) break
            line.write(b)
        }
        val text = line.toString(Charsets.US_ASCII)
        return if (text.endsWith("\r")) text.dropLast(1) else text
    }

    fun write(output: OutputStream, body: ByteArray) {
        output.write("Content-Length: ${body.size}\r\n\r\n".toByteArray(Charsets.US_ASCII))
        output.write(body)
        output.flush()
    }
}

/** One JSON-RPC connection. [start] begins reading; [close] fails whatever is still pending. */
class JsonRpcConnection(
    private val input: InputStream,
    private val output: OutputStream,
    private val name: String = "wave-mcp",
) : AutoCloseable {
    private val nextId = AtomicLong(1)
    private val pending = ConcurrentHashMap<Long, Pending>()
    private val listeners = CopyOnWriteArrayList<(String, JsonElement) -> Unit>()
    private val closeListeners = CopyOnWriteArrayList<(Throwable?) -> Unit>()
    private val replyObservers = CopyOnWriteArrayList<(String, JsonElement) -> Unit>()
    private val writeLock = Any()
    private val closed = AtomicBoolean(false)
    private val dispatcher: ExecutorService = Executors.newSingleThreadExecutor { r ->
        Thread(r, "$name-notifications").apply { isDaemon = true }
    }
    private var reader: Thread? = null

    /** The last [SENT_LOG_LIMIT] requests sent (method names, in order), bounded. */
    private val sent = ArrayDeque<String>()

    /**
     * Requests sent so far, the newest [SENT_LOG_LIMIT] of them (method names, in order): lets
     * tests prove a request was not sent. Bounded, so a long-lived client does not grow it.
     */
    val sentRequests: List<String> get() = synchronized(sent) { sent.toList() }

    companion object {
        /** How many sent method names [sentRequests] keeps. */
        const val SENT_LOG_LIMIT = 256
    }

    private class Pending(val method: String, val future: CompletableFuture<JsonElement>)

    /** A request sent, with its id (for `$/cancelRequest`). */
    class Outgoing(val id: Long, val future: CompletableFuture<JsonElement>)

    /** Answers requests of the sidecar (e.g. `wave/mcp/openUrl`): params in, result (or a throw) out. */
    fun interface RequestHandler {
        fun handle(params: JsonElement): Any?
    }

    private val requestHandlers = ConcurrentHashMap<String, RequestHandler>()
    /** Handlers run here, never on the reader thread: a handler may take its time. */
    private val handlerPool: ExecutorService = Executors.newCachedThreadPool { r ->
        Thread(r, "$name-client-requests").apply { isDaemon = true }
    }

    /** Answers the sidecar's requests of [method] with [handler]; others get MethodNotFound. */
    fun onRequest(method: String, handler: RequestHandler) {
        requestHandlers[method] = handler
    }

    fun start() {
        val thread = Thread({ readLoop() }, "$name-reader")
        thread.isDaemon = true
        reader = thread
        thread.start()
    }

    /**
     * Called on the reader thread, in arrival order, for every notification before it is
     * dispatched and for every successful reply (with its request's method) before the caller
     * sees it. Meant for cheap bookkeeping such as snapshot versions.
     */
    fun observeInOrder(observer: (method: String, payload: JsonElement) -> Unit) {
        replyObservers += observer
    }

    /** Listens to notifications (method, params), on the dispatcher thread, in arrival order. */
    fun onNotification(listener: (String, JsonElement) -> Unit): AutoCloseable {
        listeners += listener
        return AutoCloseable { listeners -= listener }
    }

    /** Called once when the input ends or the connection is closed (with the cause, if any). */
    fun onClose(listener: (Throwable?) -> Unit) {
        closeListeners += listener
    }

    val isClosed: Boolean get() = closed.get()

    fun request(method: String, params: Any? = null): CompletableFuture<JsonElement> = requestWithId(method, params).future

    /** Sends a request and tells its id, so that it can be cancelled with [cancel]. */
    fun requestWithId(method: String, params: Any? = null): Outgoing {
        val future = CompletableFuture<JsonElement>()
        val id = nextId.getAndIncrement()
        if (closed.get()) {
            future.completeExceptionally(RpcException(RpcException.LOCAL, "the sidecar connection is closed"))
            return Outgoing(id, future)
        }
        pending[id] = Pending(method, future)
        val message = JsonObject()
        message.addProperty("jsonrpc", "2.0")
        message.addProperty("id", id)
        message.addProperty("method", method)
        toJson(params)?.let { message.add("params", it) }
        synchronized(sent) {
            sent.addLast(method)
            while (sent.size > SENT_LOG_LIMIT) sent.removeFirst()
        }
        try {
            send(message)
        } catch (e: IOException) {
            pending.remove(id)
            future.completeExceptionally(RpcException(RpcException.LOCAL, "cannot write to the sidecar: ${e.message}"))
        }
        return Outgoing(id, future)
    }

    /**
     * LSP `$/cancelRequest` for the request [id] (still pending): the sidecar stops it and
     * answers it with -32800 (RequestCancelled). Nothing happens for an answered request.
     */
    fun cancel(id: Long) {
        if (!pending.containsKey(id) || closed.get()) return
        val params = JsonObject().apply { addProperty("id", id) }
        runCatching { notify("\$/cancelRequest", params) }
    }

    fun notify(method: String, params: Any? = null) {
        val message = JsonObject()
        message.addProperty("jsonrpc", "2.0")
        message.addProperty("method", method)
        toJson(params)?.let { message.add("params", it) }
        send(message)
    }

    private fun toJson(params: Any?): JsonElement? = when (params) {
        null -> null
        is JsonElement -> if (params.isJsonNull) null else params
        else -> WIRE_GSON.toJsonTree(params)
    }

    private fun send(message: JsonObject) {
        val body = WIRE_GSON.toJson(message).toByteArray(Charsets.UTF_8)
        synchronized(writeLock) { Framing.write(output, body) }
    }

    private fun readLoop() {
        var cause: Throwable? = null
        try {
            while (true) {
                val body = Framing.read(input) ?: break
                val message = try {
                    JsonParser.parseString(String(body, Charsets.UTF_8))
                } catch (e: RuntimeException) {
                    throw IOException("the sidecar sent a frame that is not JSON", e)
                }
                if (message.isJsonObject) handle(message.asJsonObject)
            }
        } catch (e: Throwable) {
            cause = e
        } finally {
            shutdownPending(cause)
        }
    }

    private fun handle(message: JsonObject) {
        val method = message.get("method")?.takeIf { it.isJsonPrimitive }?.asString
        val id = message.get("id")
        if (method == null) {
            // A reply.
            val key = id?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isNumber }?.asLong ?: return
            val waiting = pending.remove(key) ?: return
            val error = message.get("error")
            if (error != null && error.isJsonObject) {
                val e = error.asJsonObject
                waiting.future.completeExceptionally(
                    RpcException(
                        e.get("code")?.takeIf { it.isJsonPrimitive }?.asInt ?: RpcException.LOCAL,
                        e.get("message")?.takeIf { it.isJsonPrimitive }?.asString ?: "error",
                        e.get("data")?.takeUnless { it.isJsonNull },
                    ),
                )
            } else {
                val result = message.get("result") ?: JsonNull.INSTANCE
                replyObservers.forEach { runCatching { it(waiting.method, result) } }
                waiting.future.complete(result)
            }
            return
        }
        val params = message.get("params") ?: JsonNull.INSTANCE
        if (id != null && !id.isJsonNull) {
            // A request from the sidecar: answered by its handler (on the handler pool), or
            // MethodNotFound.
            val handler = requestHandlers[method]
            if (handler == null) {
                runCatching { send(errorReply(id, RpcException.METHOD_NOT_FOUND, "unsupported client method $method")) }
                return
            }
            handlerPool.execute {
                val reply = try {
                    JsonObject().apply {
                        addProperty("jsonrpc", "2.0")
                        add("id", id)
                        add("result", toJson(handler.handle(params)) ?: JsonNull.INSTANCE)
                    }
                } catch (e: Exception) {
                    errorReply(id, INTERNAL_ERROR, e.message ?: e.toString())
                }
                runCatching { send(reply) }
            }
            return
        }
        replyObservers.forEach { runCatching { it(method, params) } }
        dispatcher.execute {
            for (listener in listeners) runCatching { listener(method, params) }
        }
    }

    private fun errorReply(id: JsonElement, code: Int, message: String): JsonObject {
        val reply = JsonObject()
        reply.addProperty("jsonrpc", "2.0")
        reply.add("id", id)
        val error = JsonObject()
        error.addProperty("code", code)
        error.addProperty("message", message)
        reply.add("error", error)
        return reply
    }

    private fun shutdownPending(cause: Throwable?) {
        if (!closed.compareAndSet(false, true)) return
        val reason = cause?.message?.let { "the sidecar connection ended: $it" } ?: "the sidecar exited"
        for ((id, waiting) in pending) {
            pending.remove(id)
            waiting.future.completeExceptionally(RpcException(RpcException.LOCAL, "$reason (no reply to ${waiting.method})"))
        }
        dispatcher.execute { closeListeners.forEach { runCatching { it(cause) } } }
        dispatcher.shutdown()
        handlerPool.shutdown()
    }

    /** Stops reading, fails pending requests; the streams are the owner's to close. */
    override fun close() {
        shutdownPending(null)
        reader?.interrupt()
    }

    /** Waits until queued notifications were delivered (tests, orderly shutdown). */
    fun drain(timeoutMs: Long = 5_000) {
        if (dispatcher.isShutdown) {
            dispatcher.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS)
            return
        }
        runCatching { dispatcher.submit {}.get(timeoutMs, TimeUnit.MILLISECONDS) }
    }
}
