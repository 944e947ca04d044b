// The hand-written wire types against `protocol.schema.json`, which the protocol crate generates
// from protocol/src/lib.rs: a drift in either direction fails here.

package dev.wavemcp.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.annotations.SerializedName
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import kotlin.reflect.full.memberProperties

class SchemaConformanceTest {
    private val schema: JsonObject by lazy {
        var dir: Path? = Path.of("").toAbsolutePath()
        var file: Path? = System.getenv("WAVE_JB_SCHEMA")?.let { Path.of(it) }
        while (file == null && dir != null) {
            dir.resolve("jetbrains-plugin").resolve("protocol.schema.json").takeIf { Files.exists(it) }?.let { file = it }
            dir.resolve("protocol.schema.json").takeIf { Files.exists(it) }?.let { file = it }
            dir = dir.parent
        }
        JsonParser.parseString(Files.readString(file ?: error("protocol.schema.json not found"))).asJsonObject
    }

    @Test
    fun `every schema type has a Kotlin twin with the same fields, required ones non-null`() {
        val defs = schema.getAsJsonObject("\$defs")
        assertTrue(defs.size() >= 20)
        for ((name, def) in defs.entrySet()) {
            val kclass = Class.forName("dev.wavemcp.client.$name").kotlin
            val d = def.asJsonObject
            val enumValues = d.getAsJsonArray("enum")?.map { it.asString }
                // schemars writes a oneOf of `const`s, or of an `enum` plus `const`s when only some
                // variants have a doc comment (McpStatus).
                ?: d.getAsJsonArray("oneOf")?.flatMap { alt ->
                    val o = alt.asJsonObject
                    o.getAsJsonArray("enum")?.map { it.asString } ?: listOf(o.get("const").asString)
                }
            if (enumValues != null) {
                val wire = kclass.java.enumConstants.map { c ->
                    kclass.java.getField((c as Enum<*>).name).getAnnotation(SerializedName::class.java)!!.value
                }
                assertEquals(enumValues, wire, "enum $name")
                continue
            }
            // `{}` (HostNoParams) and `null` (HostDone) have no properties.
            val properties = d.getAsJsonObject("properties")?.keySet() ?: emptySet()
            val required = d.getAsJsonArray("required")?.map { it.asString }?.toSet() ?: emptySet()
            val members = kclass.memberProperties.associateBy { it.name }
            assertEquals(properties, members.keys, "fields of $name")
            for (p in properties) {
                val nullable = members.getValue(p).returnType.isMarkedNullable
                if (p in required) {
                    // Enums are nullable here only so that an unknown wire value is visible as null.
                    val enumType = (members.getValue(p).returnType.classifier as? kotlin.reflect.KClass<*>)?.java?.isEnum == true
                    assertTrue(!nullable || enumType, "$name.$p is required, so not nullable")
                } else {
                    val hasDefault = d.getAsJsonObject("properties")!!.getAsJsonObject(p).has("default")
                    assertTrue(nullable || hasDefault, "$name.$p is optional, so nullable (or defaulted as the schema says)")
                }
            }
        }
    }

    @Test
    fun `every method of the schema is named in Methods`() {
        val declared = Methods::class.java.declaredFields.filter { it.type == String::class.java }.map { it.get(null) as String }.toSet()
        val methods = schema.getAsJsonArray("x-wave-methods").map { it.asJsonObject.get("method").asString }
        assertTrue(methods.size >= 11)
        for (m in methods) assertTrue(m in declared, "Methods lacks $m")
        // The forwarded sets are the schema's: declared once, in protocol/.
        val forwarded = schema.getAsJsonArray("x-wave-methods").map { it.asJsonObject }.filter { it.get("forwarded").asBoolean }
        assertEquals(
            forwarded.filter { it.get("kind").asString == "request" }.map { it.get("method").asString }.toSet(),
            Methods.FORWARDED_REQUESTS,
        )
        assertEquals(
            forwarded.filter { it.get("kind").asString == "notification" }.map { it.get("method").asString }.toSet(),
            Methods.FORWARDED_NOTIFICATIONS,
        )
        val hostMessages = schema.getAsJsonArray("x-wave-host-messages").map { it.asJsonObject.get("method").asString }
        for (m in hostMessages) assertTrue(m in declared, "Methods lacks $m")
    }
}
