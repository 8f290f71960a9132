#!/usr/bin/env bash
# Regenerates docs/reproduction.md: the CNA paper's key-value map and the
# RON paper's Algorithm 4 microbenchmark on the recorded matrices closest
# to the papers' machines, side by side with the papers' numbers.
#
#   vm/reproduce.sh DATA_DIR [ACQUISITIONS] [SEEDS]
#
# DATA_DIR holds latency/*.csv. The rows (JSON) are kept in
# vm/target/repro/. Every point is the median of SEEDS (default 5) random
# placements, with spinning waiters (the papers' setting), the socket
# groups and the tool's default line model (directory, 10 outstanding
# misses).
set -euo pipefail
DATA=$(cd "${1:?usage: vm/reproduce.sh DATA_DIR [ACQUISITIONS] [SEEDS]}" && pwd)
ACQ=${2:-3000}
SEEDS=${3:-5}
VM=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$VM")
ROWS=$VM/target/repro
COMMON="--acquisitions $ACQ --repeat $SEEDS --relax spin --placement random --groups socket --slots cpu --format json"
CNA_M=intel-xeon-platinum-8275cl-2s
RON_M=amd-threadripper-3990x
cd "$VM"
cargo build --release --bin ron-vm-bench --bin vm-repro
mkdir -p "$ROWS"
rm -f "$ROWS"/*.json
start=$(date +%s)
run() { # NAME ARGS...
  local name=$1
  shift
  echo "== $name: $*" >&2
  ./target/release/ron-vm-bench "$@" > "$ROWS/$name.part"
  mv "$ROWS/$name.part" "$ROWS/$name.json"
}
# shellcheck disable=SC2086
run cna-kv --matrix "$DATA/latency/$CNA_M.csv" --workload kv --locks mcs,cna,cbo-mcs \
  --threads 1,2,4,70 --ncs 0,1000 $COMMON
# shellcheck disable=SC2086
run cna-kv-update --matrix "$DATA/latency/$CNA_M.csv" --workload kv-update --locks mcs,cna \
  --threads 70 --ncs 0 $COMMON
# C-BO-MCS under its shipped policy (backoff, as the paper's global lock),
# and a long run for the fairness factor (the CNA flush threshold is 2^16
# local handovers; the paper measured 10 s).
# shellcheck disable=SC2086
run cna-kv-cbo --matrix "$DATA/latency/$CNA_M.csv" --workload kv --locks cbo-mcs,mcs \
  --threads 2 --ncs 0 ${COMMON/--relax spin/--relax default}
# shellcheck disable=SC2086
run cna-kv-long --matrix "$DATA/latency/$CNA_M.csv" --workload kv --locks mcs,cna \
  --threads 70 --ncs 0 ${COMMON/--acquisitions $ACQ --repeat $SEEDS/--acquisitions 1000000 --repeat 3}
# shellcheck disable=SC2086
run ron-micro --matrix "$DATA/latency/$RON_M.csv" --workload ron-micro \
  --locks ron-ticket,ron,ron-plock,mcs,ticket,cbo-mcs,ron-raw --threads 64 \
  --ncs 1000,5000,10000,20000,40000,80000,120000 $COMMON
secs=$(( $(date +%s) - start ))
./target/release/vm-repro --rows "$ROWS" --doc "$ROOT/docs/reproduction.md" \
  --cna-machine "$CNA_M" --ron-machine "$RON_M" --acquisitions "$ACQ" --seeds "$SEEDS" \
  --seconds "$secs"
echo "docs/reproduction.md regenerated in $secs s" >&2
