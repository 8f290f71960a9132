#!/usr/bin/env bash
# Regenerates the measured part of docs/vm-rw.md (between its vm-rw
# markers): RonRw against a one-counter reader-writer lock and a TTAS
# mutex taken by readers too, on every recorded latency matrix.
#
#   vm/report-rw.sh DATA_DIR [OPS] [SEEDS]
#
# DATA_DIR holds latency/*.csv. Every matrix: locks ron-rw, one-counter,
# ttas; read ratios 100, 99 and 50 %; nCS 0 and 1000 ns; K = 2; CPUs 8,
# 16, 32, 64, 128, 256, 384 (those below the machine's count) and all its
# CPUs, one thread each, placed at random (seeds 1..SEEDS, default 5);
# OPS operations per point (default 20000); L3 groups installed; the VM's
# default costs (the directory line model, 10 outstanding misses). The
# rows (JSON) are kept in vm/target/report-rw/.
set -euo pipefail
DATA=$(cd "${1:?usage: vm/report-rw.sh DATA_DIR [OPS] [SEEDS]}" && pwd)
OPS=${2:-20000}
SEEDS=${3:-5}
VM=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$VM")
ROWS=$VM/target/report-rw
ARGS="--locks ron-rw,one-counter,ttas --read-pct 100,99,50 --ncs 0,1000 --cs-lines 2 --threads 8,16,32,64,128,256,384 --groups l3 --ops $OPS --repeat $SEEDS --seed 1"
cd "$VM"
cargo build --release --bin vm-rw
mkdir -p "$ROWS"
# shellcheck disable=SC2086
./target/release/vm-rw --data "$DATA" $ARGS --rows "$ROWS/rows.json" \
  --doc "$ROOT/docs/vm-rw.md" --command "vm/report-rw.sh \$DATA $OPS $SEEDS  # vm-rw $ARGS"
