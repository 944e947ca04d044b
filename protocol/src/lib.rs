//! Wire types shared by the sidecar, the CLI and the IDE clients.
