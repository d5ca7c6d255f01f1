#!/usr/bin/env bash
# A throwaway single-node Slurm cluster on this machine (Debian 12's Slurm 22.05, run as root): the
# configuration, munged (or auth/none), slurmctld and slurmd, all on loopback, all state under one
# directory. For tests and for trying the sweep's Slurm backend; not for production.
#   D=DIR [CPUS=N] [AUTH=munge|none] scripts/slurm/up.sh      then: export SLURM_CONF=DIR/etc/slurm.conf
#   D=DIR scripts/slurm/down.sh                               stops every daemon it started, by PID
# CPUS may exceed the cores (the node then oversubscribes them). Waits until the node is idle.
set -euo pipefail
D=${D:?set D to the cluster directory (it is created; everything lives under it)}
CPUS=${CPUS:-$(nproc)}
AUTH=${AUTH:-munge}
for tool in slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || { echo "slurm/up.sh: $tool not found: apt-get install slurmctld slurmd slurm-client munge" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm/up.sh: run as root (the daemons run as root here)" >&2; exit 1; }
MEM=$(free -m | awk '/^Mem:/{print int($2*0.9)}')
mkdir -p "$D"/{etc,munge,log,run,spool/ctld,spool/d}
chmod 0755 "$D" "$D/munge"
export SLURM_CONF=$D/etc/slurm.conf
if [ "$AUTH" = munge ]; then
  command -v munged >/dev/null || { echo "slurm/up.sh: munged not found: apt-get install munge (or AUTH=none)" >&2; exit 1; }
  AUTHCONF="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket"
else
  AUTHCONF="AuthType=auth/none
CredType=cred/none"
fi
# jobcomp/filetxt keeps one line per finished task (squeue forgets them after MinJobAge);
# batch_sched_delay=0 and bf_interval=1 schedule array tasks every second instead of every three.
cat > "$SLURM_CONF" <<CONF
ClusterName=fetta
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
$AUTHCONF
StateSaveLocation=$D/spool/ctld
SlurmdSpoolDir=$D/spool/d
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/log/jobcomp.txt
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
InactiveLimit=0
KillWait=5
MinJobAge=300
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
if [ "$AUTH" = munge ]; then
  [ -f "$D/munge/munge.key" ] || { mungekey --create --keyfile="$D/munge/munge.key"; chmod 0400 "$D/munge/munge.key"; }
  munged --socket="$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
         --pid-file="$D/run/munged.pid" --log-file="$D/log/munged.log" --seed-file="$D/munge/munged.seed"
fi
slurmctld -c   # forks; -c: no saved state
slurmd
st=
for _ in $(seq 1 300); do
  st=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$st" = idle ] && break
  sleep 0.1
done
if [ "$st" != idle ]; then
  echo "slurm/up.sh: the node is '$st', not idle, after 30 s; logs in $D/log" >&2
  exit 1
fi
echo "slurm/up.sh: node idle with $CPUS CPUs; export SLURM_CONF=$SLURM_CONF"
