//! Agent lifecycle: creation spawns nothing (LAZY-1), destroy always tears MCP down and is final
//! (LIFE-8, LIFE-10).

use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_agent::{Agent, AgentError, AgentOptions};

use super::support::*;

// LIFE-8, LIFE-10, LAZY-8: destroy() with a transcript that cannot be written still ends every
// server process (whole trees, checked by pid through /proc); it is idempotent, and afterwards
// every operation fails with Destroyed and nothing is dialed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_8_destroy_with_unwritable_transcript_still_kills_every_server_process() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("connected")]).await;
    let servers = json!({
        "a": sandbox.server_with_pids("a", &["--tools", "echo", "--spawn-descendants", "2"]),
        "b": sandbox.server_with_pids("b", &["--tools", "echo", "--ignore-sigterm"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    agent.send_message("hi").await.unwrap();
    let mut pids = read_pids(&sandbox.pid_file("a"));
    pids.extend(read_pids(&sandbox.pid_file("b")));
    assert_eq!(pids.len(), 4, "a with two descendants, and b");
    assert!(pids.iter().all(|&p| alive(p)));

    // The sessions directory becomes a plain file: every transcript write fails (even as root).
    let sessions = sandbox.home.join(".wave/sessions");
    std::fs::remove_dir_all(&sessions).unwrap();
    std::fs::write(&sessions, "not a directory").unwrap();

    agent.destroy().await;
    assert_all_dead(&pids).await;
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    agent.destroy().await; // idempotent

    assert!(matches!(
        agent.send_message("again").await,
        Err(AgentError::Destroyed)
    ));
    assert!(matches!(
        agent.get_mcp_servers(),
        Err(AgentError::Destroyed)
    ));
    assert!(matches!(
        agent.connect_mcp_server("a").await,
        Err(AgentError::Destroyed)
    ));
    assert!(matches!(
        agent.disconnect_mcp_server("a").await,
        Err(AgentError::Destroyed)
    ));
    assert!(matches!(agent.compact(0), Err(AgentError::Destroyed)));
    assert!(matches!(agent.rewind(0), Err(AgentError::Destroyed)));
    assert!(matches!(
        agent.execute_tool("mcp__a__echo", Map::new()).await,
        Err(AgentError::Destroyed)
    ));
    // LIFE-10: nothing revives it, even through the manager.
    assert!(agent.manager().start_turn_dials().is_none());
    assert!(agent.manager().connect("a").await.is_err());
    // Sync point: a destroyed manager has no task left that could dial.
    assert_eq!(agent.manager().background_tasks(), 0);
    assert_eq!((sandbox.starts("a"), sandbox.starts("b")), (1, 1));
    assert_eq!(model.requests().len(), 1);
}

// LAZY-7, LIFE-10: MCP torn down (by a host, through the manager) while the first turn's dial is
// in flight: the dial's result is closed when it arrives, no orphan survives, the turn goes on
// without MCP tools, and the agent refuses further turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_7_teardown_during_the_turn_dial_leaves_no_orphan() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("never")]).await;
    let servers = json!({
        "slow": sandbox.server_with_pids("slow", &["--slow-initialize-ms", "1500", "--spawn-descendants", "1"]),
    });
    let mut agent = sandbox.agent(servers, &model);
    let manager = agent.manager().clone();
    let turn = tokio::spawn(async move {
        let result = agent.send_message("hi").await;
        (agent, result)
    });
    let pids = wait_for_pids(&sandbox.pid_file("slow"), 2).await;
    manager.cleanup().await;
    let (mut agent, result) = turn.await.unwrap();
    // The turn went on without the server; the model saw no MCP tool.
    assert!(result.is_ok(), "{result:?}");
    assert!(model.request(0).get("tools").is_none());
    assert_all_dead(&pids).await;
    assert!(matches!(
        agent.send_message("again").await,
        Err(AgentError::Destroyed)
    ));
    agent.destroy().await;
}

// LAZY-1, LIFE-10: 100 agents with 5 servers each in one process start no MCP process until a
// turn runs; one turn starts exactly its agent's 5; destroying all leaves none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_1_hundred_agents_with_five_servers_spawn_nothing_until_a_turn() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![say("one turn")]).await;
    let names = ["s1", "s2", "s3", "s4", "s5"];
    let servers: Map<String, Value> = names
        .iter()
        .map(|name| (name.to_string(), sandbox.server(name, &["--tools", "echo"])))
        .collect();
    let mut agents: Vec<Agent> = (0..100)
        .map(|i| {
            Agent::create(AgentOptions {
                session_id: Some(format!("agent-{i}")),
                ..sandbox.options(Value::Object(servers.clone()), &model)
            })
            .unwrap()
        })
        .collect();
    assert!(
        agents
            .iter()
            .all(|a| a.get_mcp_servers().unwrap().len() == 5)
    );
    // Sync point: no agent's manager has work pending, so nothing can spawn later either.
    assert!(agents.iter().all(|a| a.manager().background_tasks() == 0));
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    assert!(names.iter().all(|n| sandbox.starts(n) == 0));

    let report = agents[42].send_message("go").await.unwrap();
    assert_eq!(report.dialed, 5);
    assert_eq!(sandbox.live_processes().len(), 5);
    assert!(names.iter().all(|n| sandbox.starts(n) == 1));

    for agent in &mut agents {
        agent.destroy().await;
    }
    let gone = eventually(Duration::from_secs(10), || {
        sandbox.live_processes().is_empty()
    })
    .await;
    assert!(gone, "left behind: {:?}", sandbox.live_processes());
}
