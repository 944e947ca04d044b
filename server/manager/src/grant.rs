//! Machine-to-machine sign-in (SPEC-2): the `client_credentials` grant (client secret, or
//! `private_key_jwt` per SEP-1046) and enterprise-managed authorization (SEP-990: the ID token
//! exchanged for an ID-JAG at the identity provider, RFC 8693, then the RFC 7523 JWT bearer
//! grant). No browser: a dial gets its access token itself. Tokens live in this process only
//! (until shortly before they expire); nothing is written to the credential file.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata};
use serde::Deserialize;

use crate::auth::Secret;
use crate::config::MachineGrant;

/// The JWS algorithms `signingAlgorithm` accepts.
pub const ALGORITHMS: [&str; 9] = [
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
];

/// `signingAlgorithm` as a `jsonwebtoken` algorithm.
pub fn algorithm(name: &str) -> Option<jsonwebtoken::Algorithm> {
    use jsonwebtoken::Algorithm::*;
    Some(match name {
        "ES256" => ES256,
        "ES384" => ES384,
        "RS256" => RS256,
        "RS384" => RS384,
        "RS512" => RS512,
        "PS256" => PS256,
        "PS384" => PS384,
        "PS512" => PS512,
        "EdDSA" => EdDSA,
        _ => return None,
    })
}

const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// A token is fetched again this long before it expires.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

type Cache = HashMap<(String, String), (Secret, Instant)>;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn client_id(grant: &MachineGrant) -> &str {
    match grant {
        MachineGrant::ClientSecret { client_id, .. }
        | MachineGrant::PrivateKeyJwt { client_id, .. }
        | MachineGrant::JwtBearer { client_id, .. } => client_id,
    }
}

/// An access token for the server at `url`, from this process's cache or fetched with `grant`.
/// The error is one line in words naming the step that failed; it never carries a secret.
pub(crate) async fn access_token(
    url: &str,
    grant: &MachineGrant,
    scopes: &[String],
) -> Result<Secret, String> {
    let key = (url.to_string(), client_id(grant).to_string());
    if let Some((token, until)) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key)
        && Instant::now() < *until
    {
        return Ok(token.clone());
    }
    let metadata = discover(url).await?;
    let response = fetch(url, grant, scopes, &metadata).await?;
    let lifetime = Duration::from_secs(response.expires_in.unwrap_or(3600));
    let token = Secret::new(response.access_token);
    let until = Instant::now() + lifetime.saturating_sub(EXPIRY_MARGIN);
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (token.clone(), until));
    Ok(token)
}

/// The authorization server's metadata (RFC 9728, then RFC 8414 / OpenID discovery).
async fn discover(url: &str) -> Result<AuthorizationMetadata, String> {
    let manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("cannot prepare sign-in: {e}"))?;
    let resolution = manager
        .resolve_metadata()
        .await
        .map_err(|e| format!("cannot discover the authorization server: {e}"))?;
    let endpoint = url::Url::parse(&resolution.metadata.token_endpoint)
        .map_err(|e| format!("the authorization server names a bad token endpoint: {e}"))?;
    if endpoint.scheme() != "https" && !crate::login::is_loopback(&endpoint) {
        return Err(format!(
            "the token endpoint `{endpoint}` is not https: only https, or http on the loopback interface, may carry credentials"
        ));
    }
    Ok(resolution.metadata)
}

async fn fetch(
    url: &str,
    grant: &MachineGrant,
    scopes: &[String],
    metadata: &AuthorizationMetadata,
) -> Result<TokenResponse, String> {
    let resource = crate::auth::canonical_url(url)?;
    // RFC 7523bis: the audience of an assertion is the authorization server's issuer.
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let mut form: Vec<(&str, String)> = Vec::new();
    let mut basic = None;
    match grant {
        MachineGrant::ClientSecret {
            client_id,
            client_secret,
        } => {
            form.push(("grant_type", "client_credentials".into()));
            let methods = metadata
                .additional_fields
                .get("token_endpoint_auth_methods_supported")
                .and_then(|v| v.as_array());
            let post_only = methods.is_some_and(|m| {
                m.iter().any(|v| v == "client_secret_post")
                    && !m.iter().any(|v| v == "client_secret_basic")
            });
            if post_only {
                form.push(("client_id", client_id.clone()));
                form.push(("client_secret", client_secret.expose().to_string()));
            } else {
                basic = Some((client_id.clone(), client_secret.clone()));
            }
        }
        MachineGrant::PrivateKeyJwt {
            client_id,
            private_key_path,
            signing_algorithm,
        } => {
            form.push(("grant_type", "client_credentials".into()));
            form.push(("client_id", client_id.clone()));
            form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.into()));
            let assertion =
                client_assertion(client_id, private_key_path, signing_algorithm, &audience)?;
            form.push(("client_assertion", assertion));
        }
        MachineGrant::JwtBearer {
            client_id,
            client_secret,
            idp_issuer,
            idp_token_endpoint,
            idp_client_id,
            id_token,
        } => {
            let id_jag = exchange_id_token(
                idp_issuer,
                idp_token_endpoint,
                idp_client_id,
                id_token,
                &audience,
                &resource,
                scopes,
            )
            .await?;
            form.push(("grant_type", JWT_BEARER.into()));
            form.push(("assertion", id_jag.expose().to_string()));
            basic = Some((client_id.clone(), client_secret.clone()));
        }
    }
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    form.push(("resource", resource));
    post_form(&metadata.token_endpoint, &form, basic, "the token endpoint").await
}

/// RFC 8693 at the identity provider: the user's ID token for an ID-JAG meant for `audience`.
async fn exchange_id_token(
    issuer: &str,
    token_endpoint: &str,
    client_id: &str,
    id_token: &Secret,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Result<Secret, String> {
    let endpoint = url::Url::parse(token_endpoint)
        .map_err(|e| format!("oauth.idp.tokenEndpoint `{token_endpoint}`: {e}"))?;
    if endpoint.scheme() != "https" && !crate::login::is_loopback(&endpoint) {
        return Err(format!(
            "oauth.idp.tokenEndpoint `{endpoint}` is not https: only https, or http on the loopback interface, may carry credentials"
        ));
    }
    let mut form: Vec<(&str, String)> = vec![
        ("grant_type", TOKEN_EXCHANGE.into()),
        ("requested_token_type", ID_JAG_TYPE.into()),
        ("subject_token", id_token.expose().to_string()),
        ("subject_token_type", ID_TOKEN_TYPE.into()),
        ("audience", audience.to_string()),
        ("resource", resource.to_string()),
        ("client_id", client_id.to_string()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let what = format!("the identity provider {issuer}");
    let response = post_form(token_endpoint, &form, None, &what).await?;
    Ok(Secret::new(response.access_token))
}

/// A signed client assertion (RFC 7523 §2.2) for `private_key_jwt`.
fn client_assertion(
    client_id: &str,
    key_path: &std::path::Path,
    algorithm_name: &str,
    audience: &str,
) -> Result<String, String> {
    let algorithm = algorithm(algorithm_name)
        .ok_or_else(|| format!("oauth.signingAlgorithm: unknown algorithm \"{algorithm_name}\""))?;
    let pem = std::fs::read(key_path).map_err(|e| {
        format!(
            "cannot read oauth.privateKeyPath {}: {e}",
            key_path.display()
        )
    })?;
    use jsonwebtoken::Algorithm::*;
    let key = match algorithm {
        ES256 | ES384 => jsonwebtoken::EncodingKey::from_ec_pem(&pem),
        EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(&pem),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(&pem),
    }
    .map_err(|e| {
        format!(
            "oauth.privateKeyPath {}: not a PEM {algorithm_name} private key ({e})",
            key_path.display()
        )
    })?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let jti: String = {
        use sha2::Digest;
        let seed = format!("{client_id}{now}{:?}{}", Instant::now(), std::process::id());
        let digest = sha2::Sha256::digest(seed.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    };
    let claims = serde_json::json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + 300, "jti": jti,
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm), &claims, &key)
        .map_err(|e| format!("cannot sign the client assertion: {e}"))
}

/// POSTs a token request; an error answer is reported with its `error` and description.
async fn post_form(
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(String, Secret)>,
    what: &str,
) -> Result<TokenResponse, String> {
    let body = {
        let mut serializer = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in form {
            serializer.append_pair(k, v);
        }
        serializer.finish()
    };
    let mut request = reqwest::Client::new()
        .post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .timeout(HTTP_TIMEOUT)
        .body(body);
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(enc(&id), Some(enc(secret.expose())));
    }
    let response = request
        .send()
        .await
        .map_err(|e| format!("cannot reach {what}: {}", e.without_url()))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| format!("{what} sent no readable answer: {}", e.without_url()))?;
    if !status.is_success() {
        let detail = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .map(|v| {
                let error = v["error"].as_str().unwrap_or("error").to_string();
                match v["error_description"].as_str() {
                    Some(d) => format!("{error}: {d}"),
                    None => error,
                }
            })
            .unwrap_or_else(|| format!("HTTP {status}"));
        return Err(format!("{what} refused the token request ({detail})"));
    }
    serde_json::from_str(&text).map_err(|_| format!("{what} answered without an `access_token`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throwaway P-256 key made for this test only (openssl ecparam; pkcs8).
    const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgr873Z5wIymICshjH
n06h1Xb5NzGAtrCoXKsVxriicgKhRANCAAR8PD8zKOYqvrc4KERMyqe/c+DvdHgV
0L3QG50ZuUijI0Xkal5F3KtbtYxRiPFfN84U1C13GobdItsD1JdRNXZ5
-----END PRIVATE KEY-----
";
    const TEST_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfDw/MyjmKr63OChETMqnv3Pg73R4
FdC90BudGblIoyNF5GpeRdyrW7WMUYjxXzfOFNQtdxqG3SLbA9SXUTV2eQ==
-----END PUBLIC KEY-----
";

    // SPEC-2 (SEP-1046, RFC 7523 §3): the private_key_jwt assertion verifies with the public
    // key and carries iss = sub = client id, the authorization server as audience, an expiry
    // and a jti; a key that is not PEM is an error naming the field.
    #[test]
    fn spec_2_private_key_jwt_assertion_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("client.pem");
        std::fs::write(&key, TEST_KEY).unwrap();
        let jwt = client_assertion("machine", &key, "ES256", "https://as.example").unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&["https://as.example"]);
        validation.set_issuer(&["machine"]);
        let public = jsonwebtoken::DecodingKey::from_ec_pem(TEST_PUBLIC.as_bytes()).unwrap();
        let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &public, &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["sub"], "machine");
        assert!(claims["jti"].as_str().is_some_and(|j| j.len() == 64));
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64());

        std::fs::write(&key, "not a key").unwrap();
        let error = client_assertion("machine", &key, "ES256", "https://as.example").unwrap_err();
        assert!(
            error.starts_with("oauth.privateKeyPath ")
                && error.contains("not a PEM ES256 private key"),
            "{error}"
        );
        let missing = dir.path().join("gone.pem");
        let error = client_assertion("machine", &missing, "ES256", "x").unwrap_err();
        assert!(
            error.starts_with("cannot read oauth.privateKeyPath"),
            "{error}"
        );
    }
}
