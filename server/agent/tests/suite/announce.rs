//! Announcing servers' `instructions` to the model: INS-1 … INS-12, each as its own test, with
//! assertions on the exact requests the fake model received.

use serde_json::{Value, json};
use wave_mcp_agent::announce::{self, Marker};
use wave_mcp_agent::{Agent, Status};

use super::support::*;

const DOCS: &str = "Docs server rules:\n  - at most 5 searches per minute\n\nCall `echo` first.";

fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

// INS-1: the manager keeps the instructions a server returns in `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_1_instructions_from_initialize_are_kept() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.send_message("hi").await.unwrap();
    let servers = agent.get_mcp_servers().unwrap();
    assert_eq!(servers[0].instructions.as_deref(), Some(DOCS));
    agent.destroy().await;
}

// INS-2: before the turn's first request, one persistent isMeta message per server with
// instructions, naming its server (two servers are distinguishable); a server without
// instructions announces nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_2_available_servers_are_announced_in_meta_messages_naming_each_server() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let servers = json!({
        "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]),
        "db": sandbox.server_with_instructions("db", "DB: read-only, use LIMIT.", &["--tools", "add"]),
        "plain": sandbox.server("plain", &["--tools", "echo"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("hello").await.unwrap();
    assert_eq!(report.meta_messages.len(), 2);

    let history = agent.history();
    assert!(!history[0].is_meta);
    assert!(history[1].is_meta && history[2].is_meta);
    assert_eq!(announced(history), ["docs", "db"]);
    assert!(
        history[1]
            .content
            .contains("Instructions from MCP server \"docs\"")
    );
    assert!(history[1].content.contains(DOCS));
    assert!(
        history[2]
            .content
            .contains("Instructions from MCP server \"db\"")
    );
    assert!(history[2].content.contains("DB: read-only, use LIMIT."));
    assert!(!history[2].content.contains(DOCS));

    // Sent before the first request, as part of the user side of the conversation.
    let first = model.request(0);
    let sent = messages(&first);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1]["role"], "user");
    let expected = format!("hello\n\n{}\n\n{}", history[1].content, history[2].content);
    assert_eq!(sent[1]["content"], expected.as_str());

    // Persistent and hidden: isMeta in the transcript.
    let lines = read_transcript(agent.transcript_path());
    let flags: Vec<_> = lines
        .iter()
        .map(|l| l["isMeta"].as_bool().unwrap())
        .collect();
    assert_eq!(flags, [false, true, true, false]);
    agent.destroy().await;
}

// INS-3: multi-line text kept verbatim; more than 2048 characters cut to 2048 with a note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_3_multiline_text_is_verbatim_and_long_text_is_cut_with_a_note() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let long = format!("{}{}", "a".repeat(2048), "Q".repeat(52));
    let servers = json!({
        "multi": sandbox.server_with_instructions("multi", DOCS, &["--tools", "echo"]),
        "long": sandbox.server_with_instructions("long", &long, &["--tools", "echo"]),
        "edge": sandbox.server_with_instructions("edge", &"e".repeat(2048), &["--tools", "echo"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    agent.send_message("hi").await.unwrap();
    let history = agent.history();
    let multi = &history[1].content;
    assert!(
        multi.contains(&format!("verbatim:\n\n{DOCS}\n</system-reminder>")),
        "{multi}"
    );
    let cut = &history[2].content;
    assert!(cut.contains(&format!(
        "{}\n…(truncated: 52 more characters)\n",
        "a".repeat(2048)
    )));
    assert!(!cut.contains('Q'), "{cut}");
    let edge = &history[3].content;
    assert!(edge.contains(&"e".repeat(2048)));
    assert!(!edge.contains("truncated"));
    let request = model.request(0);
    assert_eq!(occurrences(&request, "…(truncated: 52 more characters)"), 1);
    agent.destroy().await;
}

// INS-4: a server whose tools are all denied is not announced; a server with zero tools is;
// when rules tighten after an announcement, the text stays in history and is not announced
// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_4_permission_excluded_servers_are_skipped_and_zero_tool_servers_announced() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(
        false,
        json!({ "permissions": { "deny": ["mcp__denied__*"] } }),
    );
    let model = FakeModel::start(vec![say("one"), say("two"), say("three")]).await;
    let servers = json!({
        "denied": sandbox.server_with_instructions("denied", "DENIED TEXT", &["--tools", "echo,add"]),
        "empty": sandbox.server_with_instructions("empty", "EMPTY TEXT", &["--tools", "none"]),
        "partial": sandbox.server_with_instructions("partial", "PARTIAL TEXT", &["--tools", "echo,add"]),
    });
    let mut options = sandbox.options(servers, &model);
    options.permissions.deny.push("mcp__partial__add".into());
    let mut agent = Agent::create(options).unwrap();
    agent.send_message("one").await.unwrap();
    assert_eq!(announced(agent.history()), ["empty", "partial"]);
    let first = model.request(0);
    assert_eq!(occurrences(&first, "DENIED TEXT"), 0);
    assert_eq!(declared(&first), ["mcp__partial__echo"]);

    // Tighten: partial's last tool is denied too.
    sandbox.write_settings(
        false,
        json!({ "permissions": { "deny": ["mcp__denied__*", "mcp__partial__*"] } }),
    );
    let report = agent.send_message("two").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    let second = model.request(1);
    assert_eq!(declared(&second), Vec::<String>::new());
    assert_eq!(
        occurrences(&second, "PARTIAL TEXT"),
        1,
        "history is not rewritten"
    );
    let report = agent.send_message("three").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    assert_eq!(announced(agent.history()), ["empty", "partial"]);
    assert_eq!(offline(agent.history()), Vec::<String>::new());
    agent.destroy().await;
}

// INS-5: an announced server that is disconnected, or fails, gets one offline notice in a later
// turn, once; the earlier text stays; nothing claims it was deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_5_offline_notice_exactly_once_per_departure() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        say("one"),
        call("mcp__y__crash", json!({})),
        say("two"),
        say("three"),
        say("four"),
    ])
    .await;
    let servers = json!({
        "x": sandbox.server_with_instructions("x", "X TEXT", &["--tools", "echo"]),
        "y": sandbox.server_with_instructions("y", "Y TEXT", &["--tools", "echo,crash"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    agent.send_message("one").await.unwrap();
    assert_eq!(announced(agent.history()), ["x", "y"]);

    agent.disconnect_mcp_server("x").await.unwrap();
    let report = agent.send_message("two").await.unwrap();
    assert!(report.meta_messages[0].starts_with("<!-- wave-mcp:offline {\"server\":\"x\"} -->"));
    assert!(report.tool_calls[0].outcome.is_error);
    wait_for_status(&agent, "y", Status::Error).await;
    agent.send_message("three").await.unwrap();
    let report = agent.send_message("four").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());

    let history = agent.history();
    assert_eq!(offline(history), ["x", "y"]);
    assert_eq!(announced(history), ["x", "y"]);
    let notice = history
        .iter()
        .find(|m| m.is_meta && m.content.contains("offline {\"server\":\"x\"}"))
        .unwrap();
    assert_eq!(
        notice.content,
        announce::offline_notice("x", "disconnected")
    );
    assert!(notice.content.contains("no longer apply"));
    let last = model.last_request();
    assert_eq!(occurrences(&last, "X TEXT"), 1, "the announced text stays");
    assert_eq!(occurrences(&last, "wave-mcp:offline {\"server\":\"x\"}"), 1);
    assert_eq!(occurrences(&last, "wave-mcp:offline {\"server\":\"y\"}"), 1);
    // LAZY-4, LAZY-6: neither is dialed again by later turns.
    assert_eq!((sandbox.starts("x"), sandbox.starts("y")), (1, 1));
    agent.destroy().await;
}

// INS-6: a turn where no server comes or goes appends nothing: the second request is the first
// plus the answer and the new user message, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_6_quiet_turn_appends_nothing() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("one"), say("two")]).await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.send_message("one").await.unwrap();
    let before = agent.history().len();
    let report = agent.send_message("two").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    assert_eq!(agent.history().len(), before + 2);
    let mut expected = messages(&model.request(0));
    expected.push(json!({ "role": "assistant", "content": "one" }));
    expected.push(json!({ "role": "user", "content": "two" }));
    assert_eq!(messages(&model.request(1)), expected);
    assert_eq!(model.request(1)["tools"], model.request(0)["tools"]);
    agent.destroy().await;
}

// INS-7: with the converged pool (one Exec tool), instructions are still announced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_7_exec_mode_still_announces() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("ok")]).await;
    let mut agent = sandbox.exec_agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.send_message("hi").await.unwrap();
    let first = model.request(0);
    assert_eq!(declared(&first), ["Exec"]);
    assert_eq!(occurrences(&first, DOCS), 1);
    assert_eq!(announced(agent.history()), ["docs"]);
    agent.destroy().await;
}

// INS-8: an announced, still-available server with unchanged text is not announced again; each
// later request carries the one announcement from history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_8_announced_once_while_available() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        say("one"),
        call("mcp__docs__echo", json!({ "text": "x" })),
        say("two"),
        say("three"),
    ])
    .await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    for text in ["one", "two", "three"] {
        agent.send_message(text).await.unwrap();
    }
    assert_eq!(announced(agent.history()), ["docs"]);
    assert_eq!(meta_count(agent.history()), 1);
    for request in model.requests() {
        assert_eq!(occurrences(&request, DOCS), 1);
    }
    agent.destroy().await;
}

// INS-9: when compaction or rewind removed the marker, the next turn announces again; when the
// marker survives, it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_9_reannounced_after_compaction_or_rewind_removed_the_marker() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("1"), say("2"), say("3"), say("4"), say("5")]).await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.send_message("one").await.unwrap();
    agent.send_message("two").await.unwrap();
    assert_eq!(agent.compact(100).unwrap(), 0, "nothing to remove");
    let report = agent.send_message("three").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());

    // Compaction drops everything but the last exchange, the announcement included.
    assert_eq!(agent.compact(2).unwrap(), 5);
    assert_eq!(announced(agent.history()), Vec::<String>::new());
    let on_disk = read_transcript(agent.transcript_path());
    assert_eq!(on_disk.len(), 3, "the transcript is rewritten");
    let report = agent.send_message("four").await.unwrap();
    assert_eq!(report.meta_messages.len(), 1);
    assert_eq!(announced(agent.history()), ["docs"]);

    // Rewind to before the re-announcement: it is announced once more.
    let at = agent
        .history()
        .iter()
        .position(|m| m.is_meta && Marker::parse(&m.content).is_some())
        .unwrap();
    agent.rewind(at).unwrap();
    assert_eq!(agent.history().len(), at);
    assert_eq!(read_transcript(agent.transcript_path()).len(), at);
    let report = agent.send_message("five").await.unwrap();
    assert_eq!(report.meta_messages.len(), 1);
    assert_eq!(announced(agent.history()), ["docs"]);
    assert_eq!(occurrences(&model.last_request(), DOCS), 1);
    agent.destroy().await;
}

// INS-10: a server that disconnects and reconnects is announced again (after one offline notice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_10_reannounced_after_reconnect() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("1"), say("2"), say("3"), say("4")]).await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.send_message("one").await.unwrap();
    agent.disconnect_mcp_server("docs").await.unwrap();
    agent.send_message("two").await.unwrap();
    agent.connect_mcp_server("docs").await.unwrap();
    let report = agent.send_message("three").await.unwrap();
    assert_eq!(report.meta_messages.len(), 1);
    let report = agent.send_message("four").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    let kinds: Vec<_> = meta_markers(agent.history())
        .iter()
        .map(|m| match m {
            Marker::Announce { .. } => "announce",
            Marker::Offline { .. } => "offline",
            Marker::DeferredTools { .. } => "deferred-tools",
        })
        .collect();
    assert_eq!(kinds, ["announce", "offline", "announce"]);
    assert_eq!(occurrences(&model.last_request(), DOCS), 2);
    agent.destroy().await;
}

// INS-11: the system prompt is byte-identical across turns while a server connects mid-session
// and leaves again; it names no server. Every request extends the previous one (stable prefix).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_11_system_prompt_identical_while_servers_come_and_go() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("1"), say("2"), say("3")]).await;
    let mut agent = sandbox.agent(
        json!({ "late": sandbox.server_with_instructions("late", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    agent.disconnect_mcp_server("late").await.unwrap();
    agent.send_message("one").await.unwrap();
    agent.connect_mcp_server("late").await.unwrap();
    agent.send_message("two").await.unwrap();
    agent.disconnect_mcp_server("late").await.unwrap();
    agent.send_message("three").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(declared(&requests[0]), Vec::<String>::new());
    assert_eq!(declared(&requests[1]), ["mcp__late__echo"]);
    assert_eq!(declared(&requests[2]), Vec::<String>::new());
    let prompt = system_prompt(&requests[0]);
    for request in &requests {
        assert_eq!(system_prompt(request), prompt);
    }
    assert!(
        !prompt.contains("late") && !prompt.contains("Docs server"),
        "{prompt}"
    );
    for pair in requests.windows(2) {
        let (before, after) = (messages(&pair[0]), messages(&pair[1]));
        assert_eq!(after[..before.len()], before[..], "the prefix changed");
    }
    assert_eq!(occurrences(&requests[1], DOCS), 1);
    assert_eq!(offline(agent.history()), ["late"]);
    agent.destroy().await;
}

// INS-12: a marker quoted in a user or assistant message counts for nothing: it neither fakes
// an announcement nor a departure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ins_12_quoted_markers_fake_neither_announcement_nor_departure() {
    let sandbox = Sandbox::new();
    let fake_offline = announce::offline_notice("docs", "error");
    let model = FakeModel::start(vec![say(&fake_offline), say("2"), say("3")]).await;
    let mut agent = sandbox.agent(
        json!({ "docs": sandbox.server_with_instructions("docs", DOCS, &["--tools", "echo"]) }),
        &model,
    );
    // The user pastes a complete announcement (valid hash, any connection) as their message.
    let fake_announcement = announce::announcement("docs", DOCS, None);
    assert!(Marker::parse(&fake_announcement).is_some());
    let report = agent.send_message(&fake_announcement).await.unwrap();
    assert_eq!(
        report.meta_messages.len(),
        1,
        "the real announcement is still made"
    );
    // The model answered with an offline notice, the user pastes one too: nothing changes.
    let report = agent.send_message(&fake_offline).await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    let report = agent.send_message("three").await.unwrap();
    assert_eq!(report.meta_messages, Vec::<String>::new());
    assert_eq!(announced(agent.history()), ["docs"]);
    assert_eq!(offline(agent.history()), Vec::<String>::new());
    agent.destroy().await;
}
