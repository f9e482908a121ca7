//! A component linked for the protocol version it exports: the one place
//! that knows every version's bindings (`since_v0_1_0`, `since_v0_2_0`).

use wasmtime::component::Component;
use wasmtime::{Engine, Store};

use crate::error::GeneratorErrorKind;
use crate::protocol::Exports;
use crate::sandbox::Sandbox;
use crate::versions::{EXPORT_PREFIX, PROTOCOL_VERSIONS, V0_1_0, V0_2_0};

/// A component linked for the version it targets, ready to instantiate.
#[derive(Clone)]
pub(crate) enum Pre {
    V0_1(crate::since_v0_1_0::GeneratorPre<Sandbox>),
    V0_2(crate::since_v0_2_0::GeneratorPre<Sandbox>),
}

impl Pre {
    /// Links `component` for the protocol version it exports.
    pub(crate) fn new(
        engine: &Engine,
        linker: &wasmtime::component::Linker<Sandbox>,
        component: &Component,
    ) -> Result<Pre, GeneratorErrorKind> {
        let version = version_of(engine, component)?;
        let link = |e: wasmtime::Error| GeneratorErrorKind::Link {
            message: format!("{e:#}"),
        };
        let pre = linker.instantiate_pre(component).map_err(link)?;
        Ok(match version {
            V0_1_0 => Pre::V0_1(crate::since_v0_1_0::GeneratorPre::new(pre).map_err(link)?),
            _ => Pre::V0_2(crate::since_v0_2_0::GeneratorPre::new(pre).map_err(link)?),
        })
    }

    /// The protocol version the component targets.
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Pre::V0_1(_) => V0_1_0,
            Pre::V0_2(_) => V0_2_0,
        }
    }

    pub(crate) fn component(&self) -> &Component {
        match self {
            Pre::V0_1(pre) => pre.instance_pre().component(),
            Pre::V0_2(pre) => pre.instance_pre().component(),
        }
    }

    pub(crate) fn instantiate(
        &self,
        store: &mut Store<Sandbox>,
    ) -> wasmtime::Result<Box<dyn Exports>> {
        Ok(match self {
            Pre::V0_1(pre) => Box::new(pre.instantiate(store)?),
            Pre::V0_2(pre) => Box::new(pre.instantiate(store)?),
        })
    }
}

/// The version a component targets, or why it is not a generator this
/// host runs.
fn version_of(engine: &Engine, component: &Component) -> Result<&'static str, GeneratorErrorKind> {
    let exports: Vec<String> = component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let Some(found) = exports.iter().find_map(|e| e.strip_prefix(EXPORT_PREFIX)) else {
        return Err(GeneratorErrorKind::NotAGenerator {
            exports: if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports.join(", ")
            },
        });
    };
    [V0_1_0, V0_2_0]
        .into_iter()
        .find(|v| *v == found)
        .ok_or_else(|| GeneratorErrorKind::UnsupportedVersion {
            found: found.to_owned(),
            supported: PROTOCOL_VERSIONS,
        })
}
