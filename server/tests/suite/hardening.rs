//! TRUST-8 attacks on config edits through the real sidecar: a config file that is a symbolic
//! link to a file elsewhere is never written through.

use serde_json::{Value, json};

use super::lsp_client::*;
use super::support::*;

// TRUST-8: the project `.mcp.json` and the user's `~/.wave/mcp.json` are symbolic links to
// files outside the project and `~/.wave`. `wave/mcp/setToolEnabled` and `wave/mcp/delete` of
// their entries fail with an error naming the link and its target; both targets keep every
// byte, and the links stay links.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_8_config_edits_do_not_write_through_a_symlink() {
    let sandbox = Sandbox::new();
    let project_target = sandbox.path("outside-project.json");
    let user_target = sandbox.path("outside-user.json");
    write_config(&project_target, json!({ "p": sandbox.server(&[]) }));
    write_config(&user_target, json!({ "u": sandbox.server(&[]) }));
    let project_link = sandbox.workdir.join(".mcp.json");
    let user_link = sandbox.home.join(".wave").join("mcp.json");
    std::fs::create_dir_all(user_link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&project_target, &project_link).unwrap();
    std::os::unix::fs::symlink(&user_target, &user_link).unwrap();
    let project_bytes = std::fs::read(&project_target).unwrap();
    let user_bytes = std::fs::read(&user_target).unwrap();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(lists(&listed, "p") && lists(&listed, "u"), "{listed:#}");

    for (name, source, target) in [
        ("p", "project", &project_target),
        ("u", "user", &user_target),
    ] {
        let switch = json!({ "name": name, "source": source, "tool": "echo", "enabled": false });
        let delete = json!({ "name": name, "source": source });
        for (method, params) in [
            ("wave/mcp/setToolEnabled", switch),
            ("wave/mcp/delete", delete),
        ] {
            let error = sidecar.err(method, params).await;
            let message = &error.message;
            assert!(
                message.contains("is a symbolic link to"),
                "{method}: {error:?}"
            );
            assert!(
                message.contains(&target.display().to_string()),
                "{method}: the target is not named: {error:?}"
            );
            let link_name = if source == "project" {
                ".mcp.json"
            } else {
                "mcp.json"
            };
            assert!(message.contains(link_name), "{method}: {error:?}");
            assert!(message.starts_with("cannot "), "{method}: {error:?}");
        }
    }
    assert_eq!(std::fs::read(&project_target).unwrap(), project_bytes);
    assert_eq!(std::fs::read(&user_target).unwrap(), user_bytes);
    assert!(
        project_link
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        user_link
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let listed = sidecar.ok("wave/mcp/servers", json!({})).await;
    assert!(lists(&listed, "p") && lists(&listed, "u"), "{listed:#}");
    sidecar.stop().await;
}
