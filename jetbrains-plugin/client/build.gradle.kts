// The plugin's client logic: plain Kotlin + Gson, no IntelliJ classes. `gradle :client:test` runs
// the same JUnit 5 tests as scripts/test-jetbrains.sh (they need target/debug/wave-mcp and
// target/debug/wave-mcp-test-server: `cargo build -p wave-mcp -p wave-mcp-test-server --bins`).
plugins {
    id("org.jetbrains.kotlin.jvm") version "2.1.20"
}

repositories {
    mavenCentral()
}

dependencies {
    implementation("com.google.code.gson:gson:2.10.1")
    compileOnly("org.jetbrains.kotlin:kotlin-stdlib")
    testImplementation("org.jetbrains.kotlin:kotlin-stdlib")
    testImplementation("org.jetbrains.kotlin:kotlin-reflect")
    testImplementation("org.junit.jupiter:junit-jupiter:5.11.4")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
}

kotlin {
    jvmToolchain(17)
}

tasks.test {
    useJUnitPlatform()
    workingDir = rootProject.projectDir.parentFile
    environment("WAVE_JB_SCHEMA", rootProject.file("protocol.schema.json").absolutePath)
}
