// USE-5: the model's API key goes from the IDE's secret store to the sidecar through its
// environment only, and reaches the model endpoint as a bearer token.

package dev.wavemcp.client

import java.nio.file.Files
import java.nio.file.Path
import java.util.UUID
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class ApiKeyTest {
    @Test
    fun `USE-5 the key reaches the model as a bearer token, and never the command line, the options' text or the sidecar's log`() = Sandbox().use { sb ->
        val secret = "sk-use5-${UUID.randomUUID()}"
        val logged = java.util.Collections.synchronizedList(mutableListOf<String>())
        FakeModel.replying().use { model ->
            val sidecar = sb.start(env = model.env + ("WAVE_LOG" to "debug"), apiKey = ApiKey(secret), stderr = { logged += it })
            sidecar.send("default", "hello")
            eventually(limitMs = 60_000, message = { "model requests: ${model.seen()}" }) { model.seen().isNotEmpty() }
            assertEquals("Bearer $secret", model.authorizationsSeen().first())

            val proc = Path.of("/proc", sidecar.pid.toString())
            val environ = Files.readAllBytes(proc.resolve("environ")).toString(Charsets.UTF_8).split('\u0000')
            assertTrue("${ApiKey.ENV}=$secret" in environ, "the key is in the sidecar's environment")
            assertFalse(secret in Files.readAllBytes(proc.resolve("cmdline")).toString(Charsets.UTF_8), "the key is on the command line")
            val options = SidecarOptions(executable = Binaries.sidecar, workdir = sb.workdir, apiKey = ApiKey(secret))
            assertFalse(secret in options.toString(), "the options print the key: $options")
            assertTrue(logged.isNotEmpty(), "the debug log was captured")
            assertFalse(synchronized(logged) { logged.any { secret in it } }, "the sidecar logged the key")
        }
    }

    @Test
    fun `USE-5 without a key nothing is sent as authorization, and a blank stored key is no key`() = Sandbox().use { sb ->
        assertEquals(null, ApiKey.of("  "))
        assertEquals(ApiKey("k"), ApiKey.of(" k "))
        FakeModel.replying().use { model ->
            val sidecar = sb.start(env = model.env)
            sidecar.send("default", "hello")
            eventually(limitMs = 60_000, message = { "model requests: ${model.seen()}" }) { model.seen().isNotEmpty() }
            assertEquals(null, model.authorizationsSeen().first())
        }
    }
}
