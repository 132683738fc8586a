#!/bin/sh
# Submits a sharded precompute to Slurm: a job array with one task per shard, then a merge job
# that runs once every shard has succeeded. See docs/database.md ("Precomputing on a cluster").
#
#   deploy/slurm/precompute.sh OUT_DIR [precompute arguments...]
#
# Environment (defaults in brackets):
#   SHARDS     number of shards [8]
#   MORELLO    the morello binary, on a path every node sees [morello]
#   CPUS       cores per shard (--cpus-per-task, and the shard's -j) [4]; at most what a node of
#              the partition has (checked with sinfo before anything is submitted)
#   SBATCH     extra sbatch options for every job, such as "--partition=cpu --time=1-0" []
#   ARRAY      which shards to submit, as sbatch's --array takes them, such as "3" or "1,5-6" [all]
#
# The precompute arguments name the goals and the target the table is for, the same for every
# shard, for example
#   matmul --up-to 1024 --target x86-avx512 --processors 32
# (name the target and processor count of the machines that will search with the table: a table
# answers only searches for the exact target it was computed for).
#
# Shard I writes OUT_DIR/part-I.mdb, appends to OUT_DIR/part-I.log, and creates OUT_DIR/part-I.done
# when it finishes; the merge waits for any shard still filling a part, refuses a part without its
# .done, writes OUT_DIR/table.mdb, checks it, and appends to OUT_DIR/merge.log. If a shard fails or
# is killed, the merge is cancelled; run the same command again (ARRAY=I to submit only the shards
# that did not finish): each shard resumes from what it saved, and a finished one has nothing left
# to do.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 OUT_DIR precompute-arguments..." >&2
    exit 2
fi
OUT_DIR=$1
shift
SHARDS=${SHARDS:-8}
CPUS=${CPUS:-4}
for value in "$SHARDS" "$CPUS"; do
    case $value in
        '' | *[!0-9]* | 0)
            echo "error: SHARDS and CPUS are whole numbers of at least 1 (SHARDS=$SHARDS CPUS=$CPUS)" >&2
            exit 2
            ;;
    esac
done
ARRAY=${ARRAY:-0-$((SHARDS - 1))}
# A task asking for more CPUs than any node has would stay pending for ever: refuse it here.
partition=""
previous=""
# shellcheck disable=SC2086 # SBATCH holds several options
for word in ${SBATCH:-}; do
    case $previous in -p | --partition) partition=$word ;; esac
    case $word in
        --partition=*) partition=${word#--partition=} ;;
        -p?*) partition=${word#-p} ;;
    esac
    previous=$word
done
if command -v sinfo >/dev/null 2>&1; then
    most=$(sinfo -h -N ${partition:+-p "$partition"} -o '%c' 2>/dev/null | sort -n | tail -n 1)
    if [ -z "$most" ]; then
        echo "error: sinfo lists no node${partition:+ in partition $partition}: check the partition (sinfo)" >&2
        exit 2
    fi
    if [ "$CPUS" -gt "$most" ]; then
        echo "error: CPUS=$CPUS is more than any node${partition:+ of partition $partition} has ($most," \
            "from sinfo): Slurm would leave the shards pending for ever; set CPUS to at most $most" >&2
        exit 2
    fi
fi
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
export MORELLO="${MORELLO:-morello}" OUT_DIR SHARDS PRECOMPUTE_ARGS="$*"
# shellcheck disable=SC2086 # SBATCH holds several options
array=$(sbatch --parsable ${SBATCH:-} --array="$ARRAY" --cpus-per-task="$CPUS" --job-name=morello-shard \
    --output="$OUT_DIR/part-%a.log" --open-mode=append --export=ALL "$HERE/shard.sbatch")
array=${array%%;*}
# A failed shard cancels the merge (without --kill-on-invalid-dep it would stay pending for ever).
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH:-} --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --job-name=morello-merge --output="$OUT_DIR/merge.log" --open-mode=append --export=ALL "$HERE/merge.sbatch")
echo "submitted shards as job $array (array $ARRAY of $SHARDS) and the merge as job ${merge%%;*}; table: $OUT_DIR/table.mdb"
