//! The compiled-component cache: written on first load, used on the next,
//! and a damaged entry is recompiled rather than trusted.

use seams_tests::HOSTILE_WASM;

fn cached_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn a_compiled_component_is_cached_by_hash_and_reused() {
    let cache = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(HOSTILE_WASM).unwrap();
    let model = std::sync::Arc::new(
        seams_model::Model::parse(
            "m.ttl",
            "<urn:seams:test#hostile> <urn:seams:test#behaviour> \"ok\" .",
        )
        .unwrap(),
    );

    let runtime = seams_runtime::Runtime::new(Some(cache.path().to_owned())).unwrap();
    let loaded = runtime.load("hostile.wasm", &bytes).unwrap();
    let files = cached_files(cache.path());
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(loaded.sha256()), "{name}");
    assert!(name.ends_with(".cwasm"), "{name}");
    let first = runtime
        .run(&loaded, &model, &seams_runtime::Limits::default())
        .unwrap();

    // A second runtime (another process, say) loads from the cache.
    let written = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    {
        let again = seams_runtime::Runtime::new(Some(cache.path().to_owned())).unwrap();
        let loaded = again.load("hostile.wasm", &bytes).unwrap();
        assert_eq!(
            std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
            written
        );
        let second = again
            .run(&loaded, &model, &seams_runtime::Limits::default())
            .unwrap();
        assert_eq!(first.outputs, second.outputs);
    }

    // A damaged entry is not trusted: it is compiled again and replaced.
    // (Only once nothing maps it: the cache itself only ever renames.)
    std::fs::write(&files[0], b"garbage").unwrap();
    let third = seams_runtime::Runtime::new(Some(cache.path().to_owned())).unwrap();
    let loaded = third.load("hostile.wasm", &bytes).unwrap();
    assert_ne!(std::fs::read(&files[0]).unwrap(), b"garbage");
    assert_eq!(
        third
            .run(&loaded, &model, &seams_runtime::Limits::default())
            .unwrap()
            .outputs,
        first.outputs
    );
}
