//! `cargo run --release -p wave-mcp-bench`: wave-mcp against the alternatives, every figure a
//! ratio of two measurements taken side by side in this run (these machines are noisy; absolute
//! numbers are printed for context only). Method and targets: `docs/performance.md`.
//!
//! Options: `--quick` (fewer repetitions, a smoke run), `--rows 1,3` (only those rows).
//! Hidden modes used by the benchmark itself: `--idle-case CASE --dir DIR` (row 1's children),
//! `--turn-callgrind --model-url URL --dir DIR` (row 4's child under callgrind),
//! `--signin-callgrind --url URL --dials N --home DIR --workdir DIR [--header H]` (row 6c's),
//! `--rss-child` (ours in row 7c), `--relay-url URL` (row 9's bare SSE relay).

mod era;
mod idle;
mod live;
mod peers;
mod readiness;
mod registry_cost;
mod roundtrip;
mod sidecar;
mod signin;
mod tool_search;
mod turn;
mod util;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use util::{fmt_count, fmt_kib, fmt_ratio, fmt_time};

struct Options {
    quick: bool,
    rows: Vec<u32>,
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| -> Option<String> {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).cloned()
    };
    if let Some(case) = value("--idle-case") {
        let dir = PathBuf::from(value("--dir").context("--dir")?);
        return idle::child_main(&case, &dir);
    }
    if args.iter().any(|a| a == "--rss-child") {
        return peers::child_main();
    }
    if let Some(url) = value("--relay-url") {
        return live::relay_main(&url, args.iter().any(|a| a == "--nonblocking-stdout"));
    }
    if args.iter().any(|a| a == "--signin-callgrind") {
        let url = value("--url").context("--url")?;
        let dials = value("--dials").context("--dials")?.parse()?;
        let home = PathBuf::from(value("--home").context("--home")?);
        let workdir = PathBuf::from(value("--workdir").context("--workdir")?);
        return signin::child_main(&url, dials, &home, &workdir, value("--header").as_deref());
    }
    if args.iter().any(|a| a == "--turn-callgrind") {
        let url = value("--model-url").context("--model-url")?;
        let dir = PathBuf::from(value("--dir").context("--dir")?);
        return turn::child_main(&url, &dir);
    }
    let options = Options {
        quick: args.iter().any(|a| a == "--quick"),
        rows: match value("--rows") {
            Some(list) => list
                .split(',')
                .map(|r| r.trim().parse().context("--rows takes numbers 1-10"))
                .collect::<Result<_>>()?,
            None => vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        },
    };
    if let Some(unknown) = args
        .iter()
        .find(|a| a.starts_with("--") && !["--quick", "--rows"].contains(&a.as_str()))
    {
        bail!("unknown option {unknown} (known: --quick, --rows 1,2,3,4,5,6,7,8,9,10)");
    }
    util::build_binaries()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let table = runtime.block_on(run(&options))?;
    println!();
    println!("{}", render(&table));
    Ok(())
}

/// One line of the table.
struct Row {
    id: &'static str,
    figure: String,
    ours: String,
    baseline: String,
    ratio: String,
    target: &'static str,
    verdict: &'static str,
}

/// Row 8b's name of a query half: `tune`, `held`, then `heldN`, the N-th held-out set (from the
/// third on written blind, from the fifth on measured once, after the last ranking change).
fn half_label(half: &str) -> String {
    const ORDINALS: [&str; 10] = [
        "", "", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    ];
    match half {
        "tune" => return "tuning half".into(),
        "held" => return "held-out half".into(),
        _ => {}
    }
    let n: usize = half.trim_start_matches("held").parse().unwrap_or(0);
    let ordinal = ORDINALS.get(n).copied().filter(|o| !o.is_empty());
    let name = ordinal.map_or_else(
        || format!("held-out set {half}"),
        |o| format!("{o} held-out set"),
    );
    match n {
        3 | 4 => format!("{name} (blind)"),
        5.. => format!("{name} (blind, measured once)"),
        _ => name,
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

async fn run(options: &Options) -> Result<Vec<Row>> {
    let quick = options.quick;
    let wanted = |row: u32| options.rows.contains(&row);
    let mut table = Vec::new();
    if wanted(1) {
        eprintln!(
            "row 1: idle cost of {} agents × {} servers",
            idle::AGENTS,
            idle::SERVERS
        );
        let repeats = if quick { 1 } else { 3 };
        let r = tokio::task::spawn_blocking(move || idle::run(repeats)).await??;
        let memory = r.on_demand.rss_kib as f64 / r.none.rss_kib as f64;
        table.push(Row {
            id: "1a",
            figure: format!(
                "idle: MCP processes, {} agents × {} stdio servers",
                idle::AGENTS,
                idle::SERVERS
            ),
            ours: r.on_demand.processes.to_string(),
            baseline: format!("eager: {}", r.eager.processes),
            ratio: format!("{} vs {}", r.on_demand.processes, r.eager.processes),
            target: "0",
            verdict: verdict(r.on_demand.processes == 0),
        });
        table.push(Row {
            id: "1b",
            figure: "idle: RSS of the process tree".into(),
            ours: fmt_kib(r.on_demand.rss_kib),
            baseline: format!("no MCP: {}", fmt_kib(r.none.rss_kib)),
            ratio: fmt_ratio(memory),
            target: "≤ 2× no MCP",
            verdict: verdict(memory <= 2.0),
        });
        table.push(Row {
            id: "",
            figure: String::new(),
            ours: String::new(),
            baseline: format!("eager: {}", fmt_kib(r.eager.rss_kib)),
            ratio: fmt_ratio(r.on_demand.rss_kib as f64 / r.eager.rss_kib as f64),
            target: "",
            verdict: "",
        });
    }
    if wanted(2) {
        eprintln!("row 2: first-turn readiness");
        let repeats = if quick { 2 } else { 7 };
        let r = readiness::run(repeats).await?;
        let ratio = r.ours / r.one;
        table.push(Row {
            id: "2",
            figure: format!(
                "first turn ready, {} servers × {} ms initialize",
                readiness::SERVERS,
                readiness::INIT_MS
            ),
            ours: fmt_time(r.ours),
            baseline: format!("1 server: {}", fmt_time(r.one)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.2× 1 server",
            verdict: verdict(ratio <= 1.2),
        });
        table.push(Row {
            id: "",
            figure: String::new(),
            ours: String::new(),
            baseline: format!("sequential: {}", fmt_time(r.sequential)),
            ratio: fmt_ratio(r.ours / r.sequential),
            target: "",
            verdict: "",
        });
    }
    if wanted(2) {
        eprintln!("row 2c: the spawn registry's write on the dial path");
        let (writes, dials) = if quick { (200, 5) } else { (2000, 30) };
        let r = registry_cost::run(writes, dials).await?;
        table.push(Row {
            id: "2c",
            figure: format!(
                "spawn registry: record + release per stdio dial (median of {})",
                r.writes
            ),
            ours: fmt_time(r.write),
            baseline: format!("1 stdio dial: {}", fmt_time(r.dial)),
            ratio: fmt_ratio(r.write / r.dial),
            target: "(context)",
            verdict: "",
        });
    }
    if wanted(3) {
        eprintln!("row 3: tool-call round trip");
        let calls = if quick { 500 } else { 4000 };
        let r = roundtrip::run(calls).await?;
        for (id, name, t) in [
            ("3a", "stdio", &r.stdio),
            ("3b", "Streamable HTTP", &r.http),
        ] {
            let ratio = t.funnel / t.direct;
            table.push(Row {
                id,
                figure: format!(
                    "tool call via Agent::execute_tool, {name} (median of {})",
                    r.calls
                ),
                ours: format!("{} (p90 {})", fmt_time(t.funnel), fmt_time(t.funnel_p90)),
                baseline: format!(
                    "rmcp call_tool: {} (p90 {})",
                    fmt_time(t.direct),
                    fmt_time(t.direct_p90)
                ),
                ratio: fmt_ratio(ratio),
                target: "≤ 1.05×",
                verdict: verdict(ratio <= 1.05),
            });
            table.push(Row {
                id: "",
                figure: "  the manager's routing alone (McpManager::call_tool)".into(),
                ours: fmt_time(t.manager),
                baseline: String::new(),
                ratio: fmt_ratio(t.manager / t.direct),
                target: "",
                verdict: "",
            });
        }
        let ratio = r.remembered / r.allow_mode;
        table.push(Row {
            id: "3c",
            figure: format!(
                "tool call allowed by a remembered `always` permission (definition hash checked), stdio (median of {})",
                r.calls
            ),
            ours: fmt_time(r.remembered),
            baseline: format!("defaultMode \"allow\": {}", fmt_time(r.allow_mode)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.02×",
            verdict: verdict(ratio <= 1.02),
        });
    }
    if wanted(4) {
        eprintln!("row 4: a no-MCP turn under callgrind");
        match turn::run().await? {
            result @ turn::TurnResult::Counted { .. } => {
                let turn::TurnResult::Counted {
                    turn_ir,
                    replicated_ir,
                    in_turn_ir,
                    permissions_ir,
                    ref found,
                } = result
                else {
                    unreachable!()
                };
                let mcp = result.mcp_ir();
                let bypassed = turn_ir.saturating_sub(mcp);
                let ratio = turn_ir as f64 / bypassed as f64;
                table.push(Row {
                    id: "4",
                    figure: "turn, no MCP server: instructions per turn (callgrind)".into(),
                    ours: fmt_count(turn_ir),
                    baseline: format!("MCP bypassed (estimate): {}", fmt_count(bypassed)),
                    ratio: fmt_ratio(ratio),
                    target: "≤ 1.01×",
                    verdict: verdict(ratio <= 1.01),
                });
                table.push(Row {
                    id: "",
                    figure: format!(
                        "  MCP work/turn: {} replicated, {} in-turn ({})",
                        fmt_count(replicated_ir),
                        fmt_count(in_turn_ir),
                        if found.is_empty() {
                            "inlined".to_string()
                        } else {
                            format!("{} fns", found.len())
                        }
                    ),
                    ours: String::new(),
                    baseline: String::new(),
                    ratio: String::new(),
                    target: "",
                    verdict: "",
                });
                let without = turn_ir.saturating_sub(mcp + permissions_ir);
                table.push(Row {
                    id: "",
                    figure: "  also bypassing the permission-file checks".into(),
                    ours: format!("+{}", fmt_count(permissions_ir)),
                    baseline: format!("bypassed (estimate): {}", fmt_count(without)),
                    ratio: fmt_ratio(turn_ir as f64 / without as f64),
                    target: "",
                    verdict: "",
                });
            }
            turn::TurnResult::Skipped(reason) => table.push(Row {
                id: "4",
                figure: "turn, no MCP server vs MCP bypassed (estimate; callgrind)".into(),
                ours: format!("skipped: {reason}"),
                baseline: String::new(),
                ratio: "-".into(),
                target: "≤ 1.01×",
                verdict: "skipped",
            }),
        }
    }
    if wanted(5) {
        eprintln!("row 5: the sidecar with {} servers", sidecar::SERVERS);
        let requests = if quick { 100 } else { 1000 };
        let r = sidecar::run(requests).await?;
        table.push(Row {
            id: "5a",
            figure: format!(
                "sidecar wave/mcp/servers, {} servers (reply {} KiB)",
                sidecar::SERVERS,
                r.snapshot_bytes / 1024
            ),
            ours: fmt_time(r.latency_200),
            baseline: format!("1 server: {}", fmt_time(r.latency_1)),
            ratio: fmt_ratio(r.latency_200 / r.latency_1),
            target: "(context)",
            verdict: "",
        });
        table.push(Row {
            id: "",
            figure: "  same, all 200 connected".into(),
            ours: fmt_time(r.latency_200_connected),
            baseline: String::new(),
            ratio: fmt_ratio(r.latency_200_connected / r.latency_1),
            target: "",
            verdict: "",
        });
        let rate = r.notifications as f64 / r.push_seconds;
        let mib = r.push_bytes as f64 / 1024.0 / 1024.0 / r.push_seconds;
        let lag = r.push_seconds / r.last_reply_seconds;
        table.push(Row {
            id: "5b",
            figure: format!(
                "sidecar serversChanged, {} connects at once ({} pushed)",
                sidecar::SERVERS,
                r.notifications
            ),
            ours: format!("{rate:.0}/s, {mib:.1} MiB/s"),
            baseline: format!(
                "all connected: pushed {}, last reply {}",
                fmt_time(r.push_seconds),
                fmt_time(r.last_reply_seconds)
            ),
            ratio: fmt_ratio(lag),
            target: "≈ 1× (keeps up)",
            verdict: verdict(lag <= 1.1),
        });
    }
    if wanted(6) {
        eprintln!("row 6: a warm dial of a signed-in server");
        let repeats = if quick { 5 } else { 41 };
        let r = signin::run(repeats).await?;
        let ratio = r.signed_in / r.plain;
        table.push(Row {
            id: "6a",
            figure: format!("warm dial with stored tokens, Streamable HTTP (median of {repeats})"),
            ours: fmt_time(r.signed_in),
            baseline: format!("same header from the entry: {}", fmt_time(r.plain)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.05×",
            verdict: verdict(ratio <= 1.05),
        });
        match r.counted {
            Ok((token, header)) => {
                let ratio = token as f64 / header as f64;
                table.push(Row {
                    id: "6c",
                    figure: "  the same dial's instructions (callgrind, whole client process)"
                        .into(),
                    ours: fmt_count(token),
                    baseline: format!("same header from the entry: {}", fmt_count(header)),
                    ratio: fmt_ratio(ratio),
                    target: "≤ 1.05×",
                    verdict: verdict(ratio <= 1.05),
                });
            }
            Err(reason) => table.push(Row {
                id: "6c",
                figure: "  the same dial's instructions (callgrind)".into(),
                ours: format!("skipped: {reason}"),
                baseline: String::new(),
                ratio: "-".into(),
                target: "≤ 1.05×",
                verdict: "skipped",
            }),
        }
        table.push(Row {
            id: "6b",
            figure: "  requests to the authorization server during those dials".into(),
            ours: r.auth_server_requests.to_string(),
            baseline: String::new(),
            ratio: String::new(),
            target: "0",
            verdict: verdict(r.auth_server_requests == 0),
        });
    }
    if wanted(7) {
        peer_rows(quick, &mut table).await?;
    }
    if wanted(8) {
        tool_search_rows(&mut table, quick).await?;
    }
    if wanted(9) {
        eprintln!("row 9: live turns (first delta, cancel)");
        let r = live::run(if quick { 30 } else { 300 }).await?;
        let ratio = r.delta_sidecar / r.delta_relay;
        table.push(Row {
            id: "9a",
            figure: format!(
                "first SSE chunk -> first wave/session/delta (median of {})",
                r.samples
            ),
            ours: fmt_time(r.delta_sidecar),
            baseline: format!("bare relay: {}", fmt_time(r.delta_relay)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.05×",
            verdict: verdict(ratio <= 1.05),
        });
        let ratio = r.delta_sidecar / r.delta_relay_nonblocking;
        table.push(Row {
            id: "",
            figure: "  the relay writing stdout as the sidecar does (non-blocking)".into(),
            ours: String::new(),
            baseline: format!("bare relay: {}", fmt_time(r.delta_relay_nonblocking)),
            ratio: fmt_ratio(ratio),
            target: "",
            verdict: "",
        });
        let ratio = r.cancel / r.round_trip;
        table.push(Row {
            id: "9b",
            figure: "wave/session/cancel -> server gets notifications/cancelled".into(),
            ours: fmt_time(r.cancel),
            baseline: format!("1 tool round trip: {}", fmt_time(r.round_trip)),
            ratio: fmt_ratio(ratio),
            target: "≤ 2×",
            verdict: verdict(ratio <= 2.0),
        });
    }
    if wanted(10) {
        eprintln!("row 10: first call on a 2026-07-28 server vs the same server on 2025-11-25");
        let repeats = if quick { 5 } else { 41 };
        let r = era::run(repeats, &[]).await?;
        let ratio = r.modern / r.legacy;
        table.push(Row {
            id: "10",
            figure: format!(
                "first call, 2026-07-28 (server/discover), stdio (median of {repeats})"
            ),
            ours: fmt_time(r.modern),
            baseline: format!("2025-11-25 (initialize): {}", fmt_time(r.legacy)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.0×",
            verdict: verdict(ratio <= 1.0),
        });
        eprintln!("row 10b: the same with a server that declares tools.listChanged");
        let r = era::run(repeats, &["--tools", "echo,set_tools"]).await?;
        let ratio = r.modern / r.legacy;
        table.push(Row {
            id: "10b",
            figure: format!(
                "the same, server declares tools.listChanged (2026-07-28 also opens subscriptions/listen; median of {repeats})"
            ),
            ours: fmt_time(r.modern),
            baseline: format!("2025-11-25 (initialize): {}", fmt_time(r.legacy)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.0×",
            verdict: verdict(ratio <= 1.0),
        });
    }
    Ok(table)
}

/// Row 8: tool search (BUD-3, BUD-4).
async fn tool_search_rows(table: &mut Vec<Row>, quick: bool) -> Result<()> {
    eprintln!(
        "row 8a: declared bytes, {} servers × {} tools, search off vs on",
        tool_search::SERVERS,
        tool_search::TOOLS_PER_SERVER
    );
    match tool_search::declared_bytes().await {
        Ok(r) => {
            let ratio = r.on as f64 / r.off as f64;
            table.push(Row {
                id: "8a",
                figure: format!(
                    "tool definitions per request, {} servers × {} tools ({} tools)",
                    tool_search::SERVERS,
                    tool_search::TOOLS_PER_SERVER,
                    r.tools
                ),
                ours: format!("search on: {}", fmt_count(r.on as u64)),
                baseline: format!("search off: {} bytes", fmt_count(r.off as u64)),
                ratio: fmt_ratio(ratio),
                target: "≤ 0.10×",
                verdict: verdict(ratio <= 0.10),
            });
            table.push(Row {
                id: "",
                figure: "  of which search_mcp_tools / the deferred-names message".into(),
                ours: format!(
                    "{} / {}",
                    fmt_count(r.on_tools as u64),
                    fmt_count(r.announcement as u64)
                ),
                baseline: String::new(),
                ratio: String::new(),
                target: "",
                verdict: "",
            });
        }
        Err(e) => table.push(Row {
            id: "8a",
            figure: "tool definitions per request, search on vs off".into(),
            ours: format!("skipped: {e}"),
            baseline: String::new(),
            ratio: String::new(),
            target: "≤ 0.10×",
            verdict: "",
        }),
    }
    eprintln!("row 8b: search hit rate over the recorded catalogs (BUD-7)");
    let rates = tool_search::hit_rate()?;
    eprintln!(
        "row 8b: ranked by {}",
        match rates.by_meaning {
            true => "words and meaning (the embedding model is installed)",
            false => "words only (no embedding model: scripts/install-model.sh)",
        }
    );
    let pct = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    for (half, rate) in &rates.halves {
        let half = half_label(half);
        for miss in &rate.misses {
            eprintln!("  miss: {miss}");
        }
        table.push(Row {
            id: "8b",
            figure: format!(
                "search, {half}: wanted tool in the top 5, {} queries over {} tools of {} real servers",
                rate.queries, rates.catalog, rates.servers
            ),
            ours: format!(
                "{}/{} = {:.1} %",
                rate.hits,
                rate.queries,
                pct(rate.hits, rate.queries) * 100.0
            ),
            baseline: String::new(),
            ratio: String::new(),
            target: "≥ 90 %",
            verdict: verdict(pct(rate.hits, rate.queries) >= 0.90),
        });
        table.push(Row {
            id: "",
            figure: "  of which sharing no word with the tool's name".into(),
            ours: format!(
                "{}/{} = {:.1} %",
                rate.paraphrased_hits,
                rate.paraphrased,
                pct(rate.paraphrased_hits, rate.paraphrased) * 100.0
            ),
            baseline: String::new(),
            ratio: String::new(),
            target: "≥ 80 %",
            verdict: verdict(pct(rate.paraphrased_hits, rate.paraphrased) >= 0.80),
        });
        table.push(Row {
            id: "",
            figure: "  queries no tool answers: nothing found".into(),
            ours: format!("{}/{}", rate.empty, rate.nothing),
            baseline: String::new(),
            ratio: String::new(),
            target: "all",
            verdict: verdict(rate.empty == rate.nothing),
        });
    }
    eprintln!("row 8c: ranking 1,000 tools vs one local tool round trip");
    let r = tool_search::rank_cost(if quick { 100 } else { 1000 }).await?;
    table.push(Row {
        id: "8c",
        figure: format!(
            "search: index + rank {} tools for one query, a set's first search (median)",
            r.tools
        ),
        ours: fmt_time(r.build),
        baseline: format!("1 stdio tool call: {}", fmt_time(r.round_trip)),
        ratio: fmt_ratio(r.build / r.round_trip),
        target: "(context)",
        verdict: "",
    });
    table.push(Row {
        id: "",
        figure: "  a later search of the same set (index kept): rank only".into(),
        ours: fmt_time(r.rank),
        baseline: String::new(),
        ratio: fmt_ratio(r.rank / r.round_trip),
        target: "(context)",
        verdict: "",
    });
    if let (Some(tools), Some(read), Some(query), Some(kib)) =
        (r.embed_tools, r.read_tools, r.embed_query, r.model_kib)
    {
        table.push(Row {
            id: "",
            figure: format!(
                "  of which embedding one query (median); {} new tools once: {} (the next process reads them: {}); the model: +{} MiB resident",
                r.tools,
                fmt_time(tools),
                fmt_time(read),
                kib / 1024
            ),
            ours: fmt_time(query),
            baseline: String::new(),
            ratio: fmt_ratio(query / r.round_trip),
            target: "(context)",
            verdict: "",
        });
    }
    Ok(())
}

/// Row 7: the TypeScript and python SDK clients beside ours (`peers.rs`).
async fn peer_rows(quick: bool, table: &mut Vec<Row>) -> Result<()> {
    let peers = match peers::Peers::locate() {
        Ok(peers) => peers,
        Err(reason) => {
            eprintln!("row 7: skipped: {reason}");
            table.push(Row {
                id: "7",
                figure: "beside the TypeScript and python SDK clients".into(),
                ours: format!("skipped: {reason}"),
                baseline: String::new(),
                ratio: "-".into(),
                target: "≤ 1.0×",
                verdict: "skipped",
            });
            return Ok(());
        }
    };
    eprintln!("row 7a: tool-call round trip beside the SDK clients");
    let calls = if quick { 400 } else { 4000 };
    let r = peers::round_trip(&peers, calls).await?;
    let latency = |l: &peers::Latency| format!("{} (p90 {})", fmt_time(l.median), fmt_time(l.p90));
    for (id, figure, name, theirs) in [
        (
            "7a",
            format!(
                "tool call, stdio: execute_tool vs SDK clients (median of {})",
                r.calls
            ),
            "TS SDK callTool",
            &r.typescript,
        ),
        ("", String::new(), "python SDK call_tool", &r.python),
    ] {
        let ratio = r.ours.median / theirs.median;
        table.push(Row {
            id,
            figure,
            ours: if id.is_empty() {
                String::new()
            } else {
                latency(&r.ours)
            },
            baseline: format!("{name}: {}", latency(theirs)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.0×",
            verdict: verdict(ratio <= 1.0),
        });
    }
    eprintln!("row 7b: 5 slow servers listed beside the SDK clients");
    let repeats = if quick { 2 } else { 7 };
    let r = peers::readiness(&peers, repeats).await?;
    for (id, figure, name, theirs) in [
        (
            "7b",
            format!(
                "{} servers × {} ms initialize listed: first turn vs SDK clients",
                readiness::SERVERS,
                readiness::INIT_MS
            ),
            "TS SDK Promise.all",
            r.typescript,
        ),
        ("", String::new(), "python SDK gather", r.python),
    ] {
        let ratio = r.ours / theirs;
        table.push(Row {
            id,
            figure,
            ours: if id.is_empty() {
                String::new()
            } else {
                fmt_time(r.ours)
            },
            baseline: format!("{name}: {}", fmt_time(theirs)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.0×",
            verdict: verdict(ratio <= 1.0),
        });
    }
    eprintln!("row 7c: RSS of one connection's client side beside the SDK clients");
    let repeats = if quick { 1 } else { 3 };
    let r = peers::rss(&peers, repeats).await?;
    // The verdict: what a process monitor shows of the client side with one connected server.
    for (id, figure, name, theirs) in [
        (
            "7c",
            "RSS of a client process with 1 connected stdio server".to_string(),
            "TS SDK",
            &r.typescript,
        ),
        ("", String::new(), "python SDK", &r.python),
    ] {
        let ratio = r.ours.connected_kib as f64 / theirs.connected_kib as f64;
        table.push(Row {
            id,
            figure,
            ours: if id.is_empty() {
                String::new()
            } else {
                fmt_kib(r.ours.connected_kib)
            },
            baseline: format!("{name}: {}", fmt_kib(theirs.connected_kib)),
            ratio: fmt_ratio(ratio),
            target: "≤ 1.0×",
            verdict: verdict(theirs.connected_kib > 0 && ratio <= 1.0),
        });
    }
    // Context: what connecting added in that process, mostly our code paged in on first use.
    for (figure, name, theirs) in [
        (
            "  what connecting added (Δ RSS, code paged in included)",
            "TS SDK",
            &r.typescript,
        ),
        ("", "python SDK", &r.python),
    ] {
        table.push(Row {
            id: "",
            figure: figure.into(),
            ours: if figure.is_empty() {
                String::new()
            } else {
                fmt_kib_delta(r.ours.delta_kib())
            },
            baseline: format!("{name}: {}", fmt_kib_delta(theirs.delta_kib())),
            ratio: fmt_ratio(r.ours.delta_kib() as f64 / theirs.delta_kib() as f64),
            target: "",
            verdict: "",
        });
    }
    table.push(Row {
        id: "",
        figure: "  of which anonymous (RssAnon Δ, without code paged in)".into(),
        ours: fmt_kib_delta(r.ours.anon_delta_kib),
        baseline: format!(
            "TS SDK: {}, python SDK: {}",
            fmt_kib_delta(r.typescript.anon_delta_kib),
            fmt_kib_delta(r.python.anon_delta_kib)
        ),
        ratio: fmt_ratio(r.ours.anon_delta_kib as f64 / r.typescript.anon_delta_kib as f64),
        target: "",
        verdict: "",
    });
    Ok(())
}

/// A signed RSS difference in MiB, two decimals (these are small).
fn fmt_kib_delta(kib: i64) -> String {
    format!("{:.2} MiB", kib as f64 / 1024.0)
}

fn render(table: &[Row]) -> String {
    let header = Row {
        id: "#",
        figure: "figure".into(),
        ours: "wave-mcp".into(),
        baseline: "side by side".into(),
        ratio: "ratio".into(),
        target: "target",
        verdict: "",
    };
    let cells = |r: &Row| {
        [
            r.id.to_string(),
            r.figure.clone(),
            r.ours.clone(),
            r.baseline.clone(),
            r.ratio.clone(),
            r.target.to_string(),
            r.verdict.to_string(),
        ]
    };
    let all: Vec<[String; 7]> = std::iter::once(&header).chain(table).map(cells).collect();
    let mut widths = [0usize; 7];
    for row in &all {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |row: &[String; 7]| {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&all[0])];
    out.push(format!(
        "|{}|",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    ));
    out.extend(all[1..].iter().map(line));
    out.join("\n")
}
