"""Compares two seams binaries on full generates, interleaved in one run.

    python3 tests/bench/compare-generate.py OLD_SEAMS NEW_SEAMS [ROUNDS]

Projects: the chat example (three built-ins) and a model 100 times the chat
example (200 pages, htmx only; the model of host/core/examples/trace_cost.rs). A
full generate starts with no outputs, lock or journal; the component cache
is warm. Prints the median of each and their ratio, measured in one run with
the two binaries taking turns, so that the machine's load hits both alike.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

OLD, NEW = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 15
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = tempfile.mkdtemp(prefix="seams-bench-")

source = open(os.path.join(REPO, "host/core/examples/trace_cost.rs")).read()
copy = re.search(r'r#"\n(.*?)"#', source, re.S).group(1)
head = re.search(r'String::from\(\s*"(.*?)",\s*\)', source, re.S).group(1)
head = head.encode().decode("unicode_escape")


def big_model(copies):
    parts = [head]
    for i in range(copies):
        parts.append(
            copy.replace("{i}", str(i)).replace("{o1}", str(2 * i + 1)).replace("{o2}", str(2 * i + 2))
        )
    return "".join(parts)


def project(name, model, manifest):
    path = os.path.join(WORK, name)
    os.makedirs(path)
    open(os.path.join(path, "model.ttl"), "w").write(model)
    open(os.path.join(path, "seams.toml"), "w").write(manifest)
    return path


env = dict(os.environ, SEAMS_CACHE_DIR=os.path.join(WORK, "cache"))
chat = project(
    "chat",
    open(os.path.join(REPO, "examples/chat/model.ttl")).read(),
    open(os.path.join(REPO, "examples/chat/seams.toml")).read(),
)
big = project("big", big_model(100), '[model]\nfiles = ["model.ttl"]\n[[generator]]\nbuiltin = "htmx"\n')


def full(binary, path):
    shutil.rmtree(os.path.join(path, "out"), ignore_errors=True)
    for name in ("seams.lock", "seams.journal"):
        if os.path.exists(os.path.join(path, name)):
            os.remove(os.path.join(path, name))
    started = time.perf_counter()
    subprocess.run([binary, "generate", "--project", path], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


try:
    for name, path in (("chat", chat), ("chat x100 (htmx)", big)):
        full(OLD, path)
        full(NEW, path)
        old, new = [], []
        for _ in range(ROUNDS):
            old.append(full(OLD, path))
            new.append(full(NEW, path))
        mo, mn = statistics.median(old), statistics.median(new)
        print(f"{name}: old {mo * 1000:.1f} ms, new {mn * 1000:.1f} ms, new/old {mn / mo:.3f} (medians of {ROUNDS})")
finally:
    shutil.rmtree(WORK, ignore_errors=True)
