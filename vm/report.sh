#!/usr/bin/env bash
# Regenerates the measured part of docs/vm.md (between its vm-report
# markers) and the plots in docs/vm/ from every recorded latency matrix.
#
#   vm/report.sh DATA_DIR [ACQUISITIONS] [SEEDS]
#
# DATA_DIR holds latency/*.csv. Every matrix: locks ron-grant, ron-raw, ron-inline,
# nxt-ron, ron-ticket, ron-plock, ron, sh-ron, ttas, ticket, mcs, cna,
# cbo-mcs, fsl;
# threads 8, 32, 64 and all CPUs (those the machine has); nCS 0 and
# 1000 ns; K = 2; ACQUISITIONS per point (default 1500); SEEDS random
# placements per point (default 5); both waiting policies (spin, default);
# one slot per CPU for every RON lock;
# socket groups; the directory line model with 10 outstanding misses (the
# tool's defaults). Then MCS along the route at all CPUs with every thread
# arriving at t = 0 (the previous harness: the queue starts in route
# order), for comparison.
# The rows (JSON) are kept in vm/target/report/.
set -euo pipefail
DATA=$(cd "${1:?usage: vm/report.sh DATA_DIR [ACQUISITIONS] [SEEDS]}" && pwd)
ACQ=${2:-1500}
SEEDS=${3:-5}
LOCKS=ron-grant,ron-raw,ron-inline,nxt-ron,ron-ticket,ron-plock,ron,sh-ron,ttas,ticket,mcs,cna,cbo-mcs,fsl
VM=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$VM")
ROWS=$VM/target/report
COMMON="--ncs 0,1000 --cs-lines 2 --acquisitions $ACQ --repeat $SEEDS --relax spin,default --slots cpu --groups socket --line-model directory --mlp 10"
cd "$VM"
cargo build --release --bin ron-vm-bench --bin vm-report
[ -x "$ROOT/target/release/ron" ] || (cd "$ROOT" && cargo build --release -p ron-cli)
mkdir -p "$ROWS" "$ROOT/docs/vm"
rm -f "$ROWS"/*.json
start=$(date +%s)
for m in "$DATA"/latency/*.csv; do
  name=$(basename "$m" .csv)
  n=$(wc -l < "$m")
  threads=""
  for t in 8 32 64; do
    if [ "$t" -lt "$n" ]; then threads="$threads$t,"; fi
  done
  threads="${threads}all"
  echo "== $name ($n CPUs): threads $threads" >&2
  # shellcheck disable=SC2086
  ./target/release/ron-vm-bench --matrix "$m" --locks "$LOCKS" --threads "$threads" \
    --placement random $COMMON --format json > "$ROWS/$name.json.part"
  mv "$ROWS/$name.json.part" "$ROWS/$name.json"
  # shellcheck disable=SC2086
  ./target/release/ron-vm-bench --matrix "$m" --locks mcs --threads all \
    --placement route --start-skew-ns 0 $COMMON --format json > "$ROWS/$name.route.part"
  mv "$ROWS/$name.route.part" "$ROWS/$name.route.json"
done
secs=$(( $(date +%s) - start ))
./target/release/vm-report --rows "$ROWS" --data "$DATA" --doc "$ROOT/docs/vm.md" \
  --acquisitions "$ACQ" --seconds "$secs" --plot-rows "$VM/target/report-plot" \
  --command "vm/report.sh \$DATA $ACQ $SEEDS  # ron-vm-bench --locks $LOCKS --threads 8,32,64,all --placement random $COMMON"
for m in "$DATA"/latency/*.csv; do
  name=$(basename "$m" .csv)
  "$ROOT/target/release/ron" plot --input "$VM/target/report-plot/$name.plot.json" \
    --out "$ROOT/docs/vm/$name.svg" --title "$name (ron-vm, K = 2, spinning waiters, median of $SEEDS seeds)"
done
echo "docs/vm.md regenerated in $secs s" >&2
