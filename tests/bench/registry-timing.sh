#!/usr/bin/env bash
# Times what a user of a registry generator waits for, on the chat example:
# `seams add` (pull and compile), the first generate, an offline generate
# (registry stopped, one output removed) and an offline no-op. Uses Debian's
# docker-registry on a loopback port and fresh blob and component caches.
#
#   tests/bench/registry-timing.sh SEAMS_BINARY [PORT]
set -euo pipefail
S="$(realpath "$1")"
PORT="${2:-5066}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'kill "$reg" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/reg"
printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s/reg/data\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$work" "$PORT" > "$work/reg/config.yml"
docker-registry serve "$work/reg/config.yml" > /dev/null 2>&1 &
reg=$!
sleep 1
export SEAMS_BLOB_CACHE_DIR="$work/blobs" SEAMS_CACHE_DIR="$work/components"
mkdir "$work/pub" "$work/p"
cp "$repo/examples/expense/model.ttl" "$work/pub/"
cp "$repo/examples/chat/model.ttl" "$work/p/"
printf '[model]\nfiles = ["model.ttl"]\n\n[[generator]]\nbuiltin = "htmx"\n' > "$work/pub/seams.toml"
"$S" publish "$repo/generators/htmx" --to "127.0.0.1:$PORT/seams/htmx:0.1.0" \
    --project "$work/pub" --goldens "$repo/generators/htmx/tests/golden/expense" -q
rm -rf "$work/blobs" "$work/components"
printf '[model]\nfiles = ["model.ttl"]\n\n[[generator]]\nbuiltin = "fastapi"\n\n[[generator]]\nbuiltin = "compose"\n' > "$work/p/seams.toml"
"$S" generate --project "$work/p" -q
now() { date +%s.%N; }
t0=$(now); "$S" add "127.0.0.1:$PORT/seams/htmx:0.1.0" --project "$work/p" -q > /dev/null
t1=$(now); "$S" generate --project "$work/p" -q
t2=$(now)
kill "$reg"; wait "$reg" 2>/dev/null || true
rm "$work/p/out/conversations.html"
t3=$(now); "$S" generate --project "$work/p" -q
t4=$(now); "$S" generate --project "$work/p" -q
t5=$(now)
python3 -c "
t = [$t0, $t1, $t2, $t3, $t4, $t5]
ms = lambda a, b: round((t[b] - t[a]) * 1000)
print(f'add {ms(0, 1)} ms, first generate {ms(1, 2)} ms (together {ms(0, 2)} ms), '
      f'offline generate {ms(3, 4)} ms, offline no-op {ms(4, 5)} ms')
"
