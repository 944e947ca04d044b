//! `subscriptions/listen` of a 2026-07-28 session (SPEC-3): the server's list changes arrive on
//! one long-lived stream instead of `notifications/*/list_changed`, and feed the same refresh
//! paths (BUD-6, PRM-4).

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use crate::connection::ToolsChanged;

/// Opens the subscription and relays each list change until the connection ends (`stop`, or the
/// stream closes). A server that refuses the subscription keeps working without it.
pub(crate) async fn listen(
    peer: Peer<RoleClient>,
    tools_changed: ToolsChanged,
    catalog_changed: ToolsChanged,
    stop: CancellationToken,
) {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed()
        .build();
    let subscription = tokio::select! {
        () = stop.cancelled() => return,
        subscription = peer.listen(filter) => subscription,
    };
    let mut subscription = match subscription {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::info!("the server refused subscriptions/listen: {e}");
            return;
        }
    };
    loop {
        let next = tokio::select! {
            () = stop.cancelled() => break,
            next = subscription.next() => next,
        };
        match next {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => tools_changed(),
            Ok(Some(
                ServerNotification::PromptListChangedNotification(_)
                | ServerNotification::ResourceListChangedNotification(_),
            )) => catalog_changed(),
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(e) => {
                tracing::debug!("subscriptions/listen ended: {e}");
                return;
            }
        }
    }
    let _ = subscription.cancel().await;
}
