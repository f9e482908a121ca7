//! Which process listens on a loopback port. A test that starts a server
//! picks a free port, lets it go and hands it to the server; until the
//! server binds it, another test's server may take it. A connection then
//! succeeds, but to the wrong server, so a test asks who holds the socket.

use std::net::TcpListener;

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether process `pid` or one of its descendants holds the socket that
/// listens on `port`, found through Linux's `/proc`.
pub fn listens_on(pid: u32, port: u16) -> bool {
    let sockets = listening_sockets(port);
    if sockets.is_empty() {
        return false;
    }
    let mut pids = vec![pid];
    while let Some(pid) = pids.pop() {
        let holds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .any(|target| sockets.iter().any(|s| target.as_os_str() == s.as_str()));
        if holds {
            return true;
        }
        pids.extend(children(pid));
    }
    false
}

/// `socket:[INODE]` for each socket listening on `port`, IPv4 or IPv6.
fn listening_sockets(port: u16) -> Vec<String> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|line| listening_socket(line, port))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The socket of one `/proc/net/tcp` line, when it listens on `port`:
/// `sl local_address rem_address st ... inode`, the address as hex
/// `ADDR:PORT` and `0A` for LISTEN.
fn listening_socket(line: &str, port: u16) -> Option<String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let local_port = u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()?;
    let ours = local_port == port && *fields.get(3)? == "0A";
    ours.then(|| fields.get(9).map(|inode| format!("socket:[{inode}]")))?
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_proc_net_tcp_is_read() {
        let listening = "   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 100 0 0 10 0";
        assert_eq!(
            listening_socket(listening, 8080).as_deref(),
            Some("socket:[123456]")
        );
        assert_eq!(listening_socket(listening, 8081), None);
        let connected = listening.replace(" 0A ", " 01 ");
        assert_eq!(listening_socket(&connected, 8080), None);
        assert_eq!(listening_socket("  sl  local_address", 8080), None);
    }

    #[test]
    fn this_process_is_seen_listening_and_another_is_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(listens_on(std::process::id(), port));
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(!listens_on(other.id(), port));
        other.kill().unwrap();
        other.wait().unwrap();
        drop(listener);
        assert!(!listens_on(std::process::id(), port));
    }
}
