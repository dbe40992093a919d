#!/usr/bin/env bash
# Record the Qwen2.5-Coder models' cassettes (what `make eval` replays), on one
# thread per model, resumable: stop it at any point and run it again to
# continue (`--resume` skips finished runs).
#
#   1. 0.5B embedded: every core scenario under every preset
#   2. 0.5B through llama-server (--jinja, llama.cpp's own tool-call parser):
#      core under native-openai and both constrained presets (its json_schema)
#   3. 1.5B embedded: core under native, prompt-hermes, fewshot-json,
#      prompt-pythonic and both constrained presets; native-openai and both
#      constrained presets through llama-server; then the 0.5B's best other preset
#   4. 0.5B embedded: the BFCL sample under its three best presets on core,
#      deepened 2 items per category at a time up to BFCL_LIMIT (a stop leaves
#      categories even)
#   5. 1.5B embedded: the same for the BFCL sample under its three best presets
#
# The two models can record side by side, one process each on one core
# (QWEN_ONLY=0.5b or QWEN_ONLY=1.5b runs one model's steps).
#
# num_predict: 256 tokens (the harness default). These models are trained to
# call tools and stop by themselves: their calls take 20-60 tokens, several
# calls or a written file fit in 256, where the 128 used for the tiny models
# could cut a call (scored as the model's failure). What does not fit is a
# runaway repetition of one call, which 256 bounds at about 35 s a round on
# one thread.
# Environment: UTP (the utp command, default .venv/bin/utp), QWEN_NUM_PREDICT, QWEN_ONLY,
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
FIXED_15="native,prompt-hermes,fewshot-json,prompt-pythonic,constrained-json,constrained-call"
SERVER_FORMATS="native-openai,constrained-json,constrained-call"
ONLY=${QWEN_ONLY:-}

step() {
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) utp eval $*"
    "$UTP" eval "$@" --record --resume --options "num_predict=$NUM_PREDICT,num_thread=$THREADS" --no-reports \
        || echo "!! $(date -u +%Y-%m-%dT%H:%M:%SZ) step ended with status $?: $*"
}

# best_presets MODEL COUNT [EXCLUDED,...]: the model's best presets on core, ranked as `utp tune` ranks them
best_presets() {
    "$PY" -c 'import sys; from harness.tuning import best_presets
print(",".join(best_presets(sys.argv[1], int(sys.argv[2]), exclude=filter(None, (sys.argv[3:] or [""])[0].split(",")))))' "$@"
}

server_built() { "$PY" -c "from utp.backends.llama_server import server_binary; server_binary()" 2>/dev/null; }

bfcl() {  # bfcl MODEL PRESETS: the BFCL sample, deepened evenly
    for limit in $(seq 2 2 "$BFCL_LIMIT") "$BFCL_LIMIT"; do
        step --model "$1" --suite bfcl --limit "$limit" --formats "$2"
    done
}

record_05() {
    step --model "local:$Q05" --suite core --formats all
    if server_built; then
        step --model "llamacpp:$Q05" --suite core --formats "$SERVER_FORMATS"
    else
        echo "-- llama-server is not built (make llama-server): skipping llamacpp:$Q05"
    fi
    BEST3=$(best_presets "local:$Q05" 3)
    bfcl "local:$Q05" "${BEST3:-prompt-hermes,native,fewshot-json}"
}

record_15() {
    step --model "local:$Q15" --suite core --formats "$FIXED_15"
    if server_built; then
        step --model "llamacpp:$Q15" --suite core --formats "$SERVER_FORMATS"
    fi
    # chosen late: by now the 0.5B (recording beside it) has been through every preset
    BEST_OTHER=$(best_presets "local:$Q05" 1 "$FIXED_15,native-openai")
    [ -n "$BEST_OTHER" ] && step --model "local:$Q15" --suite core --formats "$BEST_OTHER"
    BEST3=$(best_presets "local:$Q15" 3)
    bfcl "local:$Q15" "${BEST3:-native,prompt-hermes,fewshot-json}"
}

case "$ONLY" in
    0.5b) record_05 ;;
    1.5b) record_15 ;;
    *) record_05; record_15 ;;
esac
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) done"
