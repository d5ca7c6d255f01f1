#!/usr/bin/env bash
# Stops the daemons scripts/slurm/up.sh started under D, by the PIDs in their pid files (checked
# against /proc/PID/comm), TERM then KILL after 10 s. Safe to call twice or after a failed start.
D=${D:?set D to the cluster directory given to up.sh}
pids=()
for p in slurmd slurmctld munged; do
  f=$D/run/$p.pid
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$p" ]; then kill -TERM "$pid" && pids+=("$pid"); fi
done
for pid in "${pids[@]}"; do
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then echo "slurm/down.sh: $pid survived TERM; KILL"; kill -KILL "$pid"; fi
done
echo "slurm/down.sh: stopped ${pids[*]:-nothing}"
