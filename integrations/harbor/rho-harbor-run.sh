#!/usr/bin/env bash
# The command Harbor runs in a task container: one headless rho run on the task's instruction,
# in the current directory (the task's working directory, where Harbor's exec starts), with the
# `unrestricted` profile (the container is the sandbox), then the outputs Harbor reads.
#
#   rho-harbor-run.sh INSTRUCTION
#
# Writes to $RHO_HARBOR_LOGS_DIR (default /logs/agent, which Harbor mounts from the trial's
# agent/ folder):
#   rho-events.jsonl  every event of the run, one JSON line each (`rho --json`); the last is
#                     run_end with the status and the token and cost totals
#   rho-stderr.txt    rho's diagnostics
#   rho-exit-code     rho's exit code (0 completed, 1 failed, 2 bad input, 3 budget, 130 cancelled)
#   trajectory.json   the session as an ATIF trajectory (`rho export`), for SUPPORTS_ATIF
#   rho-home/         $RHO_HOME: the session directory (trace.jsonl, meta.json)
#
# Environment: OPENAI_API_KEY, OPENAI_BASE_URL, RHO_MODEL (else OPENAI_MODEL), RHO_MAX_TURNS,
# RHO_MAX_COST, RHO_REASONING_EFFORT, RHO_BIN (default: rho on PATH).
#
# Exit code: 2 when rho refused its input or configuration (a broken setup, so the trial is an
# error rather than a failed attempt); 0 otherwise, because whether the task was done is the
# verifier's call, and how the run ended is in rho-exit-code and run_end.
set -uo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: rho-harbor-run.sh INSTRUCTION" >&2
  exit 2
fi
instruction=$1
logs=${RHO_HARBOR_LOGS_DIR:-/logs/agent}
rho=${RHO_BIN:-rho}
mkdir -p "$logs"
# The session lives in the mounted logs folder, so its trace outlives the container.
export RHO_HOME="$logs/rho-home"

# --prompt=TEXT, not -p TEXT: an instruction that starts with "-" must not be read as a flag.
args=(--json --profile unrestricted --auto-approve --working-dir "$(pwd)" "--prompt=$instruction")
model=${RHO_MODEL:-${OPENAI_MODEL:-}}
[ -n "$model" ] && args+=(--model "$model")
[ -n "${RHO_MAX_TURNS:-}" ] && args+=(--max-turns "$RHO_MAX_TURNS")
[ -n "${RHO_MAX_COST:-}" ] && args+=(--max-cost "$RHO_MAX_COST")
[ -n "${RHO_REASONING_EFFORT:-}" ] && args+=(--reasoning-effort "$RHO_REASONING_EFFORT")

"$rho" "${args[@]}" </dev/null >"$logs/rho-events.jsonl" 2>"$logs/rho-stderr.txt"
status=$?
echo "$status" >"$logs/rho-exit-code"

# This run is the only session in its RHO_HOME, so `latest` is it.
if "$rho" export latest >"$logs/trajectory.json.partial" 2>>"$logs/rho-stderr.txt"; then
  mv "$logs/trajectory.json.partial" "$logs/trajectory.json"
else
  rm -f "$logs/trajectory.json.partial"
fi

echo "rho exited with $status; events in $logs/rho-events.jsonl"
if [ "$status" -eq 2 ]; then
  cat "$logs/rho-stderr.txt" >&2
  exit 2
fi
exit 0
