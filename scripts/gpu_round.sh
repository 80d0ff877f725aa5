#!/usr/bin/env bash
# A whole round of GPU work in one call of the device tool: lanes run side by side (one per GPU), the steps of a
# lane one after another, every step under the round's deadline, so the call always ends in time and brings back
# what it made. Results (recordings, sweeps, benchmark JSON) go into $OUT/results.tgz, logs into $OUT/logs.tgz, and
# the last lines of every log into $OUT/summary.txt (a device call brings back at most 8 files).
#
#   OUT=/tmp/out ROUND_S=560 scripts/gpu_round.sh 0:record,fp8sweep,fp8bench 1:tests
#
# Steps: bmap (the attention shapes with PyTorch's SDPA backends: which backend wins where, issue 38), triage (cudnn-lab triage --preset of the Wan2.1 VAE conv3d, under each cuDNN the host has),
# record (scripts/record.py), sweep (the standard sweep), fp8sweep (its FP8 GEMM part alone),
# fp8bench, fusion, anatomy, plans, cupti (plans.py's suite rows without its fresh processes: kit/CUPTI, same best), paged, moe, issue27 (benchmarks/*.py: plans.py --issue27 for the last), liverows
# (scripts/live_rows.py --record: a Lab run's rows as they arrive, without and with 8 helpers), liverowsdef (the same
# with default options), whatif (benchmarks/whatif.py), defaults (plans.py --defaults: the problems a user runs, no
# options set), defaultsbig (three of them with 'auto' capped at $BIG_HELPERS helpers, 14 unless set), published (benchmarks/published_attention.py --quick: NVIDIA's H200 attention rows), probe
# (scripts/probe_shapes.py: SDPA head sizes cuDNN takes), detstress (three 8-worker runs of the anatomy, plans and
# pooling GPU tests), exitprobe (scripts/probe_exit.py: exit codes per exit variant, the determinism recipe under
# load, issue 37), exits (issue 37: benchmarks/whatif.py three times and `cudnn-lab run` of a small conv, each
# one's exit code; an abort at exit shows as 134 or 139), throughput (benchmarks/sweep_throughput.py: every GPU; run it
# alone), tests (pytest -m gpu but the notebooks, $WORKERS workers, stops after $MAXFAIL failures), tests1 (pytest -m gpu in one process: $TESTS, or all but the notebooks), notebooks (the course live).
# A step written NAME.TAG runs NAME with its own log (e.g. 0:tests.a 0:tests.b: two suites at once on GPU 0;
# 0:tests.a,tests.b,tests.c,tests.d: four one after another, about 2 min each alone on an H200 with 8 workers).
# The summary ends with the tally of clean suites.
# throughput takes $POINTS points (12 unless set); record takes only the problems in $RECORD_ONLY when set.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${OUT:?set OUT to the folder that comes back}"
ROUND_S=${ROUND_S:-560}
PY=${PY:-python3}
T0=$(date +%s)
WORK=$(mktemp -d)
mkdir -p "$WORK/recorded" "$WORK/sweeps" "$WORK/bench" "$WORK/logs" "$WORK/maps"
export PYTHONUNBUFFERED=1
DAY=$(date -u +%F)

# Seconds each step may take at most (the round's deadline caps them too); override with e.g. BUDGET_record=200.
declare -A BUDGET=([record]=300 [bmap]=330 [sweep]=420 [fp8sweep]=90 [fp8bench]=70 [fusion]=60 [anatomy]=90 [plans]=300 [cupti]=200
                   [throughput]=300 [paged]=120 [moe]=120 [issue27]=240 [liverows]=120 [whatif]=90 [defaults]=150 [defaultsbig]=90 [published]=150 [probe]=120 [probebeyond]=100 [detstress]=150 [liverowsdef]=90 [triage]=150 [exitprobe]=95 [exits]=150 [tests]=100000 [tests1]=100000 [notebooks]=400)
for k in "${!BUDGET[@]}"; do v="BUDGET_$k"; [ -n "${!v:-}" ] && BUDGET[$k]=${!v}; done

left() { echo $((ROUND_S - ($(date +%s) - T0))); }
gpu_name() {  # the GPU's short name, as recordings are named (results.datasets.dataset_prefix: h100, h200, ...)
    CUDA_VISIBLE_DEVICES=$1 $PY -c 'import torch; from cudnn_lab.results.datasets import dataset_prefix
print(dataset_prefix(torch.cuda.get_device_name(0)))' 2>/dev/null || echo gpu; }

step() {  # step GPU NAME[.TAG]: run one step on one GPU under what is left of the round (TAG: a second copy's log)
    local gpu=$1 name=${2%%.*} secs log
    secs=$(left)
    local cap=${BUDGET[$name]:-100000}
    [ "$cap" -lt "$secs" ] && secs=$cap
    log="$WORK/logs/gpu${gpu}_${2}.log"
    if [ "$secs" -lt 20 ]; then echo "skipped: $secs s left" >"$log"; return; fi
    echo "[$(date -u +%T)] gpu $gpu: $2 (at most $secs s)" | tee -a "$WORK/logs/round.log"
    local slug; slug=$(gpu_name "$gpu")
    export CUDA_VISIBLE_DEVICES=$gpu
    case $name in
        record) timeout -k 10 "$secs" $PY scripts/record.py --out "$WORK/recorded" --deadline-s $((secs - 40)) \
                    --problem-timeout-s 100 --time-cap-s 0.25 ${RECORD_ONLY:+--only $RECORD_ONLY} ;;
        sweep) timeout -k 10 "$secs" $PY scripts/record_sweeps.py --out "$WORK/sweeps" --store "$WORK/store_$gpu" ;;
        bmap) timeout -k 10 "$secs" $PY scripts/record_sweeps.py --set attention_backends --out "$WORK/sweeps" \
                    --map-out "$WORK/maps" --store "$WORK/store_bmap_$gpu" ;;
        fp8sweep) timeout -k 10 "$secs" $PY scripts/record_sweeps.py --set fp8_gemm --out "$WORK/sweeps" \
                    --store "$WORK/store_fp8_$gpu" ;;
        fp8bench) timeout -k 10 "$secs" $PY benchmarks/fp8.py --quick --json "$WORK/bench/${slug}_${DAY}_fp8.json" ;;
        fusion) timeout -k 10 "$secs" $PY benchmarks/fusion.py --json "$WORK/bench/${slug}_${DAY}_fusion.json" ;;
        anatomy) timeout -k 10 "$secs" $PY benchmarks/anatomy.py --json "$WORK/bench/${slug}_${DAY}_anatomy.json" ;;
        plans) timeout -k 10 "$secs" $PY benchmarks/plans.py --json "$WORK/bench/${slug}_${DAY}_plans.json" ;;
        cupti) timeout -k 10 "$secs" $PY benchmarks/plans.py --no-fresh \
                    --json "$WORK/bench/${slug}_${DAY}_plans_cupti.json" ;;
        issue27) timeout -k 10 "$secs" $PY benchmarks/plans.py --issue27 all --budget-s $((secs * 2 / 3)) \
                    --json "$WORK/bench/${slug}_${DAY}_issue27.json" ;;
        paged) timeout -k 10 "$secs" $PY benchmarks/paged_decode.py --quick \
                    --json "$WORK/bench/${slug}_${DAY}_paged_decode.json" ;;
        triage) timeout -k 10 "$secs" $PY -m cudnn_lab.cli triage --preset "Wan2.1 video VAE conv3d" \
                    --json "$WORK/bench/${slug}_${DAY}_triage.json" ;;
        moe) timeout -k 10 "$secs" $PY benchmarks/moe.py --quick --json "$WORK/bench/${slug}_${DAY}_moe.json" ;;
        liverows) for h in 0 8; do timeout -k 10 $((secs / 2)) $PY scripts/live_rows.py --problem rmsnorm \
                    --parallel-builds $h --record "$WORK/bench/${slug}_${DAY}_live_rows_helpers$h.json"; done ;;
        whatif) timeout -k 10 "$secs" $PY benchmarks/whatif.py --json "$WORK/bench/${slug}_${DAY}_whatif.json" ;;
        defaults) timeout -k 10 "$secs" $PY benchmarks/plans.py --defaults --budget-s $((secs - 30)) \
                    --json "$WORK/bench/${slug}_${DAY}_defaults.json" ;;
        defaultsbig) timeout -k 10 "$secs" $PY benchmarks/plans.py --max-auto-helpers "${BIG_HELPERS:-14}" \
                    --defaults "Llama rmsnorm bf16 4096x4096" "DenseNet conv + concatenate" "GPT-2 layernorm training" \
                    --budget-s $((secs - 30)) --json "$WORK/bench/${slug}_${DAY}_defaults_big.json" ;;
        published) timeout -k 10 "$secs" $PY benchmarks/published_attention.py --quick --budget-s $((secs - 30)) \
                    --json "$WORK/bench/${slug}_${DAY}_published_attention.json" ;;
        probe) timeout -k 10 "$secs" $PY scripts/probe_shapes.py --json "$WORK/bench/${slug}_${DAY}_probe_shapes.json" ;;
        probebeyond) timeout -k 10 "$secs" $PY scripts/probe_shapes.py --beyond \
                    --json "$WORK/bench/${slug}_${DAY}_probe_shapes_beyond.json" ;;
        detstress) for i in 1 2 3; do timeout -k 10 $((secs / 3)) $PY -m pytest -m gpu -q -p no:cacheprovider -n 8 \
                    --dist load --timeout 120 tests/gpu/test_anatomy_gpu.py tests/gpu/test_plans.py tests/gpu/test_classic_pool.py; \
                    echo "detstress run $i rc=$?"; done ;;
        exitprobe) timeout -k 10 "$secs" $PY scripts/probe_exit.py --seconds $((secs - 12)) \
                    --json "$WORK/bench/${slug}_${DAY}_probe_exit.json" ;;
        exits) echo '{"op": "conv", "n": 8, "c": 64, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3, "padding": 1,
                    "layout": "NHWC", "dtype": "fp16"}' >"$WORK/exits_spec.json"
            for i in 1 2 3; do timeout -k 10 $((secs / 4)) $PY benchmarks/whatif.py >/dev/null
                echo "benchmarks/whatif.py run $i exit $?"; done
            timeout -k 10 $((secs / 4)) $PY -m cudnn_lab.cli run "$WORK/exits_spec.json" -o "$WORK/exits_run.json" \
                >/dev/null; echo "cudnn-lab run exit $?" ;;
        liverowsdef) timeout -k 10 "$secs" $PY scripts/live_rows.py --problem rmsnorm --defaults \
                    --record "$WORK/bench/${slug}_${DAY}_live_rows_defaults.json" ;;
        throughput) unset CUDA_VISIBLE_DEVICES
            timeout -k 10 "$secs" $PY benchmarks/sweep_throughput.py --points "${POINTS:-12}" \
                --json "$WORK/bench/${slug}_${DAY}_sweep_throughput.json" ;;
        tests) timeout -k 10 "$secs" $PY -m pytest -m gpu -v --tb=short -p no:cacheprovider -n "${WORKERS:-6}" --durations=30 \
                    --dist loadfile --maxfail "${MAXFAIL:-25}" --timeout 300 --ignore tests/notebooks tests ;;
        tests1) timeout -k 10 "$secs" $PY -m pytest -m gpu -v --tb=short -p no:cacheprovider --timeout 120 \
                    ${TESTS:---ignore tests/notebooks tests} ;;
        notebooks) timeout -k 10 "$secs" $PY -m pytest -m gpu -v --tb=short -p no:cacheprovider --timeout 400 \
                    tests/notebooks/test_course_gpu.py ;;
        *) echo "unknown step $name" ;;
    esac >"$log" 2>&1
    local rc=$?
    echo "[$(date -u +%T)] gpu $gpu: $2 exited $rc" | tee -a "$WORK/logs/round.log"
}

lane() {  # lane GPU:step,step,...
    local gpu=${1%%:*} steps=${1#*:}
    for s in ${steps//,/ }; do step "$gpu" "$s"; done
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; date -u; } \
    >"$WORK/logs/device.txt" 2>&1
for spec in "$@"; do lane "$spec" & done
wait
tar -C "$WORK" -czf "$OUT/results.tgz" recorded sweeps bench maps $(cd "$WORK" && ls -d store_* 2>/dev/null)
tar -C "$WORK" -czf "$OUT/logs.tgz" logs
for f in "$WORK"/logs/*.log "$WORK/logs/device.txt"; do echo "=== ${f##*/}"; tail -n 25 "$f"; done >"$OUT/summary.txt"
suites=$(ls "$WORK"/logs/gpu*_tests*.log 2>/dev/null | wc -l)
if [ "$suites" -gt 0 ]; then  # issue 37's tally: a suite is clean when its last line has passes and no failure
    clean=$(for f in "$WORK"/logs/gpu*_tests*.log; do tail -n 1 "$f"; done | grep ' passed' | grep -Ecv '[0-9]+ (failed|errors?)[ ,]')
    echo "pytest -m gpu suites: $clean of $suites clean (WORKERS=${WORKERS:-6})" >>"$OUT/summary.txt"
fi
cat "$OUT/summary.txt"
