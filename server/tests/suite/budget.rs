//! Per-tool switches through the real sidecar and the real CLI (BUD-1, BUD-2):
//! `wave/mcp/setToolEnabled` edits one array of one entry, byte for byte, keeps the server
//! connected (the reload sees only a switch change), pushes the new `enabled`, and has the errors
//! of delete; `wave-mcp tools NAME` marks switched-off tools.

use serde_json::{Value, json};

use super::lsp_client::Sidecar;
use super::support::*;

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// `(tool, enabled)` of server `name` in a snapshot.
fn switches(snapshot: &Value, name: &str) -> Vec<(String, bool)> {
    snapshot["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {snapshot:#}"))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["enabled"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn owned(pairs: &[(&str, bool)]) -> Vec<(String, bool)> {
    pairs.iter().map(|(n, e)| (n.to_string(), *e)).collect()
}

// BUD-2, DEL-2: switching a tool off adds it to the entry's `disabledTools` and changes no
// other byte of a hand-formatted file; switching it on again gives the file back byte for byte.
// The server stays connected (same process, one start), and the snapshot shows `enabled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_2_set_tool_enabled_edits_one_array_byte_for_byte_and_keeps_the_connection() {
    let sandbox = Sandbox::new();
    let keep = compact(&sandbox.server(&["--name", "keep"]));
    let victim = sandbox.server_with_pids("victim", &["--tools", "echo,add"]);
    let victim_head = format!(
        "\"victim\":   {{\n      \"command\": {},\n      \"args\": {}",
        compact(&victim["command"]),
        compact(&victim["args"])
    );
    let text = format!(
        "{{\n  \"$schema\": \"x\",\n  \"mcpServers\":  {{\n    \"keep\" : {keep},\n    {victim_head}\n    }}\n  }},\n\t\"zz\": [1, {{\"a\": null}}]\n}}\n"
    );
    let path = sandbox.workdir.join(".mcp.json");
    std::fs::write(&path, &text).unwrap();
    sandbox.approve_project();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "victim" }))
        .await;
    let pids = wait_for_pids(&sandbox.pid_file("victim"), 1).await;
    let starts = sandbox.count_events("start");

    let off = sidecar
        .ok(
            "wave/mcp/setToolEnabled",
            json!({ "name": "victim", "source": "project", "tool": "add", "enabled": false }),
        )
        .await;
    assert_eq!(
        switches(&off, "victim"),
        owned(&[("add", false), ("echo", true)])
    );
    let expected = text.replacen(
        &victim_head,
        &format!("{victim_head},\n      \"disabledTools\": [\"add\"]"),
        1,
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    // No reconnect for a switch, also after the file watcher's own reload.
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(
        switches(&listed, "victim"),
        owned(&[("add", false), ("echo", true)])
    );
    assert!(alive(pids[0]));
    assert_eq!(sandbox.count_events("start"), starts);

    let on = sidecar
        .ok(
            "wave/mcp/setToolEnabled",
            json!({ "name": "victim", "source": "project", "tool": "add", "enabled": true }),
        )
        .await;
    assert_eq!(
        switches(&on, "victim"),
        owned(&[("add", true), ("echo", true)])
    );
    assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes());
    assert!(alive(pids[0]));
    assert_eq!(sandbox.count_events("start"), starts);
    sidecar.stop().await;
    assert_all_dead(&pids).await;
}

// BUD-2, DEL-3, DEL-4: the errors of delete: plugin and constructor servers are read-only, a
// missing file or entry is named; nothing changes on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_2_set_tool_enabled_has_the_errors_of_delete() {
    let sandbox = Sandbox::new();
    let plugin_root = sandbox.write_plugin("plug", json!({ "g": sandbox.server(&[]) }));
    sandbox.write_user(json!({ "u": sandbox.server(&[]) }));
    let plugin_bytes = std::fs::read(plugin_root.join(".mcp.json")).unwrap();
    let user_bytes = std::fs::read(sandbox.home.join(".wave/mcp.json")).unwrap();
    let sidecar = Sidecar::start(&sandbox, json!({ "c": sandbox.server(&[]) })).await;
    let switch = |name: &str, source: &str| json!({ "name": name, "source": source, "tool": "echo", "enabled": false });
    for (params, kind) in [
        (switch("g", "plugin"), "readOnly"),
        (switch("c", "constructor"), "readOnly"),
        (switch("nope", "user"), "entryMissing"),
        (switch("u", "project"), "fileMissing"),
    ] {
        let error = sidecar.err("wave/mcp/setToolEnabled", params.clone()).await;
        assert_eq!(error.kind(), kind, "{params}: {error:?}");
    }
    assert_eq!(
        std::fs::read(plugin_root.join(".mcp.json")).unwrap(),
        plugin_bytes
    );
    assert_eq!(
        std::fs::read(sandbox.home.join(".wave/mcp.json")).unwrap(),
        user_bytes
    );
    assert!(!sandbox.workdir.join(".mcp.json").exists());
    sidecar.stop().await;
}

// BUD-1: `wave-mcp tools NAME` lists every tool and marks the switched-off ones (text and
// `--json`); a config with both keys is an error naming the entry.
#[test]
fn bud_1_cli_tools_marks_switched_off_tools() {
    let sandbox = Sandbox::new();
    let mut entry = sandbox.server(&["--tools", "echo,add"]);
    entry["disabledTools"] = json!(["add"]);
    sandbox.write_project(json!({ "s": entry }));
    let out = cli(&sandbox, &["tools", "s"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("\nmcp__s__add  (switched off)\n"), "{shown}");
    assert!(shown.contains("\nmcp__s__echo\n"), "{shown}");
    let out = cli(&sandbox, &["tools", "s", "--json"], &[]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let enabled: Vec<(String, bool)> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().into(),
                t["enabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(enabled, owned(&[("add", false), ("echo", true)]));
    assert_eq!(switches(&json_server_list(&json), "s"), enabled);

    let mut both = sandbox.server(&[]);
    both["disabledTools"] = json!([]);
    both["enabledTools"] = json!([]);
    sandbox.write_project(json!({ "s": both }));
    let out = cli(&sandbox, &["servers"], &[]);
    let shown = text(&out);
    assert!(
        shown.contains("mcpServers.s: sets both `enabledTools` and `disabledTools`"),
        "{shown}"
    );
}

/// The `server` view of `wave-mcp tools --json`, as a one-server snapshot.
fn json_server_list(out: &Value) -> Value {
    json!({ "servers": [out["server"].clone()] })
}

// BUD-3: `WAVE_TOOL_SEARCH` in the sidecar's environment wins over the settings files. The
// project's `.wave/settings.json` says `"off"`: without the variable the first model request
// declares the server's tools in full; with `WAVE_TOOL_SEARCH=on` it declares
// `search_mcp_tools` in their place, however small the catalog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_3_wave_tool_search_in_the_environment_wins_over_the_settings_files() {
    use wave_mcp_testkit::{FakeModel, say};
    let mut declarations = Vec::new();
    for variable in [None, Some("on")] {
        let sandbox = Sandbox::new();
        sandbox.write_project(json!({ "a": sandbox.server(&["--tools", "echo,add"]) }));
        let settings = sandbox.workdir.join(".wave");
        std::fs::create_dir_all(&settings).unwrap();
        std::fs::write(settings.join("settings.json"), r#"{ "toolSearch": "off" }"#).unwrap();
        let model = FakeModel::start(vec![say("ok")]).await;
        sandbox.allow_tool_calls();
        let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |command| {
            command.env_remove("WAVE_TOOL_SEARCH");
            if let Some(value) = variable {
                command.env("WAVE_TOOL_SEARCH", value);
            }
        })
        .await;
        let turn = sidecar.send_text("hello").await;
        sidecar
            .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == turn)
            .await;
        let mut names = wave_mcp_testkit::declared(&model.request(0));
        names.sort();
        declarations.push(names);
        sidecar.stop().await;
    }
    assert_eq!(declarations[0], ["mcp__a__add", "mcp__a__echo"]);
    assert_eq!(declarations[1], ["search_mcp_tools"]);
}
