#!/bin/sh
# Runs the sharded precompute of precompute.yaml, waits for every shard, then the merge.
#   deploy/kubernetes/run.sh [kubectl options, such as -n NAMESPACE]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
kubectl "$@" apply -f "$HERE/precompute.yaml"
# A shard that is retried resumes; the Job fails only if a shard fails every retry.
kubectl "$@" wait --for=condition=complete --timeout=-1s job/morello-shards
kubectl "$@" apply -f "$HERE/merge.yaml"
kubectl "$@" wait --for=condition=complete --timeout=-1s job/morello-merge
echo "the merged table is table.mdb on the morello-tables volume"
