//! The protocol versions this host speaks: one bindings module per version
//! (`since_v0_1_0`), each frozen in `wit/since_vX.Y.Z/`.

/// `seams:generator@0.1.0`, spoken by `since_v0_1_0`.
pub(crate) const V0_1_0: &str = "0.1.0";

/// The newest protocol version this host speaks.
pub const PROTOCOL_VERSION: &str = V0_1_0;
