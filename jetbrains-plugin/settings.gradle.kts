// The JetBrains plugin: `client` (plain Kotlin, no IntelliJ dependency; built and tested on any
// machine, and by scripts/test-jetbrains.sh without Gradle) and `intellij` (the plugin itself,
// which needs the IntelliJ Platform SDK from JetBrains' repositories).
rootProject.name = "wave-mcp-jetbrains"

pluginManagement {
    repositories {
        gradlePluginPortal()
        mavenCentral()
    }
}

include("client", "intellij")
