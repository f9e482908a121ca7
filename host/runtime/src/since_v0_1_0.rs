//! The host side of `wit/since_v0.1.0`, frozen: components built against
//! it keep running. Its meta declares no vocabularies.

crate::protocol::bindings_for_version!("../../wit/since_v0.1.0");

fn vocabularies(_: &mut api::Metadata) -> Vec<seams_model::Vocabulary> {
    Vec::new()
}
