//! The sandbox origin of MCP Apps (APPS-2): a loopback HTTP server, on an origin other than the
//! chat page's, that serves the spec's sandbox proxy page once per app view, under a
//! `Content-Security-Policy` header built from the view's UI resource (`_meta.ui.csp`). The page
//! frames that URL; the proxy puts the app's HTML into an inner sandboxed iframe, which inherits
//! the policy, and relays JSON-RPC between the page and the app (ext-apps 2026-01-26, "Sandbox
//! proxy").

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

/// The domains a UI resource declares (`_meta.ui.csp`): each list widens one group of
/// directives; an absent list keeps the restrictive default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    #[serde(default)]
    pub connect_domains: Vec<String>,
    #[serde(default)]
    pub resource_domains: Vec<String>,
    #[serde(default)]
    pub frame_domains: Vec<String>,
    #[serde(default)]
    pub base_uri_domains: Vec<String>,
}

/// The browser features a UI resource asks for (`_meta.ui.permissions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    pub camera: Option<serde_json::Value>,
    pub microphone: Option<serde_json::Value>,
    pub geolocation: Option<serde_json::Value>,
    pub clipboard_write: Option<serde_json::Value>,
}

impl UiPermissions {
    /// The inner iframe's `allow` attribute (Permissions Policy features).
    fn allow_attribute(&self) -> String {
        [
            (self.camera.is_some(), "camera"),
            (self.microphone.is_some(), "microphone"),
            (self.geolocation.is_some(), "geolocation"),
            (self.clipboard_write.is_some(), "clipboard-write"),
        ]
        .iter()
        .filter(|(asked, _)| *asked)
        .map(|(_, feature)| *feature)
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// One view's page: its policy and its inner iframe's `allow`.
#[derive(Debug, Clone)]
struct View {
    policy: String,
    allow: String,
}

/// The sidecar's sandbox origin, started by the first app shown (once per sidecar).
#[derive(Default)]
pub struct LazySandbox(tokio::sync::OnceCell<AppSandbox>);

impl LazySandbox {
    pub async fn get(&self) -> std::io::Result<&AppSandbox> {
        self.0.get_or_try_init(AppSandbox::start).await
    }

    /// Forgets a view's URL; `false` when it was never registered (or the sandbox never ran).
    pub fn forget(&self, url: &str) -> bool {
        self.0.get().is_some_and(|sandbox| sandbox.forget(url))
    }
}

/// The running sandbox server. Dropping it does not stop the server: it lives as long as the
/// sidecar's runtime.
#[derive(Clone)]
pub struct AppSandbox {
    origin: String,
    views: Arc<Mutex<HashMap<String, View>>>,
}

/// The proxy's script, served from the sandbox origin (`script-src 'self'` allows it).
const PROXY_SCRIPT: &str = include_str!("app_sandbox_proxy.js");

impl AppSandbox {
    /// Binds 127.0.0.1 on a free port and serves until the runtime ends.
    pub async fn start() -> std::io::Result<AppSandbox> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address: SocketAddr = listener.local_addr()?;
        let views = Arc::new(Mutex::new(HashMap::new()));
        let router = Router::new()
            .route("/view/{token}", get(view_page))
            .route("/proxy.js", get(proxy_script))
            .with_state(views.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, router).await {
                tracing::warn!("the MCP Apps sandbox server stopped: {e}");
            }
        });
        Ok(AppSandbox {
            origin: format!("http://{address}"),
            views,
        })
    }

    /// The sandbox's origin (`http://127.0.0.1:PORT`): the page allows it in `frame-src`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Registers one view of a UI resource and returns the URL of its proxy page, under a fresh
    /// unguessable token. Domains that are not plain origins are dropped (and logged), never
    /// passed into the policy.
    pub fn register(&self, server: &str, csp: &UiCsp, permissions: &UiPermissions) -> String {
        let token = fresh_token();
        let policy = content_security_policy(server, csp);
        tracing::info!(server, policy, "MCP app view registered");
        let view = View {
            policy,
            allow: permissions.allow_attribute(),
        };
        lock(&self.views).insert(token.clone(), view);
        format!("{}/view/{token}", self.origin)
    }

    /// Forgets a view (its app was torn down): its URL serves nothing from now on.
    pub fn forget(&self, url: &str) -> bool {
        let Some(token) = url
            .strip_prefix(self.origin())
            .and_then(|path| path.strip_prefix("/view/"))
        else {
            return false;
        };
        lock(&self.views).remove(token).is_some()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn fresh_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn view_page(
    State(views): State<Arc<Mutex<HashMap<String, View>>>>,
    Path(token): Path<String>,
) -> Response {
    let Some(view) = lock(&views).get(&token).cloned() else {
        return (StatusCode::NOT_FOUND, "no such app view").into_response();
    };
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><style>html,body{{margin:0;padding:0;\
         height:100%;overflow:hidden;background:transparent}}iframe{{border:0;width:100%;\
         height:100%;display:block}}</style></head><body><script src=\"/proxy.js\" \
         data-allow=\"{}\"></script></body></html>",
        view.allow
    );
    let mut response = page.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) = HeaderValue::from_str(&view.policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

async fn proxy_script() -> Response {
    let mut response = PROXY_SCRIPT.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    response
}

/// The policy of one view, after the spec's template: a restrictive default, widened only by
/// the resource's declared domains, with `object-src 'none'` always. Scripts and workers may
/// also come from `blob:`/`data:` URLs the app builds from its own code (pdf.js in the official
/// PDF example wraps its worker in a `blob:` that imports a `data:` module, and falls back to
/// importing that module in the page), fonts from `data:`; none of them adds network reach:
/// every request stays under `connect-src` and the declared domains.
pub fn content_security_policy(server: &str, csp: &UiCsp) -> String {
    let domains = |list: &[String], directive: &str| -> String {
        list.iter()
            .filter(|domain| {
                let ok = is_origin_pattern(domain);
                if !ok {
                    tracing::warn!(
                        server,
                        directive,
                        domain = domain.as_str(),
                        "MCP app: a declared CSP domain is not an origin; dropped"
                    );
                }
                ok
            })
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let with = |base: &str, extra: String| match extra.is_empty() {
        true => base.to_string(),
        false => format!("{base} {extra}"),
    };
    let or = |extra: String, fallback: &str| match extra.is_empty() {
        true => fallback.to_string(),
        false => extra,
    };
    let resources = domains(&csp.resource_domains, "resourceDomains");
    [
        "default-src 'none'".to_string(),
        with(
            "script-src 'self' 'unsafe-inline' blob: data:",
            resources.clone(),
        ),
        with("style-src 'self' 'unsafe-inline'", resources.clone()),
        with("img-src 'self' data:", resources.clone()),
        with("font-src 'self' data:", resources.clone()),
        with("media-src 'self' data:", resources),
        format!(
            "connect-src {}",
            or(domains(&csp.connect_domains, "connectDomains"), "'none'")
        ),
        format!(
            "frame-src {}",
            or(domains(&csp.frame_domains, "frameDomains"), "'none'")
        ),
        "worker-src 'self' blob: data:".to_string(),
        "object-src 'none'".to_string(),
        format!(
            "base-uri {}",
            or(domains(&csp.base_uri_domains, "baseUriDomains"), "'self'")
        ),
        "form-action 'none'".to_string(),
    ]
    .join("; ")
}

/// `scheme://host[:port][/path]` with scheme http(s)/ws(s), a host of letters, digits, dots and
/// dashes (optionally `*.` first), a numeric or `*` port: nothing that could end a directive or
/// add a keyword.
fn is_origin_pattern(domain: &str) -> bool {
    let Some((scheme, rest)) = domain.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return false;
    }
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let host = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let port_ok = port.is_none_or(|p| {
        p == "*" || (!p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()))
    });
    let path_ok = path
        .chars()
        .all(|c| c.is_ascii_graphic() && !matches!(c, ';' | ',' | '\'' | '"'));
    host_ok && port_ok && path_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    // APPS-2: no CSP metadata gives the spec's restrictive default; a declared domain widens
    // only its own directives; `object-src 'none'` always.
    #[test]
    fn apps_2_policy_is_restrictive_unless_declared() {
        let default = content_security_policy("s", &UiCsp::default());
        assert!(default.contains("default-src 'none'"));
        assert!(default.contains("connect-src 'none'"));
        assert!(default.contains("frame-src 'none'"));
        assert!(default.contains("base-uri 'self'"));
        assert!(default.contains("object-src 'none'"));
        assert!(!default.contains("https:"));
        let declared = content_security_policy(
            "s",
            &UiCsp {
                connect_domains: vec!["https://api.example.com".into()],
                resource_domains: vec!["https://*.cdn.example.com".into()],
                ..UiCsp::default()
            },
        );
        assert!(declared.contains("connect-src https://api.example.com;"));
        assert!(
            declared.contains(
                "script-src 'self' 'unsafe-inline' blob: data: https://*.cdn.example.com;"
            )
        );
        assert!(!declared.contains("connect-src https://*.cdn"));
        assert!(declared.contains("frame-src 'none'"));
    }

    // APPS-2: a declared "domain" that would smuggle a keyword or a new directive is dropped.
    #[test]
    fn apps_2_injected_domains_are_dropped() {
        for bad in [
            "https://a.com; script-src *",
            "'unsafe-eval'",
            "*",
            "https:",
            "data:",
            "javascript://x",
            "https://a.com 'unsafe-eval'",
            "https://a.com,https://b.com",
            "https://",
        ] {
            let policy = content_security_policy(
                "s",
                &UiCsp {
                    connect_domains: vec![bad.into()],
                    ..UiCsp::default()
                },
            );
            assert!(policy.contains("connect-src 'none'"), "{bad}: {policy}");
        }
        assert!(is_origin_pattern("http://localhost:8080"));
        assert!(is_origin_pattern("wss://realtime.example.com"));
        assert!(is_origin_pattern("https://cdn.example.com/lib/"));
    }

    #[test]
    fn apps_2_permissions_become_the_allow_attribute() {
        let permissions = UiPermissions {
            camera: Some(serde_json::json!({})),
            clipboard_write: Some(serde_json::json!({})),
            ..UiPermissions::default()
        };
        assert_eq!(permissions.allow_attribute(), "camera; clipboard-write");
        assert_eq!(UiPermissions::default().allow_attribute(), "");
    }
}
