#!/usr/bin/env bash
# Record the Qwen2.5-Coder models' cassettes (what `make eval` replays), one
# recording process at a time on one thread, resumable: stop it at any point
# and run it again to continue (`--resume` skips finished runs).
#
#   1. 0.5B embedded: every core scenario under every preset
#   2. 0.5B through llama-server (--jinja): core under native-openai and native
#   3. 1.5B embedded: core under native, prompt-hermes, fewshot-json,
#      prompt-pythonic and the 0.5B's best other preset; then native-openai
#      and native through llama-server
#   4. 0.5B embedded: the BFCL sample, deepened 2 items per category at a time
#      up to BFCL_LIMIT under every preset (a stop leaves categories even)
#   5. 1.5B embedded: the BFCL sample under its three best presets on core
#
# num_predict: 256 tokens (the harness default). These models are trained to
# call tools and stop by themselves: their calls take 20-60 tokens, several
# calls or a written file fit in 256, where the 128 used for the tiny models
# could cut a call (scored as the model's failure). What does not fit is a
# runaway repetition of one call, which 256 bounds at about 35 s a round on
# one thread.
# Environment: UTP (the utp command, default .venv/bin/utp), QWEN_NUM_PREDICT,
# BFCL_LIMIT (default 12), QWEN_THREADS (default 1), UTP_ROOT (the checkout,
# default: this script's parent directory).
set -u
cd "${UTP_ROOT:-$(dirname "$0")/..}"
UTP=${UTP:-.venv/bin/utp}
PY=${PY:-.venv/bin/python}
NUM_PREDICT=${QWEN_NUM_PREDICT:-256}
BFCL_LIMIT=${BFCL_LIMIT:-12}
THREADS=${QWEN_THREADS:-1}
Q05=qwen2.5-coder-0.5b
Q15=qwen2.5-coder-1.5b
FIXED_15="native,prompt-hermes,fewshot-json,prompt-pythonic"

step() {
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) utp eval $*"
    "$UTP" eval "$@" --record --resume --options "num_predict=$NUM_PREDICT,num_thread=$THREADS" --no-reports \
        || echo "!! $(date -u +%Y-%m-%dT%H:%M:%SZ) step ended with status $?: $*"
}

# best_presets MODEL COUNT [EXCLUDED,...]: presets by task success on the model's recorded core runs
best_presets() {
    "$PY" - "$@" <<'PY'
import json, sys
from collections import defaultdict
from harness.records import read_records
model, count = sys.argv[1], int(sys.argv[2])
excluded = set(filter(None, (sys.argv[3] if len(sys.argv) > 3 else "").split(",")))
tally = defaultdict(lambda: [0, 0])
for record in read_records("reports/results", models=[model]):
    if record.get("suite", "").startswith("core/") and record["format"] not in excluded:
        tally[record["format"]][0] += bool((record.get("scores") or {}).get("task_success"))
        tally[record["format"]][1] += 1
ranked = sorted(tally, key=lambda f: (-tally[f][0] / tally[f][1], f))
print(",".join(ranked[:count]))
PY
}

server_built() { "$PY" -c "from utp.backends.llama_server import server_binary; server_binary()" 2>/dev/null; }

step --model "local:$Q05" --suite core --formats all

if server_built; then
    step --model "llamacpp:$Q05" --suite core --formats native-openai,native
else
    echo "-- llama-server is not built (make llama-server): skipping llamacpp:$Q05"
fi

BEST_OTHER=$(best_presets "local:$Q05" 1 "$FIXED_15,native-openai")
step --model "local:$Q15" --suite core --formats "$FIXED_15${BEST_OTHER:+,$BEST_OTHER}"
if server_built; then
    step --model "llamacpp:$Q15" --suite core --formats native-openai,native
fi

for limit in $(seq 2 2 "$BFCL_LIMIT") "$BFCL_LIMIT"; do
    step --model "local:$Q05" --suite bfcl --limit "$limit" --formats all
done

BEST3=$(best_presets "local:$Q15" 3)
for limit in $(seq 2 2 "$BFCL_LIMIT") "$BFCL_LIMIT"; do
    step --model "local:$Q15" --suite bfcl --limit "$limit" --formats "${BEST3:-native,prompt-hermes,fewshot-json}"
done
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) done"
