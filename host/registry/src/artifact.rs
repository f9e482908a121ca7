//! The Wasm OCI artifact layout (the CNCF TAG Runtime's "Wasm OCI
//! Artifact"): an image manifest whose config is a Wasm config and whose
//! one layer is the component. Building one to publish, and checking one
//! that was pulled; pure.

use std::collections::BTreeMap;

use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::Serialize;

use crate::reference::is_sha256_digest;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The annotation naming the seams protocol a component exports.
pub const PROTOCOL_ANNOTATION: &str = "dev.seams.protocol";

/// A component larger than this is not pulled.
pub const MAX_COMPONENT_BYTES: u64 = 128 << 20;
/// A manifest larger than this is refused.
pub const MAX_MANIFEST_BYTES: usize = 1 << 20;

/// What `seams publish` pushes: a component and what describes it.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The component's bytes.
    pub component: Vec<u8>,
    /// The interfaces it imports, e.g. `wasi:io/streams@0.2.0`.
    pub imports: Vec<String>,
    /// The interfaces it exports, e.g. `seams:generator/generator-api@0.1.0`.
    pub exports: Vec<String>,
    /// Manifest annotations (`org.opencontainers.image.title`, ...).
    pub annotations: BTreeMap<String, String>,
}

/// The Wasm config, with a fixed `created`: the same component publishes
/// to the same digest.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig<'a> {
    created: &'static str,
    architecture: &'static str,
    os: &'static str,
    layer_digests: [&'a str; 1],
    component: ComponentInfo<'a>,
}

#[derive(Serialize)]
struct ComponentInfo<'a> {
    exports: &'a [String],
    imports: &'a [String],
}

/// `sha256:HEX` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", seams_model::sha256_hex(bytes))
}

/// The config blob and the manifest of `artifact`.
pub(crate) fn build(artifact: &Artifact) -> (Vec<u8>, OciImageManifest) {
    let layer_digest = digest_of(&artifact.component);
    let config = serde_json::to_vec(&WasmConfig {
        created: "1970-01-01T00:00:00Z",
        architecture: "wasm",
        os: "wasip2",
        layer_digests: [&layer_digest],
        component: ComponentInfo {
            exports: &artifact.exports,
            imports: &artifact.imports,
        },
    })
    .expect("the config serializes");
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: OciDescriptor {
            media_type: CONFIG_MEDIA_TYPE.to_owned(),
            digest: digest_of(&config),
            size: config.len() as i64,
            ..OciDescriptor::default()
        },
        layers: vec![OciDescriptor {
            media_type: LAYER_MEDIA_TYPE.to_owned(),
            digest: layer_digest,
            size: artifact.component.len() as i64,
            ..OciDescriptor::default()
        }],
        annotations: Some(artifact.annotations.clone()),
        ..OciImageManifest::default()
    };
    (config, manifest)
}

/// The component layer of a pulled manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    pub(crate) digest: String,
    pub(crate) size: u64,
}

/// Checks that `manifest` (its bytes as pulled) is a Wasm component
/// artifact, and gives its layer and annotations. The error says what it
/// is instead.
pub(crate) fn check(manifest: &[u8]) -> Result<(Layer, BTreeMap<String, String>), String> {
    if manifest.len() > MAX_MANIFEST_BYTES {
        return Err(format!(
            "its manifest is {} bytes, more than {MAX_MANIFEST_BYTES}",
            manifest.len()
        ));
    }
    let manifest: OciImageManifest = serde_json::from_slice(manifest)
        .map_err(|e| format!("its manifest is not an OCI image manifest ({e})"))?;
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "its config has media type {}, not {CONFIG_MEDIA_TYPE}: it is not a Wasm component",
            seams_model::input_text::echo(&manifest.config.media_type)
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!(
            "it has {} layers, not the one {LAYER_MEDIA_TYPE} layer of a Wasm component",
            manifest.layers.len()
        ));
    };
    if layer.media_type != LAYER_MEDIA_TYPE {
        return Err(format!(
            "its layer has media type {}, not {LAYER_MEDIA_TYPE}",
            seams_model::input_text::echo(&layer.media_type)
        ));
    }
    if !is_sha256_digest(&layer.digest) {
        return Err(format!(
            "its layer digest {} is not a sha256 digest",
            seams_model::input_text::echo(&layer.digest)
        ));
    }
    let size = u64::try_from(layer.size).unwrap_or(u64::MAX);
    if size > MAX_COMPONENT_BYTES {
        return Err(format!(
            "its component is {size} bytes, more than the {} MiB seams pulls",
            MAX_COMPONENT_BYTES >> 20
        ));
    }
    Ok((
        Layer {
            digest: layer.digest.clone(),
            size,
        },
        manifest.annotations.unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact() -> Artifact {
        Artifact {
            component: b"\0asm\x0d\0\x01\0".to_vec(),
            imports: vec!["wasi:io/streams@0.2.0".into()],
            exports: vec!["seams:generator/generator-api@0.1.0".into()],
            annotations: BTreeMap::from([(
                "org.opencontainers.image.title".to_owned(),
                "htmx".to_owned(),
            )]),
        }
    }

    #[test]
    fn the_same_component_builds_the_same_manifest() {
        let (config, manifest) = build(&artifact());
        let (again, manifest_again) = build(&artifact());
        assert_eq!(config, again);
        assert_eq!(
            serde_json::to_vec(&manifest).unwrap(),
            serde_json::to_vec(&manifest_again).unwrap()
        );
        let bytes = serde_json::to_vec(&manifest).unwrap();
        let (layer, annotations) = check(&bytes).unwrap();
        assert_eq!(layer.digest, digest_of(&artifact().component));
        assert_eq!(annotations["org.opencontainers.image.title"], "htmx");
        let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
        assert_eq!(config["os"], "wasip2");
        assert_eq!(config["layerDigests"][0], layer.digest.as_str());
    }

    #[test]
    fn what_is_not_a_component_is_named() {
        let (_, good) = build(&artifact());
        let with = |change: &dyn Fn(&mut OciImageManifest)| {
            let mut m = good.clone();
            change(&mut m);
            check(&serde_json::to_vec(&m).unwrap()).unwrap_err()
        };
        let cases: Vec<(String, &str)> = vec![
            (
                with(&|m| m.config.media_type = "application/vnd.oci.image.config.v1+json".into()),
                "is not a Wasm component",
            ),
            (with(&|m| m.layers.clear()), "has 0 layers"),
            (
                with(&|m| m.layers.push(m.layers[0].clone())),
                "has 2 layers",
            ),
            (
                with(&|m| m.layers[0].media_type = "application/vnd.oci.image.layer.v1.tar".into()),
                "its layer has media type",
            ),
            (
                with(&|m| m.layers[0].digest = "md5:abc".into()),
                "not a sha256 digest",
            ),
            (
                with(&|m| m.layers[0].size = (MAX_COMPONENT_BYTES + 1) as i64),
                "more than the 128 MiB",
            ),
            (check(b"<html>").unwrap_err(), "not an OCI image manifest"),
            (
                check(&vec![b' '; MAX_MANIFEST_BYTES + 1]).unwrap_err(),
                "more than",
            ),
        ];
        for (error, expected) in cases {
            assert!(error.contains(expected), "{error} lacks {expected}");
        }
    }
}
