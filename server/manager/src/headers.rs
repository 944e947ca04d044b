//! An entry's `headers` as HTTP headers, shared by the Streamable HTTP and the legacy SSE dial.

use std::collections::HashMap;

use crate::error::DialError;

/// Checks every `(name, value)` of an entry; the value may be an expanded secret, so an error
/// names only the header.
pub(crate) fn header_map(
    headers: &[(String, String)],
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, DialError> {
    headers
        .iter()
        .map(|(name, value)| {
            let header = http::HeaderName::try_from(name.as_str())
                .map_err(|_| DialError::HeaderName(name.clone()))?;
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|_| DialError::HeaderValue(name.clone()))?;
            Ok((header, value))
        })
        .collect()
}
