//! `subscriptions/listen` of a 2026-07-28 session (SPEC-3): the server's list changes arrive on
//! one long-lived stream instead of `notifications/*/list_changed`, and feed the same refresh
//! paths (BUD-6, PRM-4). The stream is opened during the dial, before the tools are listed, so
//! no change between the listing and the subscription is missed.

use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::Subscription;
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use crate::connection::ToolsChanged;

/// Opens the subscription and waits for its acknowledgment, at most `within`. `None` when the
/// server refuses it or does not acknowledge in time: the session works without it.
pub(crate) async fn open(peer: &Peer<RoleClient>, within: Duration) -> Option<Subscription> {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed()
        .build();
    match tokio::time::timeout(within, peer.listen(filter)).await {
        Ok(Ok(subscription)) => Some(subscription),
        Ok(Err(e)) => {
            tracing::info!("the server refused subscriptions/listen: {e}");
            None
        }
        Err(_) => {
            tracing::info!("the server did not acknowledge subscriptions/listen in time");
            None
        }
    }
}

/// Relays each list change of `subscription` until the connection ends (`stop`, or the stream
/// closes).
pub(crate) async fn relay(
    mut subscription: Subscription,
    tools_changed: ToolsChanged,
    catalog_changed: ToolsChanged,
    stop: CancellationToken,
) {
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
    // The cancel goes out through the session, which may be closing too: never wait long.
    let _ = tokio::time::timeout(CANCEL_WAIT, subscription.cancel()).await;
}

/// How long the relay waits to send the subscription's cancel at the end of its connection.
const CANCEL_WAIT: Duration = Duration::from_secs(2);
