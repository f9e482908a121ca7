//! The compiled-component cache: written on first load, used on the next;
//! a damaged, foreign or exposed entry is recompiled rather than trusted, a
//! directory others can write is not used, and old entries go. Beside it,
//! the compiled functions: another component with the same code compiles
//! none of it again.

use seams_tests::HOSTILE_WASM;

/// The files in `dir` named `*.extension`, sorted.
fn files_of(dir: &std::path::Path, extension: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .collect();
    files.sort();
    files
}

/// The compiled components in `dir`.
fn cached_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    files_of(dir, "cwasm")
}

/// A model on which the hostile generator behaves.
fn model() -> std::sync::Arc<seams_model::Model> {
    std::sync::Arc::new(
        seams_model::Model::parse(
            "m.ttl",
            "<urn:seams:test#hostile> <urn:seams:test#behaviour> \"ok\" .",
        )
        .unwrap(),
    )
}

#[test]
fn a_compiled_component_is_cached_by_hash_and_reused() {
    let cache = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(HOSTILE_WASM).unwrap();
    let model = model();

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
    replace(&files[0], b"garbage");
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

/// Puts `bytes` at `path` as a new file renamed over the old one, as the
/// cache itself does. Writing the old file in place would truncate it
/// under a run that may still map it: a run's thread reports its outcome
/// and then drops its store, and with it, when the caller has dropped its
/// runtime, the component mapped from the entry, whose unwind tables
/// wasmtime reads as it goes (SIGBUS on a truncated file, 6 times in 60
/// runs of the test above when it wrote in place).
fn replace(path: &std::path::Path, bytes: &[u8]) {
    let new = path.with_extension("new");
    std::fs::write(&new, bytes).unwrap();
    std::fs::rename(&new, path).unwrap();
}

/// A runtime on `cache` loads the hostile component and runs it; gives the
/// outputs.
fn load_and_run(cache: &std::path::Path) -> Vec<seams_runtime::Output> {
    load_and_run_bytes(cache, &std::fs::read(HOSTILE_WASM).unwrap())
}

/// A runtime on `cache` loads the component `bytes` and runs it; gives the
/// outputs.
fn load_and_run_bytes(cache: &std::path::Path, bytes: &[u8]) -> Vec<seams_runtime::Output> {
    let model = model();
    let runtime = seams_runtime::Runtime::new(Some(cache.to_owned())).unwrap();
    let loaded = runtime.load("hostile.wasm", bytes).unwrap();
    runtime
        .run(&loaded, &model, &seams_runtime::Limits::default())
        .unwrap()
        .outputs
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_cache_trusts_no_entry_it_cannot_vouch_for() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("components");
    let expected = load_and_run(&dir);
    assert_eq!(mode(&dir), 0o700, "created private");
    let entry = cached_files(&dir).remove(0);
    assert_eq!(mode(&entry), 0o600);
    let good = std::fs::read(&entry).unwrap();
    let payload = &good[..good.len() - 40];
    let trailer = &good[good.len() - 40..];
    assert!(trailer.starts_with(b"seamsc3\n"), "the format");
    assert_eq!(
        &trailer[8..],
        blake3::hash(payload).as_bytes(),
        "a trailer with the blake3 hash of the bytes before it"
    );
    assert!(
        payload.starts_with(b"\x7fELF"),
        "the serialized component first, for wasmtime to map"
    );

    // An entry of the second format (the same hash as a header), not
    // trusted for a trailer it does not have.
    let mut second = b"seamsc2\n".to_vec();
    second.extend_from_slice(blake3::hash(payload).as_bytes());
    second.extend_from_slice(payload);
    // A byte of the component changed under a trailer that no longer
    // matches it.
    let mut tampered = good.clone();
    tampered[payload.len() / 2] ^= 0xff;
    // Cut short: the trailer is gone.
    let short = good[..30].to_vec();
    for (bad, what) in [
        (second, "a format-2 entry"),
        (tampered, "a tampered entry"),
        (short, "a truncated entry"),
    ] {
        replace(&entry, &bad);
        assert_eq!(load_and_run(&dir), expected, "{what}");
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            good,
            "{what} is compiled again and replaced by what seams writes"
        );
    }

    // Seams's own bytes behind a link: not followed, compiled again.
    let elsewhere = cache.path().join("elsewhere.cwasm");
    std::fs::write(&elsewhere, &good).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
    assert_eq!(load_and_run(&dir), expected);
    assert!(
        !std::fs::symlink_metadata(&entry).unwrap().is_symlink(),
        "the link is replaced by an entry seams wrote"
    );

    // Seams's own bytes, but a file others may write: not trusted.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(load_and_run(&dir), expected);
    assert_eq!(mode(&entry), 0o600, "compiled again and replaced");

    // A directory others may write is not used at all.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::remove_file(&entry).unwrap();
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    assert_eq!(load_and_run(&dir), expected);
    assert_eq!(listing(), before, "nothing written to a shared directory");
}

#[test]
fn old_entries_are_evicted() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    std::fs::create_dir_all(dir).unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    for i in 0..40 {
        let path = dir.join(format!("{i:064x}-0000000000000000.cwasm"));
        let file = std::fs::File::create(&path).unwrap();
        file.set_modified(old + std::time::Duration::from_secs(i))
            .unwrap();
    }
    load_and_run(dir);
    let files = cached_files(dir);
    assert_eq!(files.len(), 32, "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| !f.ends_with(format!("{:064x}-0000000000000000.cwasm", 0))),
        "the oldest went first"
    );
    assert_eq!(
        files
            .iter()
            .filter(|f| {
                let bytes = std::fs::read(f).unwrap();
                bytes.len() > 40 && bytes[bytes.len() - 40..].starts_with(b"seamsc3\n")
            })
            .count(),
        1,
        "the new entry stays"
    );
}

/// `bytes` with a custom section named `name` appended: another component
/// (another sha256) with the same code.
fn with_custom_section(bytes: &[u8], name: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out.push(if n == 0 { byte } else { byte | 0x80 });
            if n == 0 {
                break;
            }
        }
    }
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(b"payload");
    let mut out = bytes.to_vec();
    out.push(0);
    leb(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

/// How many compiled functions the segment at `path` holds.
fn functions_in(path: &std::path::Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    let payload = &bytes[..bytes.len() - 40];
    let (mut at, mut count) = (0, 0);
    while at < payload.len() {
        let len = u32::from_le_bytes(payload[at + 32..at + 36].try_into().unwrap());
        at += 36 + len as usize;
        count += 1;
    }
    count
}

#[test]
fn another_component_with_the_same_code_compiles_little_of_it_again() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let first = std::fs::read(HOSTILE_WASM).unwrap();
    let expected = load_and_run_bytes(dir, &first);
    let segments = files_of(dir, "functions");
    assert_eq!(segments.len(), 1, "what the compile made, kept");
    assert_eq!(mode(&segments[0]), 0o600);
    let all = functions_in(&segments[0]);
    assert!(all > 100, "{all} functions");

    // Its functions come from the cache: the compile adds few. (Not none:
    // wasmtime numbers some functions' IR differently from one process to
    // the next, and Cranelift's key hashes the IR: the same machine code
    // under another key.)
    let second = with_custom_section(&first, "another");
    assert_eq!(load_and_run_bytes(dir, &second), expected);
    assert_eq!(cached_files(dir).len(), 2, "another component");
    let added: usize = files_of(dir, "functions")
        .iter()
        .filter(|p| **p != segments[0])
        .map(|p| functions_in(p))
        .sum();
    assert!(added * 4 < all, "{added} of {all} compiled again");

    // A segment that is not as seams wrote it is not used: the next
    // compile makes its functions again, and the run is the same.
    let good = std::fs::read(&segments[0]).unwrap();
    let mut tampered = good.clone();
    tampered[good.len() / 2] ^= 0xff;
    for segment in files_of(dir, "functions") {
        replace(&segment, &tampered);
    }
    let third = with_custom_section(&first, "a third");
    assert_eq!(load_and_run_bytes(dir, &third), expected);
    let remade = files_of(dir, "functions")
        .iter()
        .filter(|p| std::fs::read(p).unwrap() != tampered)
        .map(|p| functions_in(p))
        .max()
        .unwrap_or(0);
    assert!(remade * 4 > all * 3, "{remade} of {all} compiled again");

    // A segment forged whole, by someone who could write the directory:
    // its layout and hash right, every function's code cut to nothing. A
    // compile that cannot take a function back costs a compile, never the
    // process, and the segments go.
    let good = files_of(dir, "functions")
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .filter(|bytes| *bytes != tampered)
        .max_by_key(Vec::len)
        .unwrap();
    let payload = &good[..good.len() - 40];
    let mut forged = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let len = u32::from_le_bytes(payload[at + 32..at + 36].try_into().unwrap()) as usize;
        forged.extend_from_slice(&payload[at..at + 32]);
        forged.extend_from_slice(&0u32.to_le_bytes());
        at += 36 + len;
    }
    let hash = blake3::hash(&forged);
    forged.extend_from_slice(b"seamsc3\n");
    forged.extend_from_slice(hash.as_bytes());
    for segment in files_of(dir, "functions") {
        replace(&segment, &forged);
    }
    let fourth = with_custom_section(&first, "a fourth");
    assert_eq!(load_and_run_bytes(dir, &fourth), expected);
}
