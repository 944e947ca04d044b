//! The sidecar (`wave-mcp lsp`) over the real binary's stdio: the `wave/mcp/*` methods, versioned
//! snapshots, config deletes and watching, the session registry, teardown and bad input
//! (issue 5; UI-*, DEL-*, EDIT-2, LIFE-8, LIFE-9, UI-12).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use wave_mcp_testkit::{FakeModel, after, call, say};

use super::lsp_client::*;
use super::support::*;

const CHANGED: &str = "wave/mcp/serversChanged";

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

// LAZY-1, CFG-8, UI-2, DEL-4: `initialize` → every configured server is listed `disconnected`
// with its source, plugin and constructor rows are read-only, and nothing is spawned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_1_initialize_lists_every_server_disconnected_and_spawns_nothing() {
    let sandbox = Sandbox::new();
    sandbox.write_user(json!({ "u": sandbox.server(&[]) }));
    sandbox.write_project(json!({ "p": sandbox.server(&[]) }));
    let plugin_root = sandbox.write_plugin("plug", json!({ "g": sandbox.server(&[]) }));
    let sidecar = Sidecar::start(&sandbox, json!({ "c": sandbox.server(&[]) })).await;

    let snapshot = sidecar.ok("wave/mcp/servers", Value::Null).await;
    assert_eq!(snapshot["sessionId"], "default");
    assert!(version(&snapshot) >= 1);
    let mut names: Vec<&str> = snapshot["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["c", "g", "p", "u"]);
    for (name, source, read_only) in [
        ("u", "user", false),
        ("p", "project", false),
        ("g", "plugin", true),
        ("c", "constructor", true),
    ] {
        let row = row(&snapshot, name);
        assert_eq!(row["status"], "disconnected", "{row:#}");
        assert_eq!(row["source"], source);
        assert_eq!(row["readOnly"], read_only);
        assert_eq!(row["toolCount"], 0);
    }
    let home = canonical(&sandbox.home);
    assert_eq!(
        row(&snapshot, "u")["configPath"],
        json!(home.join(".wave/mcp.json"))
    );
    assert_eq!(
        row(&snapshot, "p")["configPath"],
        json!(canonical(&sandbox.workdir).join(".mcp.json"))
    );
    assert_eq!(
        row(&snapshot, "g")["configPath"],
        json!(canonical(&plugin_root).join(".mcp.json"))
    );
    assert!(row(&snapshot, "c").get("configPath").is_none());
    // The sync point: a dial is always published (`connecting`) before anything is spawned,
    // and a `wave/mcp/servers` reply is built only once every change published before it was
    // pushed. So a second reply with every row `disconnected` and no `serversChanged` before
    // it proves that no dial, hence no spawn, was started by `initialize` (no sleep needed).
    let again = sidecar.ok("wave/mcp/servers", Value::Null).await;
    for server in again["servers"].as_array().unwrap() {
        assert_eq!(server["status"], "disconnected", "{server:#}");
    }
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    assert_eq!(sandbox.count_events("start"), 0);
    assert!(sidecar.notifications(CHANGED).is_empty());
    sidecar.stop().await;
}

// UI-5, UI-11, LAZY-5: connect → `serversChanged` connecting, then connected, with increasing
// versions; the reply's version is ≥ every notification that arrived before it, and no snapshot
// with a higher version shows an older state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_5_ui_11_connect_pushes_connecting_then_connected_with_increasing_versions() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "slow": sandbox.server(&["--slow-initialize-ms", "400"]),
        "other": sandbox.server(&[]),
    }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;

    let reply = sidecar
        .ok("wave/mcp/connect", json!({ "name": "slow" }))
        .await;
    assert_eq!(status_of(&reply, "slow").as_deref(), Some("connected"));
    assert_eq!(row(&reply, "slow")["toolCount"], 9);
    assert_eq!(status_of(&reply, "other").as_deref(), Some("disconnected"));
    sidecar
        .wait_notification(0, CHANGED, |s| {
            status_of(s, "slow").as_deref() == Some("connected")
        })
        .await;

    let messages = sidecar.messages();
    let reply_at = messages
        .iter()
        .position(|m| {
            m.get("method").is_none() && m["result"]["servers"].is_array() && m["result"] == reply
        })
        .expect("the connect reply was recorded");
    let notifications: Vec<(usize, &Value)> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["method"] == CHANGED)
        .map(|(i, m)| (i, &m["params"]))
        .collect();
    // Notifications leave in version order.
    let versions: Vec<u64> = notifications.iter().map(|(_, n)| version(n)).collect();
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]),
        "notification versions not increasing: {versions:?}"
    );
    // connecting, then connected.
    let statuses: Vec<String> = notifications
        .iter()
        .filter_map(|(_, n)| status_of(n, "slow"))
        .collect();
    let connecting = statuses.iter().position(|s| s == "connecting");
    let connected = statuses.iter().position(|s| s == "connected");
    assert!(
        matches!((connecting, connected), (Some(a), Some(b)) if a < b),
        "statuses pushed: {statuses:?}"
    );
    // The reply is at least as new as everything pushed before it.
    for (at, notification) in &notifications {
        if *at < reply_at {
            assert!(
                version(&reply) >= version(notification),
                "reply v{} arrived after notification v{}",
                version(&reply),
                version(notification)
            );
        }
    }
    // Across replies and notifications, a higher version never shows an older state.
    let rank = |s: &str| match s {
        "disconnected" => 0,
        "connecting" => 1,
        _ => 2,
    };
    let mut all: Vec<&Value> = notifications.iter().map(|(_, n)| *n).collect();
    all.push(&listed);
    all.push(&reply);
    all.sort_by_key(|s| version(s));
    let ranks: Vec<i32> = all
        .iter()
        .map(|s| rank(&status_of(s, "slow").unwrap()))
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    let all_versions: Vec<u64> = all.iter().map(|s| version(s)).collect();
    assert!(
        all_versions.windows(2).all(|w| w[0] < w[1]),
        "versions are not unique: {all_versions:?}"
    );
    sidecar.stop().await;
}

// UI-4, LAZY-8, LIFE-6: disconnect of a server that ignores SIGTERM and has descendants answers
// with a snapshot, and the whole process tree is gone. A missing entry still gets a snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_4_lazy_8_disconnect_of_a_sigterm_ignoring_server_answers_and_reaps_its_tree() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "stubborn": sandbox.server_with_pids(
            "stubborn",
            &["--ignore-sigterm", "--spawn-descendants", "3"],
        ),
    }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "stubborn" }))
        .await;
    assert_eq!(
        status_of(&connected, "stubborn").as_deref(),
        Some("connected")
    );
    let pids = wait_for_pids(&sandbox.pid_file("stubborn"), 4).await;
    assert!(pids.iter().all(|&p| alive(p)));

    let reply = sidecar
        .ok("wave/mcp/disconnect", json!({ "name": "stubborn" }))
        .await;
    assert_eq!(
        status_of(&reply, "stubborn").as_deref(),
        Some("disconnected")
    );
    assert!(version(&reply) > version(&connected));
    assert_all_dead(&pids).await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());

    // UI-4: an entry that is not there, or already disconnected, still gets the latest list.
    let missing = sidecar
        .ok("wave/mcp/disconnect", json!({ "name": "no-such-server" }))
        .await;
    assert!(version(&missing) > version(&reply));
    assert_eq!(
        status_of(&missing, "stubborn").as_deref(),
        Some("disconnected")
    );
    let again = sidecar
        .ok("wave/mcp/disconnect", json!({ "name": "stubborn" }))
        .await;
    assert!(version(&again) > version(&missing));
    sidecar.stop().await;
}

// UI-12, UI-3, LIFE-2: a failed connect is data (the row's `error` with its reason), not a
// JSON-RPC error and never a chat message; a retry is another connect. The sidecar has a model,
// so a chat message is possible: none comes, neither for a failed `wave/mcp/connect` nor for a
// turn whose own dial of a server fails (the turn's messages never carry that failure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_12_failed_connect_answers_with_the_reason_in_the_row() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server(&[]),
        "broken": sandbox.server(&["--fail-initialize"]),
        "missing": { "command": sandbox.path("no-such-binary") },
        "late": sandbox.server(&["--fail-initialize", "--stderr-banner", "late-server-banner"]),
    }));
    sandbox.allow_tool_calls();
    let model = echo_model().await;
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    for name in ["broken", "missing"] {
        let reply = sidecar
            .ok("wave/mcp/connect", json!({ "name": name }))
            .await;
        let row = row(&reply, name);
        assert_eq!(row["status"], "error", "{row:#}");
        let reason = row["error"].as_str().unwrap_or_default();
        assert!(!reason.is_empty(), "{row:#}");
    }
    let pushed = sidecar
        .wait_notification(0, CHANGED, |s| {
            status_of(s, "missing").as_deref() == Some("error")
        })
        .await;
    assert!(row(&pushed, "missing")["error"].is_string());
    // A name that is not configured is the request's error.
    let unknown = sidecar
        .err("wave/mcp/connect", json!({ "name": "nope" }))
        .await;
    assert_eq!(unknown.code, -32803);
    assert_eq!(unknown.kind(), "unknownServer");
    assert!(unknown.message.contains("nope"), "{unknown:?}");
    // Nothing but snapshots came from the sidecar: no chat message.
    assert!(sidecar.notifications("wave/session/message").is_empty());

    // A turn dials `a` and `late`; `late` fails. Its failure is the row's, not the chat's.
    sidecar
        .ok(
            "wave/session/send",
            json!({ "sessionId": "default", "text": "hello" }),
        )
        .await;
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 1)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(status_of(&listed, "late").as_deref(), Some("error"));
    assert_eq!(status_of(&listed, "a").as_deref(), Some("connected"));
    let late_reason = row(&listed, "late")["error"].as_str().unwrap().to_string();
    assert!(late_reason.contains("late-server-banner"), "{late_reason}");
    let chat = sidecar.notifications("wave/session/message");
    assert!(!chat.is_empty(), "the turn sent no message at all");
    for message in &chat {
        let text = message.to_string();
        for leak in [
            late_reason.as_str(),
            "late-server-banner",
            "initialize refused by test server",
        ] {
            assert!(
                !text.contains(leak),
                "a connect failure reached the chat ({leak:?}): {message:#}"
            );
        }
    }
    // The failed dials' processes were killed (SIGKILL lands a moment later).
    let only_a = eventually(Duration::from_secs(5), || {
        sandbox.live_processes().len() == 1
    })
    .await;
    assert!(only_a, "{:?}", sandbox.live_processes());
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

/// A hand-formatted project file: odd indentation, a key order of its own, unknown fields,
/// entries on one line and on several, a trailing newline. Returns (text, the victim's lines).
fn hand_formatted(sandbox: &Sandbox) -> (String, String) {
    let keep1 = compact(&sandbox.server(&["--name", "keep1"]));
    let keep2 = compact(&sandbox.server(&["--name", "keep2"]));
    let victim = sandbox.server_with_pids("victim", &["--spawn-descendants", "2"]);
    let victim_block = format!(
        "        \"victim\":   {{\n              \"command\": {},\n              \"args\": {},\n              \"x-note\": \"an unknown field\"\n        }},\n",
        compact(&victim["command"]),
        compact(&victim["args"]),
    );
    let text = format!(
        "{{\n   \"$schema\": \"https://example.invalid/mcp.schema.json\",\n   \"mcpServers\":    {{\n       \"keep1\" : {keep1},\n{victim_block}     \"keep2\":{keep2}\n   }},\n\t\"zz-unknown\": {{ \"nested\": [1, 2, {{\"a\": null}}] }}\n}}\n"
    );
    (text, victim_block)
}

// DEL-2, LAZY-8: delete removes exactly that entry — every other byte of a hand-formatted file
// stays — the server leaves the list and its process tree ends. Same for the user file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn del_2_delete_keeps_the_rest_of_a_hand_formatted_file_byte_identical() {
    let sandbox = Sandbox::new();
    let (project_text, victim_block) = hand_formatted(&sandbox);
    let project_path = sandbox.workdir.join(".mcp.json");
    std::fs::write(&project_path, &project_text).unwrap();
    sandbox.approve_project();
    let u1 = compact(&sandbox.server(&["--name", "u1"]));
    let u2 = compact(&sandbox.server(&["--name", "u2"]));
    let (user_head, user_last, user_tail) = (
        format!("{{\"mcpServers\": {{\n  \"u1\": {u1}"),
        format!(",\n  \"u2\": {u2}"),
        "\n}, \"other\": true}".to_string(),
    );
    let user_path = sandbox.home.join(".wave/mcp.json");
    std::fs::write(&user_path, format!("{user_head}{user_last}{user_tail}")).unwrap();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;

    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "victim" }))
        .await;
    assert_eq!(
        status_of(&connected, "victim").as_deref(),
        Some("connected")
    );
    let pids = wait_for_pids(&sandbox.pid_file("victim"), 3).await;

    let reply = sidecar
        .ok(
            "wave/mcp/delete",
            json!({ "name": "victim", "source": "project" }),
        )
        .await;
    assert!(!lists(&reply, "victim"), "{reply:#}");
    assert!(lists(&reply, "keep1") && lists(&reply, "keep2") && lists(&reply, "u1"));
    let expected = project_text.replacen(&victim_block, "", 1);
    assert_ne!(expected, project_text);
    assert_eq!(std::fs::read_to_string(&project_path).unwrap(), expected);
    assert_all_dead(&pids).await;

    let reply = sidecar
        .ok("wave/mcp/delete", json!({ "name": "u2", "source": "user" }))
        .await;
    assert!(!lists(&reply, "u2") && lists(&reply, "u1"));
    assert_eq!(
        std::fs::read_to_string(&user_path).unwrap(),
        format!("{user_head}{user_tail}")
    );
    // DEL-2: it appears under no tab afterwards, in a fresh list too.
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(!lists(&listed, "victim") && !lists(&listed, "u2"));
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    sidecar.stop().await;
}

fn file_state(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

// DEL-3, DEL-4: deleting a plugin or constructor server, from a missing file, or an entry that
// is not there is a JSON-RPC error naming the file; nothing changes on disk or in the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn del_3_del_4_plugin_constructor_missing_file_and_missing_entry_are_errors() {
    let sandbox = Sandbox::new();
    let plugin_root = sandbox.write_plugin("plug", json!({ "g": sandbox.server(&[]) }));
    sandbox.write_user(json!({ "u": sandbox.server(&[]) }));
    let plugin_file = plugin_root.join(".mcp.json");
    let user_file = sandbox.home.join(".wave/mcp.json");
    let project_file = sandbox.workdir.join(".mcp.json");
    let sidecar = Sidecar::start(&sandbox, json!({ "c": sandbox.server(&[]) })).await;
    let before = sidecar.ok("wave/mcp/servers", json!({})).await;
    let plugin_bytes = file_state(&plugin_file);
    let user_bytes = file_state(&user_file);

    let plugin = sidecar
        .err(
            "wave/mcp/delete",
            json!({ "name": "g", "source": "plugin" }),
        )
        .await;
    assert_eq!((plugin.code, plugin.kind()), (-32803, "readOnly"));
    assert!(plugin.message.contains("plugin"), "{plugin:?}");
    let constructor = sidecar
        .err(
            "wave/mcp/delete",
            json!({ "name": "c", "source": "constructor" }),
        )
        .await;
    assert_eq!(constructor.kind(), "readOnly");

    // No project file at all.
    let missing_file = sidecar
        .err(
            "wave/mcp/delete",
            json!({ "name": "u", "source": "project" }),
        )
        .await;
    assert_eq!(missing_file.kind(), "fileMissing");
    let project_shown = canonical(&sandbox.workdir).join(".mcp.json");
    assert!(
        missing_file
            .message
            .contains(&project_shown.display().to_string()),
        "{missing_file:?}"
    );
    assert_eq!(missing_file.data["path"], json!(project_shown));
    assert!(!project_file.exists(), "DEL-3: no file is created");

    // The user file exists but has no such entry.
    let missing_entry = sidecar
        .err("wave/mcp/delete", json!({ "name": "g", "source": "user" }))
        .await;
    assert_eq!(missing_entry.kind(), "entryMissing");
    assert!(
        missing_entry.message.contains("mcp.json"),
        "{missing_entry:?}"
    );

    assert_eq!(file_state(&plugin_file), plugin_bytes);
    assert_eq!(file_state(&user_file), user_bytes);
    let after = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(
        after["servers"], before["servers"],
        "DEL-3: the list stays as it was"
    );
    sidecar.stop().await;
}

// DEL-3: a config file the sidecar may not write: a permission error naming the file, and the
// file and the list unchanged. (As root, the sidecar runs as `nobody` so permissions apply.)
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn del_3_delete_without_write_permission_is_an_error_and_changes_nothing() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "p": sandbox.server(&[]), "q": sandbox.server(&[]) }));
    let project_file = sandbox.workdir.join(".mcp.json");
    for dir in [
        &sandbox.root,
        &sandbox.home,
        &sandbox.home.join(".wave"),
        &sandbox.workdir,
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&project_file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let bytes = file_state(&project_file);
    // Files we create are owned by our effective user.
    let as_root = std::fs::metadata(&sandbox.root).unwrap().uid() == 0;
    // `nobody` must be able to reach the binary: else run a copy from the sandbox.
    let mut program = wave_mcp();
    let reachable = program
        .ancestors()
        .all(|p| std::fs::metadata(p).is_ok_and(|m| m.mode() & 0o001 != 0));
    if as_root && !reachable {
        let copy = sandbox.path("wave-mcp");
        std::fs::copy(&program, &copy).unwrap();
        program = copy;
    }
    let sidecar = Sidecar::spawn_program(&program, &sandbox.root, |command| {
        if as_root {
            command.uid(65534).gid(65534);
        }
    });
    sidecar
        .initialize(json!({ "initializationOptions": {
            "home": sandbox.home, "workdir": sandbox.workdir,
        }}))
        .await
        .unwrap();
    let before = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(lists(&before, "p"));

    let denied = sidecar
        .err(
            "wave/mcp/delete",
            json!({ "name": "p", "source": "project" }),
        )
        .await;
    assert_eq!(denied.kind(), "permissionDenied", "{denied:?}");
    assert!(denied.message.contains(".mcp.json"), "{denied:?}");
    assert_eq!(file_state(&project_file), bytes);
    let after = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(after["servers"], before["servers"]);
    sidecar.stop().await;
}

// EDIT-2: `configPaths` gives absolute OS paths, whether or not the files exist, even when HOME
// and the workdir were given relatively.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_2_config_paths_are_absolute_when_home_and_workdir_are_relative() {
    let sandbox = Sandbox::new();
    let home = canonical(&sandbox.home);
    let workdir = canonical(&sandbox.workdir);
    let expected = json!({
        "userConfigPath": home.join(".wave").join("mcp.json"),
        "projectConfigPath": workdir.join(".mcp.json"),
        "projectName": "project",
        "workdir": workdir,
    });

    // HOME relative in the environment, workdir relative in initializationOptions.
    let sidecar = Sidecar::spawn(&sandbox.root, |command| {
        command.env("HOME", "home");
    });
    sidecar
        .initialize(json!({ "initializationOptions": { "workdir": "project" } }))
        .await
        .unwrap();
    let paths = sidecar.ok("wave/mcp/configPaths", Value::Null).await;
    assert_eq!(paths, expected);
    sidecar.stop().await;

    // Home relative in initializationOptions, workdir as a relative rootPath; started with the
    // `--stdio` flag that LSP clients such as vscode-languageclient pass.
    let sidecar = Sidecar::spawn(&sandbox.root, |command| {
        command.arg("--stdio");
    });
    sidecar
        .initialize(json!({
            "rootPath": "project",
            "initializationOptions": { "home": "./home/" },
        }))
        .await
        .unwrap();
    let paths = sidecar.ok("wave/mcp/configPaths", json!({})).await;
    assert_eq!(paths, expected);
    for key in ["userConfigPath", "projectConfigPath"] {
        assert!(Path::new(paths[key].as_str().unwrap()).is_absolute());
    }
    sidecar.stop().await;

    // The first workspace folder wins over rootUri.
    let sidecar = Sidecar::spawn(&sandbox.root, |_| {});
    sidecar
        .initialize(json!({
            "rootUri": format!("file://{}", sandbox.root.display()),
            "workspaceFolders": [{
                "uri": format!("file://{}", sandbox.workdir.display()),
                "name": "project",
            }],
            "initializationOptions": { "home": sandbox.home },
        }))
        .await
        .unwrap();
    assert_eq!(
        sidecar.ok("wave/mcp/configPaths", json!({})).await,
        expected
    );
    sidecar.stop().await;
}

// UI-5, ADD-3: a hand edit of `.mcp.json` (and of `~/.wave/mcp.json`, and a plugin's
// `.mcp.json`) pushes a snapshot with the new server, `disconnected`, spawning nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_5_hand_edit_of_the_project_config_adds_a_server_to_the_next_snapshot() {
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(sandbox.home.join(".wave")).unwrap();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let before = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(lists(&before, "a") && !lists(&before, "b"));

    let since = sidecar.received();
    let text = format!(
        "{{\n  \"mcpServers\": {{\n    \"a\": {},\n    \"b\": {}\n  }}\n}}\n",
        compact(&sandbox.server(&[])),
        compact(&sandbox.server(&["--name", "b"])),
    );
    std::fs::write(sandbox.workdir.join(".mcp.json"), text).unwrap();
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| lists(s, "b"))
        .await;
    // TRUST-1: a server a hand edit adds to the project waits for the user's approval.
    assert_eq!(status_of(&pushed, "b").as_deref(), Some("needs-approval"));
    assert_eq!(row(&pushed, "b")["source"], "project");
    assert!(lists(&pushed, "a"));
    assert!(version(&pushed) > version(&before));

    // `~/.wave` did not exist at start: creating it and the user file is noticed too.
    let since = sidecar.received();
    std::fs::create_dir_all(sandbox.home.join(".wave")).unwrap();
    sandbox.write_user(json!({ "u": sandbox.server(&["--name", "u"]) }));
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| lists(s, "u"))
        .await;
    assert_eq!(row(&pushed, "u")["source"], "user");

    // CFG-1: a plugin installed while the sidecar runs (a new `~/.wave/plugins/<plugin>/`
    // with its `.mcp.json`) is listed, read-only; an edit of its file is seen too.
    let since = sidecar.received();
    sandbox.write_plugin(
        "tools-plugin",
        json!({ "p": sandbox.server(&["--name", "p"]) }),
    );
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| lists(s, "p"))
        .await;
    assert_eq!(row(&pushed, "p")["source"], "plugin");
    assert_eq!(row(&pushed, "p")["readOnly"], true);
    let since = sidecar.received();
    sandbox.write_plugin(
        "tools-plugin",
        json!({ "p2": sandbox.server(&["--name", "p2"]) }),
    );
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| lists(s, "p2") && !lists(s, "p"))
        .await;
    assert_eq!(row(&pushed, "p2")["source"], "plugin");
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    sidecar.stop().await;
}

// UI-5, LIFE-7, LAZY-8: editing a connected server's config reconnects it (old tree reaped, a
// new process serving); removing it from the file tears it down and drops it from the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_5_edit_of_a_connected_servers_config_reconnects_it_and_removal_reaps_it() {
    let sandbox = Sandbox::new();
    let first = sandbox.server_with_pids("a1", &["--spawn-descendants", "2"]);
    sandbox.write_project(json!({ "a": first, "idle": sandbox.server(&[]) }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    let old = wait_for_pids(&sandbox.pid_file("a1"), 3).await;

    let since = sidecar.received();
    let second = sandbox.server_with_pids("a2", &["--spawn-descendants", "2"]);
    sandbox.write_project(json!({ "a": second, "idle": sandbox.server(&["--name", "idle2"]) }));
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| {
            status_of(s, "a").as_deref() == Some("connected")
        })
        .await;
    assert_eq!(row(&pushed, "a")["toolCount"], 9);
    assert_eq!(status_of(&pushed, "idle").as_deref(), Some("disconnected"));
    assert_all_dead(&old).await;
    let new = wait_for_pids(&sandbox.pid_file("a2"), 3).await;
    assert!(new.iter().all(|&p| alive(p)));

    let since = sidecar.received();
    sandbox.write_project(json!({ "idle": sandbox.server(&["--name", "idle2"]) }));
    sidecar
        .wait_notification(since, CHANGED, |s| !lists(s, "a"))
        .await;
    assert_all_dead(&new).await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    sidecar.stop().await;
}

// LIFE-9, LIFE-10: ten sessions in one sidecar, each with a connected server; a config edit
// reconfigures all of them (slow re-dials), and each is destroyed during that: the destroys are
// queued, carried out when the reconfiguration ends, and every process is reaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_9_ten_sessions_destroyed_during_reconfigure_reap_every_process() {
    let sandbox = Sandbox::new();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let mut sessions = Vec::new();
    for i in 0..10 {
        let workdir = sandbox.path(&format!("w{i}"));
        std::fs::create_dir_all(&workdir).unwrap();
        let entry = sandbox.server_with_pids(&format!("w{i}-1"), &["--spawn-descendants", "1"]);
        write_config(&workdir.join(".mcp.json"), json!({ "s": entry }));
        sandbox.approve_project_in(&workdir);
        let created = sidecar
            .ok("wave/session/create", json!({ "workdir": workdir }))
            .await;
        let id = created["sessionId"].as_str().unwrap().to_string();
        assert_ne!(id, "default");
        sessions.push((id, workdir));
    }
    let connects = sessions
        .iter()
        .map(|(id, _)| sidecar.ok("wave/mcp/connect", json!({ "name": "s", "sessionId": id })));
    for reply in futures::future::join_all(connects).await {
        assert_eq!(
            status_of(&reply, "s").as_deref(),
            Some("connected"),
            "{reply:#}"
        );
    }
    let mut first_pids = Vec::new();
    for i in 0..10 {
        first_pids.extend(wait_for_pids(&sandbox.pid_file(&format!("w{i}-1")), 2).await);
    }
    assert_eq!(first_pids.len(), 20);

    // Reconfigure every session: the new config dials slowly, so the reload is still running.
    let since = sidecar.received();
    for (i, (_, workdir)) in sessions.iter().enumerate() {
        let entry = sandbox.server_with_pids(
            &format!("w{i}-2"),
            &["--spawn-descendants", "1", "--slow-initialize-ms", "4000"],
        );
        write_config(&workdir.join(".mcp.json"), json!({ "s": entry }));
        // The user approves the changed entry; the server was connected, so it comes back.
        sandbox.approve_project_in(workdir);
    }
    for (id, _) in &sessions {
        sidecar
            .wait_notification(since, CHANGED, |s| {
                s["sessionId"] == id.as_str() && status_of(s, "s").as_deref() == Some("connecting")
            })
            .await;
    }
    for (id, _) in &sessions {
        let destroyed = sidecar
            .ok("wave/session/destroy", json!({ "sessionId": id }))
            .await;
        assert_eq!(destroyed["state"], "queued", "LIFE-9: {destroyed:#}");
        // It accepts no request from now on.
        let gone = sidecar
            .err("wave/mcp/servers", json!({ "sessionId": id }))
            .await;
        assert_eq!(gone.kind(), "unknownSession");
    }
    assert_all_dead(&first_pids).await;
    // The queued destroys run when the re-dials end: every new process is reaped too.
    let reaped = eventually(Duration::from_secs(40), || {
        let second: Vec<u32> = (0..10)
            .flat_map(|i| read_pids(&sandbox.pid_file(&format!("w{i}-2"))))
            .collect();
        second.len() == 20 && second.iter().all(|&p| !alive(p))
    })
    .await;
    assert!(
        reaped,
        "second-generation processes left: {:?}",
        sandbox.live_processes()
    );
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());

    // A session that is not being reconfigured is destroyed at once.
    let created = sidecar.ok("wave/session/create", json!({})).await;
    let id = created["sessionId"].clone();
    let destroyed = sidecar
        .ok("wave/session/destroy", json!({ "sessionId": id }))
        .await;
    assert_eq!(destroyed["state"], "destroyed");
    let again = sidecar
        .err("wave/session/destroy", json!({ "sessionId": id }))
        .await;
    assert_eq!(again.kind(), "unknownSession");
    // The default session is untouched.
    sidecar.ok("wave/mcp/servers", json!({})).await;
    sidecar.stop().await;
}

/// A sidecar with a stubborn server connected in the default session and another in a second
/// session; returns every pid they run.
async fn busy_sidecar(sandbox: &Sandbox) -> (Sidecar, Vec<u32>) {
    sandbox.write_project(json!({
        "stubborn": sandbox.server_with_pids("stubborn", &["--ignore-sigterm", "--spawn-descendants", "2"]),
    }));
    let sidecar = Sidecar::start(sandbox, Value::Null).await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "stubborn" }))
        .await;
    let created = sidecar
        .ok(
            "wave/session/create",
            json!({ "mcpServers": { "own": sandbox.server_with_pids("own", &["--spawn-descendants", "1"]) } }),
        )
        .await;
    sidecar
        .ok(
            "wave/mcp/connect",
            json!({ "name": "own", "sessionId": created["sessionId"] }),
        )
        .await;
    let mut pids = wait_for_pids(&sandbox.pid_file("stubborn"), 3).await;
    pids.extend(wait_for_pids(&sandbox.pid_file("own"), 2).await);
    (sidecar, pids)
}

/// The servers' own pids (each pid file starts with the server, then its descendants).
fn server_pids(sandbox: &Sandbox) -> Vec<u32> {
    ["stubborn", "own"]
        .iter()
        .filter_map(|name| read_pids(&sandbox.pid_file(name)).first().copied())
        .collect()
}

// LIFE-8: `shutdown` tears every session down before it answers; `exit` ends the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_8_shutdown_and_exit_leave_no_process() {
    let sandbox = Sandbox::new();
    let (mut sidecar, pids) = busy_sidecar(&sandbox).await;
    sidecar.ok("shutdown", Value::Null).await;
    // The servers were reaped before the reply; their descendants got SIGKILL and go with it.
    let servers = server_pids(&sandbox);
    assert_eq!(servers.len(), 2);
    assert!(
        servers.iter().all(|&p| !alive(p)),
        "alive after shutdown: {servers:?}"
    );
    assert_all_dead(&pids).await;
    // After shutdown only `exit` is accepted.
    let refused = sidecar.err("wave/mcp/servers", json!({})).await;
    assert_eq!(refused.code, -32600);
    sidecar.notify("exit", Value::Null).await;
    let status = sidecar.wait_exit(Duration::from_secs(20)).await;
    assert!(status.success(), "{status}");
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// LIFE-8: `exit` without `shutdown`, and the end of stdin, tear everything down too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_8_exit_without_shutdown_and_end_of_stdin_leave_no_process() {
    let sandbox = Sandbox::new();
    let (mut sidecar, pids) = busy_sidecar(&sandbox).await;
    sidecar.notify("exit", Value::Null).await;
    sidecar.wait_exit(Duration::from_secs(20)).await;
    assert_all_dead(&pids).await;

    let sandbox = Sandbox::new();
    let (mut sidecar, pids) = busy_sidecar(&sandbox).await;
    sidecar.close_stdin().await;
    let status = sidecar.wait_exit(Duration::from_secs(20)).await;
    assert!(status.success(), "{status}");
    assert_all_dead(&pids).await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// Bad input: unknown method → MethodNotFound; malformed params → InvalidParams naming the field;
// unknown session → RequestFailed; none of it hurts the sidecar. A frame that is not JSON gets a
// parse error and ends the connection cleanly, with nothing left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_unknown_methods_and_malformed_params_are_errors_and_never_fatal() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let mut sidecar = Sidecar::start(&sandbox, Value::Null).await;

    for method in ["wave/mcp/nope", "wave/mcp/serversChanged", "nope"] {
        let e = sidecar.err(method, json!({})).await;
        assert_eq!(e.code, -32601, "{method}: {e:?}");
    }
    let cases = [
        ("wave/mcp/connect", json!({}), "name"),
        ("wave/mcp/connect", json!({ "name": 5 }), "params.name"),
        ("wave/mcp/disconnect", json!([1, 2]), "params"),
        ("wave/mcp/delete", json!({ "name": "a" }), "source"),
        (
            "wave/mcp/delete",
            json!({ "name": "a", "source": "weird" }),
            "params.source",
        ),
        (
            "wave/mcp/servers",
            json!({ "sessionId": 3 }),
            "params.sessionId",
        ),
        ("wave/mcp/configPaths", json!("x"), "params"),
        (
            "wave/session/create",
            json!({ "mcpServers": [] }),
            "params.mcpServers",
        ),
        (
            "wave/session/send",
            json!({ "sessionId": "default" }),
            "text",
        ),
        ("wave/session/destroy", json!({}), "sessionId"),
    ];
    for (method, params, field) in cases {
        let e = sidecar.err(method, params.clone()).await;
        assert_eq!(e.code, -32602, "{method} {params}: {e:?}");
        assert!(e.message.contains(field), "{method} {params}: {e:?}");
    }
    let unknown = sidecar
        .err("wave/mcp/servers", json!({ "sessionId": "nope" }))
        .await;
    assert_eq!((unknown.code, unknown.kind()), (-32803, "unknownSession"));
    let chat = sidecar
        .err(
            "wave/session/send",
            json!({ "sessionId": "default", "text": "hi" }),
        )
        .await;
    assert_eq!(chat.kind(), "chatUnavailable");

    let snapshot = sidecar.ok("wave/mcp/servers", Value::Null).await;
    assert!(lists(&snapshot, "a"));
    assert!(sidecar.running(), "the sidecar survived every bad request");

    // A body that is not JSON at all is answered with a parse error, and tower-lsp-server ends
    // the connection there: the sidecar tears down (no process left) and exits cleanly.
    let connected = sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
    assert_eq!(status_of(&connected, "a").as_deref(), Some("connected"));
    let before = sidecar.received();
    sidecar.write_raw(b"{not json").await;
    let status = sidecar.wait_exit(Duration::from_secs(20)).await;
    assert!(status.success(), "{status}");
    assert!(
        sidecar.messages()[before..]
            .iter()
            .any(|m| m["error"]["code"] == -32700),
        "{:#?}",
        sidecar.messages()
    );
    sandbox.assert_no_process_left().await;

    // Bad initializationOptions name the field too.
    let sidecar = Sidecar::spawn(&sandbox.root, |_| {});
    let e = sidecar
        .initialize(json!({ "initializationOptions": { "home": 5 } }))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("initializationOptions.home"), "{e:?}");
    // Before a successful initialize, requests are refused.
    let early = sidecar.err("wave/mcp/servers", json!({})).await;
    assert_eq!(early.code, -32002);
}

// Sessions: each has its own servers (constructor options) and its own snapshots, all versioned
// from the one counter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_have_their_own_servers_and_share_the_version_counter() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "p": sandbox.server(&[]) }));
    let sidecar = Sidecar::start(&sandbox, json!({ "c": sandbox.server(&[]) })).await;
    let created = sidecar
        .ok(
            "wave/session/create",
            json!({ "mcpServers": { "mine": sandbox.server(&[]) } }),
        )
        .await;
    let id = created["sessionId"].clone();
    let own = sidecar
        .ok("wave/mcp/servers", json!({ "sessionId": id }))
        .await;
    assert_eq!(own["sessionId"], id);
    assert!(lists(&own, "mine") && lists(&own, "p") && !lists(&own, "c"));
    let default = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(lists(&default, "c") && !lists(&default, "mine"));
    assert!(version(&default) > version(&own));
    let reply = sidecar
        .ok(
            "wave/mcp/connect",
            json!({ "name": "mine", "sessionId": id }),
        )
        .await;
    assert_eq!(status_of(&reply, "mine").as_deref(), Some("connected"));
    let pushed = sidecar
        .wait_notification(0, CHANGED, |s| s["sessionId"] == id)
        .await;
    assert!(lists(&pushed, "mine"));
    assert!(
        sidecar
            .notifications(CHANGED)
            .iter()
            .all(|n| n["sessionId"] == id),
        "the default session did not change"
    );
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

/// The scripted fake model (testkit): the turn's first answer calls `mcp__a__echo`, the next
/// one reports the tool's result.
async fn echo_model() -> FakeModel {
    FakeModel::start(vec![
        call("mcp__a__echo", json!({ "text": "hi from the model" })),
        say("done: hi from the model"),
    ])
    .await
}

// ADD-3, ADD-4, INS-2, UI-12: a session with a model. `wave/session/send` accepts the text and
// the model gets it verbatim as an ordinary user message (`/settings ...` is no local command);
// the turn's meta, assistant and tool messages arrive as `wave/session/message`, then
// `wave/session/turnEnded`. The servers the turn dialed show up as snapshots, not as chat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_3_add_4_session_send_runs_a_turn_and_notifies_its_messages() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server(&["--instructions", "Use echo for greetings."]),
    }));
    sandbox.allow_tool_calls();
    let model = echo_model().await;
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let text = "/settings 帮我配个用户级 MCP 服务器demo：连npx，参数-y";
    let accepted = sidecar
        .ok(
            "wave/session/send",
            json!({ "sessionId": "default", "text": text }),
        )
        .await;
    assert_eq!(accepted, json!({ "sessionId": "default", "turn": 1 }));
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 1)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");

    let messages: Vec<Value> = sidecar
        .notifications("wave/session/message")
        .into_iter()
        .map(|p| {
            assert_eq!(
                (&p["sessionId"], &p["turn"]),
                (&json!("default"), &json!(1))
            );
            p["message"].clone()
        })
        .collect();
    assert!(
        messages.iter().any(|m| m["isMeta"] == true
            && m["content"]
                .as_str()
                .unwrap()
                .contains("Use echo for greetings.")),
        "INS-2: {messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && m["toolCalls"][0]["name"] == "mcp__a__echo"),
        "{messages:#?}"
    );
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["toolName"], "mcp__a__echo");
    assert_eq!(tool["isError"], false);
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("hi from the model")
    );
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["content"], "done: hi from the model");
    // CHAT-1: the user's own message comes back first, as the turn's first message.
    assert_eq!(messages[0]["role"], "user", "{messages:#?}");
    assert_eq!(messages[0]["content"], text);
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["role"] == "user" && m["isMeta"] == false)
            .count(),
        1,
        "{messages:#?}"
    );
    // The tool's result went back to the model (its second request).
    assert!(
        model.request(1)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("hi from the model")),
        "{:#}",
        model.request(1)
    );
    // ADD-4: the text reached the model verbatim, as a user message.
    let first = model.request(0);
    assert!(
        first["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "user" && m.to_string().contains(text)),
        "{first:#}"
    );
    // LAZY-2 and UI-12: the dial of the first turn is reported as snapshots.
    sidecar
        .wait_notification(0, CHANGED, |s| {
            status_of(s, "a").as_deref() == Some("connected")
        })
        .await;
    sidecar.stop().await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// CHAT-1, CHAT-2: three messages sent without waiting run as turns 1, 2, 3, one after another in
// that order (the model sees them in that order, the first one slow); each turn's messages start
// with the user's own; `wave/session/history` then returns the user and assistant messages of
// all three turns, with the same indexes as the notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_1_chat_2_turns_run_in_arrival_order_and_history_returns_all_of_them() {
    let sandbox = Sandbox::new();
    // Answers in order; the first one late, so turns that raced would overtake it.
    let model = FakeModel::start(vec![
        after(400, say("reply to one")),
        say("reply to two"),
        say("reply to three"),
    ])
    .await;
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let send = |text: &'static str| {
        sidecar.ok(
            "wave/session/send",
            json!({ "sessionId": "default", "text": text }),
        )
    };
    // Joined: the three requests are written one after another without waiting for replies.
    let (a, b, c) = tokio::join!(send("one"), send("two"), send("three"));
    assert_eq!(
        [&a["turn"], &b["turn"], &c["turn"]],
        [&json!(1), &json!(2), &json!(3)]
    );
    sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == 3)
        .await;
    // The last user message of each model request: the turns ran one after another, in order.
    let seen: Vec<String> = model
        .requests()
        .iter()
        .map(|request| {
            request["messages"]
                .as_array()
                .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(seen, ["one", "two", "three"], "CHAT-2");
    let ended: Vec<Value> = sidecar
        .notifications("wave/session/turnEnded")
        .iter()
        .map(|p| p["turn"].clone())
        .collect();
    assert_eq!(ended, [json!(1), json!(2), json!(3)], "CHAT-2");

    let pushed = sidecar.notifications("wave/session/message");
    let indexes: Vec<u64> = pushed
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (0..pushed.len() as u64).collect::<Vec<_>>());
    for turn in 1..=3u64 {
        let first = pushed.iter().find(|p| p["turn"] == turn).unwrap();
        assert_eq!(first["message"]["role"], "user", "CHAT-1: {pushed:#?}");
    }

    let history = sidecar
        .ok("wave/session/history", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(history["sessionId"], "default");
    assert_eq!(history["runningTurns"], json!([]));
    // In the order the messages were added: each user message when its send was accepted,
    // the replies when their turn ran. Grouped by turn, they read as the conversation.
    let mut visible: Vec<(u64, String, String)> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message"]["isMeta"] == false)
        .map(|m| {
            (
                m["turn"].as_u64().unwrap(),
                m["message"]["role"].as_str().unwrap().to_string(),
                m["message"]["content"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        visible.iter().map(|m| m.0).collect::<Vec<_>>(),
        [1, 2, 3, 1, 2, 3],
        "user messages on acceptance, replies as their turns ran"
    );
    visible.sort_by_key(|m| m.0);
    let expected: Vec<(u64, String, String)> = [(1, "one"), (2, "two"), (3, "three")]
        .into_iter()
        .flat_map(|(turn, text)| {
            [
                (turn, "user".to_string(), text.to_string()),
                (turn, "assistant".to_string(), format!("reply to {text}")),
            ]
        })
        .collect();
    assert_eq!(visible, expected, "CHAT-1");
    // The history is the notifications' record: same messages, same indexes.
    let from_pushes: Vec<Value> = pushed
        .iter()
        .map(|p| json!({ "turn": p["turn"], "index": p["index"], "message": p["message"] }))
        .collect();
    assert_eq!(history["messages"], json!(from_pushes));
    assert_eq!(
        sidecar
            .err("wave/session/history", json!({ "sessionId": "nope" }))
            .await
            .data["kind"],
        "unknownSession"
    );
    sidecar.stop().await;
}

fn row_tool_names(snapshot: &Value, name: &str) -> Vec<String> {
    row(snapshot, name)["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} has no tools array: {snapshot}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

// CACHE-5, UI-5: a connected server's `tools/list_changed` (our test server sends it on SIGUSR1,
// with the list it reads from a file) reaches the IDE as a `serversChanged` push with the new
// tools, on the same connection; an empty list is pushed as well, and `wave/mcp/servers` agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_5_list_changed_is_pushed_as_servers_changed_even_empty() {
    let sandbox = Sandbox::new();
    let tools_file = sandbox.path("tools.txt");
    let tools_arg = tools_file.display().to_string();
    sandbox.write_project(json!({
        "r": sandbox.server_with_pids("r", &["--tools", "echo", "--retool-on-sigusr1", &tools_arg]),
    }));
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let reply = sidecar.ok("wave/mcp/connect", json!({ "name": "r" })).await;
    assert_eq!(row_tool_names(&reply, "r"), ["echo"]);
    let pid = wait_for_pids(&sandbox.pid_file("r"), 1).await[0];
    let retool = |list: &str| {
        std::fs::write(&tools_file, list).unwrap();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGUSR1,
        )
        .expect("signal the test server");
    };

    let since = sidecar.received();
    retool("add,pid");
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| row_tool_names(s, "r") == ["add", "pid"])
        .await;
    assert_eq!(status_of(&pushed, "r").as_deref(), Some("connected"));
    assert_eq!(row(&pushed, "r")["toolCount"], 2);
    assert_eq!(row(&pushed, "r")["toolsFromCache"], false);
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert_eq!(row_tool_names(&listed, "r"), ["add", "pid"]);

    let since = sidecar.received();
    retool("none");
    let pushed = sidecar
        .wait_notification(since, CHANGED, |s| row(s, "r")["toolCount"] == 0)
        .await;
    assert_eq!(status_of(&pushed, "r").as_deref(), Some("connected"));
    assert_eq!(row(&pushed, "r")["tools"], json!([]));
    assert_eq!(sandbox.count_events("list-changed"), 2);
    sidecar.stop().await;
}

// LONG-3: Stop while the turn still waits for its dials (a server that takes minutes to
// initialize) ends the turn at once with `cancelled: true`, before any model request; the user's
// message stays in the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_3_stop_during_the_turns_dials_ends_it_before_any_model_request() {
    let sandbox = Sandbox::new();
    let mut slow = sandbox.server(&["--slow-initialize-ms", "600000"]);
    slow["startupTimeoutSec"] = json!(600);
    sandbox.write_project(json!({ "slow": slow }));
    let model = FakeModel::start(vec![say("never asked")]).await;
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("hello").await;
    let dialing = eventually(Duration::from_secs(30), || {
        sandbox.count_events("init-begin") == 1
    })
    .await;
    assert!(dialing, "the turn never dialed the server");
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(stopped["cancelled"], true);
    let ended = sidecar
        .wait_notification(0, "wave/session/turnEnded", |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true, "{ended:#}");
    assert!(model.requests().is_empty(), "a model request after Stop");
    let history = sidecar
        .ok("wave/session/history", json!({ "sessionId": "default" }))
        .await;
    let contents: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message"]["isMeta"] == false)
        .map(|m| m["message"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["hello"]);
    sidecar.stop().await;
}

// The protocol channel when the host hands the sidecar a Unix socket as stdout (some hosts give
// children socketpairs): it is written as a non-blocking socket, frames arrive whole and in
// order, and the end of stdin still ends the sidecar (REAP-3). Pipes, every other test's
// stdout, take the non-blocking pipe path.
#[test]
fn stdout_that_is_a_unix_socket_carries_the_protocol() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::net::UnixStream;

    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = std::process::Command::new(wave_mcp())
        .arg("lsp")
        .current_dir(&sandbox.workdir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs,
        )))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    ours.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut reader = BufReader::new(ours);
    let mut send = |body: Value| {
        let text = body.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{text}", text.len());
        stdin.write_all(frame.as_bytes()).unwrap();
    };
    // The next reply (a message with an id and no method), whole.
    let mut reply = || loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            reader
                .read_line(&mut line)
                .expect("a frame from the socket");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = Some(value.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        reader.read_exact(&mut body).unwrap();
        let message: Value = serde_json::from_slice(&body).unwrap();
        if message.get("id").is_some() && message.get("method").is_none() {
            return message;
        }
    };
    let options = json!({ "home": sandbox.home, "workdir": sandbox.workdir });
    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": { "capabilities": {}, "initializationOptions": options } }));
    assert_eq!(reply()["id"], 1);
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    send(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "wave/mcp/connect", "params": { "name": "a" } }),
    );
    let connected = reply();
    assert_eq!(connected["id"], 2);
    assert_eq!(
        connected["result"]["servers"][0]["status"], "connected",
        "{connected:#}"
    );
    // Written as a non-blocking descriptor: O_NONBLOCK is set on the socket end it was given.
    let fdinfo = std::fs::read_to_string(format!("/proc/{}/fdinfo/1", child.id())).unwrap();
    let flags = fdinfo
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .map(|flags| u32::from_str_radix(flags.trim(), 8).unwrap())
        .unwrap();
    assert_ne!(flags & 0o4000, 0, "stdout is not non-blocking: {fdinfo}");
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the sidecar outlived its stdin"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}
