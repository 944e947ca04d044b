// Which `wave-mcp` binary the plugin starts.

package dev.wavemcp.client

import java.nio.file.Files
import java.nio.file.Path

object SidecarLocator {
    private val exe = if (System.getProperty("os.name").lowercase().contains("win")) "wave-mcp.exe" else "wave-mcp"

    /**
     * The first executable of: the path the user set, `$WAVE_MCP_SIDECAR`, the binary bundled in
     * the plugin (`<plugin>/bin/wave-mcp`), a workspace build (`target/release`, `target/debug`
     * of the project, only when the user trusts the project: in an untrusted one that binary is
     * the repository's own code, TRUST-9), `wave-mcp` on `PATH`. Null when there is none.
     */
    fun find(
        setting: String? = null,
        env: Map<String, String> = System.getenv(),
        pluginDir: Path? = null,
        projectDir: Path? = null,
        projectTrusted: Boolean = false,
    ): Path? {
        val candidates = mutableListOf<Path>()
        setting?.trim()?.takeIf { it.isNotEmpty() }?.let { candidates.add(Path.of(it)) }
        env["WAVE_MCP_SIDECAR"]?.trim()?.takeIf { it.isNotEmpty() }?.let { candidates.add(Path.of(it)) }
        pluginDir?.let { candidates.add(it.resolve("bin").resolve(exe)) }
        projectDir?.takeIf { projectTrusted }?.let {
            candidates.add(it.resolve("target").resolve("release").resolve(exe))
            candidates.add(it.resolve("target").resolve("debug").resolve(exe))
        }
        env["PATH"]?.split(java.io.File.pathSeparatorChar)?.filter { it.isNotEmpty() }?.forEach { candidates.add(Path.of(it).resolve(exe)) }
        return candidates.firstOrNull { Files.isRegularFile(it) && Files.isExecutable(it) }?.toAbsolutePath()
    }
}
