//! Reading a file someone else may have put there (a model file, a
//! project's manifest, lock or journal): a regular file (a FIFO, device or
//! directory put in its place is refused, never waited on or read without
//! end), opened without blocking, at most a limit of bytes, checked before
//! reading and while reading, for a file that grows.

use std::path::Path;

/// The most bytes one model file may have: far past what an in-memory
/// model of this machine holds (expense x1000, 241k triples, is 30 MB).
pub const MODEL_FILE_LIMIT: u64 = 1 << 30;

/// The bytes of the file at `path`, which must be a regular file of at
/// most `limit` bytes (else an error of kind `FileTooLarge`): opened
/// without blocking, so that a FIFO put in a record's place is refused
/// instead of waiting for a writer forever.
pub fn read(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a directory, FIFO, socket or device); remove it, or put back the file seams wrote",
        ));
    }
    let too_large = |size: u64| {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("{size} bytes, over the limit of {limit}"),
        )
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    // Reserved as std::fs::read does: a size that cannot be had is an
    // error, not an abort.
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(meta.len()).unwrap_or(usize::MAX))
        .map_err(std::io::Error::other)?;
    // A file that grows while it is read stops at the limit.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}
