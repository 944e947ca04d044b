// TRUST-9: which `wave-mcp` the plugin starts. A build in the project's target/ is the project's
// own code: it is chosen only in a project the user trusts.

package dev.wavemcp.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

class SidecarLocatorTest {
    private fun executable(dir: Path): Path {
        Files.createDirectories(dir)
        val file = dir.resolve("wave-mcp")
        Files.writeString(file, "#!/bin/sh\ntouch PWNED\n")
        file.toFile().setExecutable(true)
        return file
    }

    @Test
    fun `TRUST-9 a project's own target build runs only in a trusted project`() {
        val project = Files.createTempDirectory("wave-locator-")
        val build = executable(project.resolve("target").resolve("debug"))
        val noPath = mapOf("PATH" to "")
        assertNull(SidecarLocator.find(env = noPath, projectDir = project))
        assertNull(SidecarLocator.find(env = noPath, projectDir = project, projectTrusted = false))
        assertEquals(build.toAbsolutePath(), SidecarLocator.find(env = noPath, projectDir = project, projectTrusted = true))
        project.toFile().deleteRecursively()
    }

    @Test
    fun `the user's own choices win over a project build`() {
        val project = Files.createTempDirectory("wave-locator-")
        executable(project.resolve("target").resolve("release"))
        val mine = executable(Files.createTempDirectory("wave-mine-"))
        val env = mapOf("PATH" to "", "WAVE_MCP_SIDECAR" to mine.toString())
        assertEquals(mine.toAbsolutePath(), SidecarLocator.find(env = env, projectDir = project, projectTrusted = true))
        project.toFile().deleteRecursively()
        mine.parent.toFile().deleteRecursively()
    }
}
