//! Sign-in credentials of remote servers (AUTH-3, AUTH-4, AUTH-6): the credential file
//! `~/.wave/mcp-credentials.json`, rmcp's [`CredentialStore`] over one of its entries, and the
//! authorized HTTP client a dial uses.
//!
//! The file maps a server's canonical URL to rmcp's [`StoredCredentials`] (client id, tokens,
//! scopes) plus what a later dial needs without asking the authorization server anything: its
//! metadata, the redirect URI the client was registered with, and a configured client secret.
//! Every write is a read-merge-write under `mcp-credentials.json.lock`, replaced atomically,
//! mode 0600 in a 0700 directory. Refreshes hold `mcp-credentials.json.refresh.lock` from reading
//! the refresh token to saving the rotated one, so two processes never spend it twice.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, CredentialRefreshGuard,
    CredentialStore, OAuthClientConfig, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRequest,
    StoredCredentials, default_oauth_http_client,
};
use serde::{Deserialize, Serialize};

use crate::config::OAuthSettings;
use crate::files::{self, Stamp};

/// A secret value (client secret, token): `Debug` and `Display` print `***` (AUTH-6).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

const FORMAT_VERSION: u32 = 1;

/// `~/.wave/mcp-credentials.json`.
pub fn credentials_path(home: &Path) -> PathBuf {
    home.join(".wave").join("mcp-credentials.json")
}

/// The key of a server in the credential file: its URL without fragment, scheme and host in
/// lower case, default port dropped (the "canonical server URI" of the MCP authorization spec).
pub fn canonical_url(url: &str) -> Result<String, String> {
    let mut parsed =
        url::Url::parse(url).map_err(|e| format!("`{url}` is not a valid URL: {e}"))?;
    parsed.set_fragment(None);
    Ok(parsed.to_string())
}

/// One server's stored sign-in.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    pub credentials: StoredCredentials,
    /// The authorization server's metadata, so a dial or refresh needs no discovery (AUTH-3).
    pub metadata: AuthorizationMetadata,
    /// The redirect URI the client id was registered with; a later sign-in reuses both.
    pub redirect_uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes a `403 insufficient_scope` asked for that the stored token lacks: the next
    /// sign-in requests them with the granted ones (SPEC-2 step-up).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_scopes: Vec<String>,
    /// Sign-ins made for a step-up since the last one that was not (at most
    /// [`MAX_STEP_UPS`]: a server that keeps refusing does not loop the user through sign-in).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub step_ups: u32,
}

/// Most sign-ins in a row asked for by `403 insufficient_scope` (SPEC-2).
pub(crate) const MAX_STEP_UPS: u32 = 3;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Records a `403 insufficient_scope` of the server at `url` asking for `scopes`: the stored
/// sign-in keeps them as pending for the next `login`. Returns whether signing in again may
/// help (false after [`MAX_STEP_UPS`] step-up sign-ins, or with no stored sign-in).
pub(crate) fn record_step_up(path: &Path, url: &str, scopes: &[String]) -> Result<bool, String> {
    let key = canonical_url(url)?;
    update(path, |servers| match servers.get_mut(&key) {
        Some(record) => {
            for scope in scopes {
                if !record.pending_scopes.contains(scope) {
                    record.pending_scopes.push(scope.clone());
                }
            }
            record.step_ups < MAX_STEP_UPS
        }
        None => true,
    })
}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("credentials", &self.credentials)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct Disk {
    version: u32,
    #[serde(default)]
    servers: BTreeMap<String, Record>,
}

/// Every record of the file; a missing file has none. A file that cannot be read or parsed is
/// an error naming it: it is never discarded or overwritten.
pub(crate) fn read_all(path: &Path) -> Result<BTreeMap<String, Record>, String> {
    let disk: Option<Disk> = files::read_versioned(
        path,
        FORMAT_VERSION,
        "credential file",
        "fix or remove it and sign in again",
    )?;
    Ok(disk.map(|disk| disk.servers).unwrap_or_default())
}

/// The servers (canonical URLs) with stored credentials.
pub(crate) fn signed_in_keys(path: &Path) -> Result<HashSet<String>, String> {
    Ok(read_all(path)?.into_keys().collect())
}

pub(crate) fn load(path: &Path, key: &str) -> Result<Option<Record>, String> {
    Ok(read_all(path)?.remove(key))
}

/// Read-merge-write of the file under its lock: only `key`'s record changes.
pub(crate) fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut BTreeMap<String, Record>) -> T,
) -> Result<T, String> {
    let io = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    files::ensure_parent(path, true).map_err(io)?;
    let _lock = files::lock(&files::sibling(path, ".lock")).map_err(io)?;
    let mut servers = read_all(path)?;
    let result = change(&mut servers);
    let mut json = serde_json::to_vec_pretty(&Disk {
        version: FORMAT_VERSION,
        servers,
    })
    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    json.push(b'\n');
    files::write_atomic(path, &json, true).map_err(io)?;
    Ok(result)
}

/// Runs blocking file work off the async runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(AuthError::CredentialStoreError)
}

/// What identifies one version of the credential file: a write replaces it (new inode).
/// The file's records as last read, per path, with the version they were read at.
type Seen = HashMap<PathBuf, (Stamp, Arc<BTreeMap<String, Record>>)>;

/// Every record of the file, reread only when it changed since the last read in this process
/// (one `stat` otherwise): a refresh or sign-in by another process is seen at once.
fn read_all_cached(path: &Path) -> Result<Arc<BTreeMap<String, Record>>, String> {
    static SEEN: OnceLock<std::sync::Mutex<Seen>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let now = Stamp::of(path);
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    if let (Some(now), Some((at, records))) = (now, seen.get(path))
        && now == *at
    {
        return Ok(records.clone());
    }
    let records = Arc::new(read_all(path)?);
    match now {
        Some(now) => drop(seen.insert(path.to_path_buf(), (now, records.clone()))),
        None => drop(seen.remove(path)),
    }
    Ok(records)
}

/// rmcp's view of one entry of the credential file (rmcp loads it before every request).
#[derive(Clone)]
pub(crate) struct FileStore {
    path: Arc<PathBuf>,
    key: Arc<str>,
}

impl FileStore {
    pub(crate) fn new(path: &Path, key: &str) -> FileStore {
        FileStore {
            path: Arc::new(path.to_path_buf()),
            key: key.into(),
        }
    }

    /// The entry as the file holds it now. The file is small: read in place.
    fn record(&self) -> Result<Option<Record>, String> {
        Ok(read_all_cached(&self.path)?.get(&*self.key).cloned())
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        // rmcp loads before every request of a dial: clone the credentials only, not the
        // whole record with its metadata (bench row 6a).
        let records = read_all_cached(&self.path).map_err(AuthError::CredentialStoreError)?;
        Ok(records.get(&*self.key).map(|r| r.credentials.clone()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let (path, key) = (self.path.clone(), self.key.clone());
        blocking(move || {
            update(&path, |servers| match servers.get_mut(&*key) {
                Some(record) => {
                    record.credentials = credentials;
                    Ok(())
                }
                // Signed out meanwhile (another process): do not bring the entry back.
                None => Err(format!("the sign-in for {key} was removed")),
            })?
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let (path, key) = (self.path.clone(), self.key.clone());
        blocking(move || update(&path, |servers| drop(servers.remove(&*key)))).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = self.path.clone();
        let lock = blocking(move || {
            let lock_path = files::sibling(&path, ".refresh.lock");
            files::ensure_parent(&path, true)
                .and_then(|()| files::lock(&lock_path))
                .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))
        })
        .await?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

/// The HTTP client a dial of `url` uses: with stored credentials, rmcp's [`AuthClient`] around
/// `http`, which sends the access token, refreshes it once when it has expired or is rejected
/// (under the refresh lock) and stores the rotated tokens. `None` when nothing is stored: the dial goes
/// out without a token and a 401 makes the server `needs-auth`. Building it sends nothing.
pub(crate) async fn authorized_client<C>(
    path: &Path,
    url: &str,
    settings: &OAuthSettings,
    http: C,
) -> Result<Option<AuthClient<C>>, String> {
    let key = canonical_url(url)?;
    let store = FileStore::new(path, &key);
    let Some(record) = store.record()? else {
        return Ok(None);
    };
    // Shared clients: building a reqwest client (TLS roots and all) per dial would make a
    // signed-in dial cost twice a plain one. The OAuth client talks only to the token endpoint
    // of the stored metadata, written by a sign-in that checked it.
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, oauth_http())
        .await
        .map_err(|e| format!("sign-in: {e}"))?;
    manager.set_metadata(record.metadata.clone());
    manager.set_credential_store(store);
    let mut client = OAuthClientConfig::new(&record.credentials.client_id, &record.redirect_uri);
    let secret = settings
        .client_secret
        .as_ref()
        .map(|s| s.expose().to_string())
        .or(record.client_secret.clone());
    if let Some(secret) = secret {
        client = client.with_client_secret(secret);
    }
    manager
        .configure_client(client)
        .map_err(|e| format!("sign-in: {e}"))?;
    Ok(Some(AuthClient::new(http, manager)))
}

/// The one HTTP client of Streamable HTTP connections, signed in or not (cheap to clone). Set
/// up as rmcp's own default: no idle pooling (a reused connection whose last body was not read
/// to the end stalls ~40 ms on delayed ACKs), and only same-origin 307/308 redirects, which
/// keep the method and body.
pub(crate) fn mcp_http() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let same_origin = reqwest::redirect::Policy::custom(|attempt| {
                let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
                let first = attempt.previous().first().map(url::Url::origin);
                let same = first.is_some_and(|origin| origin == attempt.url().origin());
                if keeps_body && same && attempt.previous().len() < 10 {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            });
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(same_origin)
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// The one client for refreshes: rmcp's default OAuth client (timeouts, redirect policy), built
/// on its first request. Building it loads the system's TLS roots (about 39 million
/// instructions, bench row 6c), which a warm dial with a valid token never needs.
fn oauth_http() -> Arc<dyn OAuthHttpClient> {
    static CLIENT: OnceLock<Arc<dyn OAuthHttpClient>> = OnceLock::new();
    CLIENT
        .get_or_init(|| Arc::new(LazyOAuthHttp::default()))
        .clone()
}

/// rmcp's default OAuth HTTP client, made when the first request goes out.
#[derive(Default)]
struct LazyOAuthHttp {
    client: OnceLock<Result<Box<dyn OAuthHttpClient>, String>>,
}

impl OAuthHttpClient for LazyOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let client = self.client.get_or_init(|| {
            default_oauth_http_client()
                .map(|c| Box::new(c) as Box<dyn OAuthHttpClient>)
                .map_err(|e| format!("sign-in: cannot set up the HTTP client: {e}"))
        });
        match client {
            Ok(client) => client.execute(request),
            Err(reason) => {
                let reason = reason.clone();
                Box::pin(async move { Err(reason.into()) })
            }
        }
    }
}
