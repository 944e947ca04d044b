// The model endpoint's API key on its way from the IDE's secret store to the sidecar (USE-5).

package dev.wavemcp.client

/**
 * A secret that prints as hidden: [SidecarOptions] is a data class, and its `toString` (a log
 * line, an exception message) must never carry the key.
 */
class ApiKey(val value: String) {
    override fun toString(): String = "ApiKey(hidden)"

    override fun equals(other: Any?): Boolean = other is ApiKey && other.value == value

    override fun hashCode(): Int = value.hashCode()

    companion object {
        /** The sidecar reads the key from this environment variable (as with VS Code's SecretStorage). */
        const val ENV = "WAVE_API_KEY"

        /** PasswordSafe's service name for the key (the IntelliJ layer's `CredentialAttributes`). */
        const val CREDENTIAL_SERVICE = "Wave MCP — model API key"

        /** A blank entry is no key. */
        fun of(value: String?): ApiKey? = value?.trim()?.takeIf { it.isNotEmpty() }?.let(::ApiKey)
    }
}
