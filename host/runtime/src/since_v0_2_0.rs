//! The host side of `wit/since_v0.2.0`: 0.1.0, and the vocabularies a
//! generator reads in its meta.

crate::protocol::bindings_for_version!("../../wit/since_v0.2.0");

fn vocabularies(m: &mut api::Metadata) -> Vec<seams_model::Vocabulary> {
    std::mem::take(&mut m.vocabularies)
        .into_iter()
        .map(|v| seams_model::Vocabulary {
            namespace: v.namespace,
            terms: v.terms,
            shapes: v.shapes,
        })
        .collect()
}
