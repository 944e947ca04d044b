// The IntelliJ plugin. Needs JetBrains' repositories (the IntelliJ Platform SDK), so it is NOT
// built on the project's CI machines; see ../README.md. Build it with Gradle 8.x and JDK 21:
//   (cd vscode-extension && npm ci && npm run build)     # the shared webview bundle
//   cargo build --release --bin wave-mcp                 # the sidecar bundled into the plugin
//   cd jetbrains-plugin && gradle :intellij:buildPlugin  # -> intellij/build/distributions/*.zip
plugins {
    id("org.jetbrains.kotlin.jvm") version "2.1.20"
    id("org.jetbrains.intellij.platform") version "2.5.0"
}

repositories {
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    implementation(project(":client"))
    intellijPlatform {
        intellijIdeaCommunity("2024.3.5")
    }
}

kotlin {
    jvmToolchain(21)
}

intellijPlatform {
    pluginConfiguration {
        id = "dev.wavemcp"
        name = "Wave MCP"
        version = project.version.toString()
        ideaVersion {
            sinceBuild = "243"
        }
    }
    buildSearchableOptions = false
}

val repo = rootProject.projectDir.parentFile
val webview = repo.resolve("vscode-extension/dist/webview")
val sidecar = repo.resolve("target/release/wave-mcp")

// The same webview bundle as the VS Code extension's, as plugin resources (/webview/...).
tasks.processResources {
    from(webview) {
        include("webview.js", "webview.css")
        into("webview")
    }
    doFirst {
        check(webview.resolve("webview.js").isFile) {
            "missing $webview/webview.js: run `npm ci && npm run build` in vscode-extension first"
        }
    }
}

// The sidecar binary goes to <plugin>/bin/wave-mcp when it was built (else the plugin looks for
// it in the project's target/ directory, on PATH, or where the WAVE_MCP_SIDECAR variable says).
tasks.prepareSandbox {
    if (sidecar.isFile) {
        from(sidecar) {
            into(pluginName.map { "$it/bin" })
            filePermissions { unix("rwxr-xr-x") }
        }
    }
}
