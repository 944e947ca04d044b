//! Icons of servers and tools (SRV-4), as far as a page may show them: an `https:` URL, or a
//! `data:` URL of a PNG, JPEG, GIF or WebP image under [`MAX_DATA_URL`] bytes. Anything else —
//! SVG (it can carry script), `http:`, `file:`, `javascript:`, a bigger image — is dropped.

use serde::{Deserialize, Serialize};

/// The longest `data:` icon kept, in bytes of its URL (about 48 KiB of image).
pub const MAX_DATA_URL: usize = 64 * 1024;

/// The longest `https:` icon URL kept.
const MAX_HTTPS_URL: usize = 2048;

const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// One icon a page may show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    pub src: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// `WxH` sizes or `any`, as the server wrote them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

/// The icons of `icons` that a page may show, in the server's order.
pub fn safe(icons: Option<&[rmcp::model::Icon]>) -> Vec<Icon> {
    icons
        .unwrap_or_default()
        .iter()
        .filter(|icon| allowed(&icon.src, icon.mime_type.as_deref()))
        .map(|icon| Icon {
            src: icon.src.clone(),
            mime_type: icon.mime_type.clone(),
            sizes: icon.sizes.clone().unwrap_or_default(),
        })
        .collect()
}

fn allowed(src: &str, mime_type: Option<&str>) -> bool {
    let declared_ok =
        mime_type.is_none_or(|m| IMAGE_TYPES.contains(&m.to_ascii_lowercase().as_str()));
    if let Some(rest) = strip_prefix_ignore_case(src, "data:") {
        // `data:image/png;base64,...`: the type is the part before `;` or `,`.
        let media = rest.split([';', ',']).next().unwrap_or_default();
        return src.len() <= MAX_DATA_URL
            && IMAGE_TYPES.contains(&media.to_ascii_lowercase().as_str())
            && declared_ok;
    }
    let Ok(url) = url::Url::parse(src) else {
        return false;
    };
    let svg = url.path().to_ascii_lowercase().ends_with(".svg");
    url.scheme() == "https"
        && url.host().is_some()
        && src.len() <= MAX_HTTPS_URL
        && !svg
        && declared_ok
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn icon(src: &str, mime: Option<&str>) -> rmcp::model::Icon {
        let mut icon = rmcp::model::Icon::new(src);
        icon.mime_type = mime.map(str::to_string);
        icon
    }

    // SRV-4: https and raster data URLs are kept; SVG, other schemes, other types, oversize
    // data and a declared type that is not a raster image are dropped.
    #[test]
    fn srv_4_only_https_and_raster_data_icons_are_kept() {
        let big = format!("data:image/png;base64,{}", "A".repeat(MAX_DATA_URL));
        let icons = [
            icon("https://example.com/logo.png", None),
            icon("data:image/webp;base64,UklGR", Some("image/webp")),
            icon("DATA:IMAGE/PNG;base64,iVBOR", None),
            icon("https://example.com/logo.svg", None),
            icon("https://example.com/logo", Some("image/svg+xml")),
            icon("data:image/svg+xml;base64,PHN2Zz4=", None),
            icon("data:text/html,<script>alert(1)</script>", None),
            icon("http://example.com/logo.png", None),
            icon("file:///etc/passwd", None),
            icon("javascript:alert(1)", None),
            icon(&big, None),
            icon("not a url", None),
        ];
        let kept: Vec<String> = safe(Some(&icons)).into_iter().map(|i| i.src).collect();
        assert_eq!(
            kept,
            [
                "https://example.com/logo.png",
                "data:image/webp;base64,UklGR",
                "DATA:IMAGE/PNG;base64,iVBOR"
            ]
        );
        assert!(safe(None).is_empty());
    }
}
