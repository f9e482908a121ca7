//! The protocol versions this host speaks, each frozen in
//! `wit/since_vX.Y.Z/`, and the export that names a component's version.

/// `seams:generator@0.1.0`, spoken by `since_v0_1_0`.
pub(crate) const V0_1_0: &str = "0.1.0";

/// `seams:generator@0.2.0`, spoken by `since_v0_2_0`: adds the
/// vocabularies a generator reads to its meta.
pub(crate) const V0_2_0: &str = "0.2.0";

/// The newest protocol version this host speaks: what the SDK builds.
pub const PROTOCOL_VERSION: &str = V0_2_0;

/// Every version this host speaks, oldest first, as errors list them.
pub const PROTOCOL_VERSIONS: &str = "0.1.0 and 0.2.0";

/// The export a generator of any version has, its version after the `@`.
pub(crate) const EXPORT_PREFIX: &str = "seams:generator/generator-api@";
