#!/bin/sh
# Runs the sharded precompute of precompute.yaml, waits for every shard, then the merge; stops
# with the reason if either Job fails.
#   deploy/kubernetes/run.sh [kubectl options, such as -n NAMESPACE]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)

# Waits until Job $1 is complete (status 0) or has failed (status 1, with what to look at).
# `kubectl wait` takes one condition, so a failed Job would be waited for for ever: poll both.
wait_for_job() {
    job=$1
    shift
    while :; do
        conditions=$(kubectl "$@" get "job/$job" \
            -o 'jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
        case " $conditions " in
            *" Complete "*) return 0 ;;
            *" Failed "*)
                echo "error: job $job failed; see kubectl $* describe job/$job and the logs of its pods" \
                    "(kubectl $* logs -l job-name=$job --all-containers)" >&2
                return 1
                ;;
        esac
        sleep 10
    done
}

kubectl "$@" apply -f "$HERE/precompute.yaml"
# A shard that is retried resumes; the Job fails only when the shards have used up its retries.
wait_for_job morello-shards "$@"
kubectl "$@" apply -f "$HERE/merge.yaml"
wait_for_job morello-merge "$@"
echo "the merged table is table.mdb on the morello-tables volume"
