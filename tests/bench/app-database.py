#!/usr/bin/env python3
"""The generated app's database under load: requests per second and p99
latency of a list and a form endpoint with 10,000 records, on SQLite and
on PostgreSQL, one after the other in one run.

    tests/bench/app-database.py [--records 10000] [--seconds 10] [--clients 4]

Runs the committed expense example's app.py (examples/expense/out) under
uvicorn with the Python of SEAMS_PYTHON (tests/run makes it), against a
SQLite file and against a PostgreSQL cluster it makes in a temporary
directory (Debian's postgresql; run as the postgres user when this runs as
root) on a loopback port. The records are made through the app's own
tables (app.metadata), not through the API, so that the count is exact
and quick; the list endpoint then prints every one of them.
"""

import argparse
import http.client
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("SEAMS_PYTHON", str(REPO / ".venv/bin/python"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{what} exited ({process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"{what} did not listen within 60 s")


def postgres(work: Path):
    """A cluster of its own; returns (process, URL of database `bench`)."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    if not bins:
        sys.exit("needs Debian's postgresql (apt-get install postgresql)")
    bin_dir = bins[-1]
    data, run = work / "data", work / "run"
    work.mkdir()
    data.mkdir()
    run.mkdir()
    user = None
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chmod(work, 0o755)
        os.chmod(work.parent, 0o755)
        for d in (data, run):
            os.chown(d, account.pw_uid, account.pw_gid)
        user = account.pw_uid, account.pw_gid

    def as_postgres():
        if user:
            os.setgid(user[1])
            os.setgroups([])
            os.setuid(user[0])

    subprocess.run(
        [bin_dir / "initdb", "-D", data, "-U", "seams", "--auth=trust", "--no-sync", "-E", "UTF8"],
        check=True, preexec_fn=as_postgres, stdout=subprocess.DEVNULL,
    )
    port = free_port()
    process = subprocess.Popen(
        [bin_dir / "postgres", "-D", data, "-p", str(port), "-k", run,
         "-c", "listen_addresses=127.0.0.1"],
        preexec_fn=as_postgres, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_for(port, process, "postgres")
    time.sleep(0.5)
    subprocess.run(
        [bin_dir / "psql", "-h", "127.0.0.1", "-p", str(port), "-U", "seams", "-d", "postgres",
         "-q", "-c", "CREATE DATABASE bench"],
        check=True,
    )
    return process, f"postgresql://seams@127.0.0.1:{port}/bench"


def seed(app_dir: Path, url: str, records: int) -> None:
    """`records` expense reports, each with one line item, through app.py's tables."""
    script = f"""
import sys, datetime, decimal
sys.path.insert(0, {str(app_dir)!r})
import app
app.bring_up_to_date(app.engine)
with app.engine.begin() as db:
    db.execute(app.insert(app.EXPENSE_REPORT_TABLE), [
        {{"title": f"Trip {{i}}", "submitter": "a@example.org", "status": "draft"}}
        for i in range({records})
    ])
    db.execute(app.insert(app.LINE_ITEM_TABLE), [
        {{"description": f"Taxi {{i}}", "amount": decimal.Decimal("12.50"),
          "spent_on": datetime.date(2026, 12, 1), "billable": False, "report": i + 1}}
        for i in range({records})
    ])
"""
    subprocess.run([PYTHON, "-c", script], check=True, env={**os.environ, "DATABASE_URL": url})


def load(port: int, method: str, path: str, body: bytes, seconds: float, clients: int):
    """Requests per second and latencies (s) of `clients` keep-alive clients."""
    latencies: list = []
    failures = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
        while time.monotonic() < stop:
            started = time.perf_counter()
            connection.request(method, path, body=body or None, headers=headers)
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            if response.status != 200:
                failures[0] += 1
        with lock:
            latencies.extend(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    if failures[0]:
        sys.exit(f"{path}: {failures[0]} requests failed")
    return len(latencies) / elapsed, latencies[int(len(latencies) * 0.99) - 1], len(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        app_dir = work / "app"
        shutil.copytree(REPO / "examples/expense/out", app_dir,
                        ignore=shutil.ignore_patterns("*.trace.json"))
        cluster, pg_url = postgres(work / "pg")
        try:
            engines = [("SQLite", f"sqlite:///{work / 'bench.db'}"), ("PostgreSQL", pg_url)]
            print(f"| engine | endpoint | records | clients | requests | req/s | p99 (ms) |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for name, url in engines:
                seed(app_dir, url, args.records)
                port = free_port()
                server = subprocess.Popen(
                    [PYTHON, "-m", "uvicorn", "app:app", "--host", "127.0.0.1",
                     "--port", str(port), "--log-level", "warning"],
                    cwd=app_dir, env={**os.environ, "DATABASE_URL": url},
                )
                try:
                    wait_for(port, server, "uvicorn")
                    for label, method, path, body in [
                        ("GET list (all records)", "GET", "/api/lists/line_item_list", b""),
                        ("GET list (one report's)", "GET", "/api/lists/line_item_list?expense_report=77", b""),
                        ("POST new report form", "POST", "/api/forms/new_report_form",
                         b"title=Bench&submitter=b%40example.org"),
                    ]:
                        rate, p99, count = load(port, method, path, body, args.seconds, args.clients)
                        print(f"| {name} | {label} | {args.records} | {args.clients} | {count} "
                              f"| {rate:.1f} | {p99 * 1000:.1f} |", flush=True)
                finally:
                    server.terminate()
                    server.wait()
        finally:
            cluster.terminate()
            cluster.wait()


if __name__ == "__main__":
    main()
