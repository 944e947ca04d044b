//! `McpManager::read_app`: an app's UI resource read on its server's live connection (APPS-1);
//! what the answer holds is `crate::apps`' to say.

use super::McpManager;
use crate::apps::{self, AppResource};
use crate::error::Error;

impl McpManager {
    /// Reads `server`'s UI resource `uri` (`resources/read` on its live connection): the
    /// content of that URI whose MIME type is `text/html;profile=mcp-app`, as text or base64
    /// blob, with its `_meta.ui` (the content's, else the result's).
    pub async fn read_app(&self, server: &str, uri: &str) -> Result<AppResource, Error> {
        if !uri.starts_with("ui://") {
            let reason = "an app's resource must be a ui:// URI".to_string();
            return Err(apps::resource_error(server, uri, reason));
        }
        let result = self.read_resource(server, uri).await?;
        let result = serde_json::to_value(&result)
            .map_err(|e| apps::resource_error(server, uri, e.to_string()))?;
        apps::app_resource(server, uri, &result)
    }
}
