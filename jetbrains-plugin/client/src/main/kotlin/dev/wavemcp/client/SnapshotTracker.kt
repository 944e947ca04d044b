// UI-11: per session, the highest snapshot version shown; anything strictly older is dropped.

package dev.wavemcp.client

import java.util.concurrent.CopyOnWriteArrayList

class SnapshotTracker {
    private val shown = HashMap<String, ServersSnapshot>()
    private val listeners = CopyOnWriteArrayList<(ServersSnapshot) -> Unit>()

    /**
     * Offers a snapshot (a reply or a `serversChanged` push). Returns true and tells the listeners
     * unless it is older than the one shown for its session: only a snapshot whose version is
     * lower than the one shown is dropped (UI-11, the same rule as the webview's `isStale`).
     */
    fun offer(snapshot: ServersSnapshot): Boolean {
        synchronized(shown) {
            val current = shown[snapshot.sessionId]
            if (current != null && snapshot.version < current.version) return false
            shown[snapshot.sessionId] = snapshot
        }
        listeners.forEach { runCatching { it(snapshot) } }
        return true
    }

    /** The snapshot shown for a session, if any. */
    fun latest(sessionId: String = DEFAULT_SESSION_ID): ServersSnapshot? = synchronized(shown) { shown[sessionId] }

    /** Accepted snapshots only, in acceptance order. */
    fun onAccepted(listener: (ServersSnapshot) -> Unit): AutoCloseable {
        listeners += listener
        return AutoCloseable { listeners -= listener }
    }

    /** A new sidecar process starts its version counter again. */
    fun reset() = synchronized(shown) { shown.clear() }
}
