//! How many threads the machine runs at once, for the work seams shares
//! among threads (hashing files, finishing renders and sidecars).

use std::sync::OnceLock;

/// How many threads can run at once (1 when that cannot be told). Asked
/// once per process: the standard library reads the cgroup's files on
/// every call, three opens each time, several times a run.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_count_is_the_standard_librarys_asked_once() {
        let expected = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(super::cores(), expected);
        assert_eq!(super::cores(), expected);
    }
}
