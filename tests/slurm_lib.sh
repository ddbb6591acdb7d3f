# slurm_lib.sh: sourced (bash) by the real-Slurm checks (slurm_check.sh, slurm_backfill_check.sh):
# a private munged (its own key and socket) and a slurmctld on loopback, with nothing of the
# machine's own Slurm or munge touched, and only the pids started here stopped at exit.
#
# The caller defines skip MESSAGE (say SKIPPED loudly, exit 0) before sourcing, then calls:
#   slurm_need TOOL...          skip unless each tool is installed
#   slurm_scratch               make and enter $scratch (mode 700), stop our daemons at exit,
#                               pick the two ports (slurm_ports)
#   slurm_munge                 start munged; skip when it does not answer
#   slurm_conf_common           print the slurm.conf lines every check shares (daemons, munge,
#                               paths, cons_tres, no accounting, CLOUD power saving)
#   slurm_ctld                  start slurmctld on $scratch/slurm.conf (exports SLURM_CONF);
#                               skip when it does not answer a ping
#   slurm_ctld_stop             stop it and forget its state (before another slurm_ports,
#                               slurm.conf and slurm_ctld)
#   slurm_cloud GRESTYPES LINE...  slurm_scratch, slurm_munge, a slurm.conf of the common lines,
#                               backfill, PrivateData=cloud (scontrol shows powered-down CLOUD
#                               nodes), GresTypes and each LINE (nodes, partitions), slurm_ctld
# Nodes are declared State=CLOUD with ResumeProgram=/bin/true, so no slurmd is needed: an
# allocated node stays CONFIGURING (holding its job's resources) until ResumeTimeout.

PATH=$PATH:/usr/sbin # munged and slurmctld live there, outside a user's usual PATH
pids=()

slurm_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not installed (make check installs munge, slurmctld, slurm-client)"
	done
}

slurm_finish() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$scratch"
}

slurm_scratch() {
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/xpool-slurm.XXXXXX") || exit 1
	chmod 700 "$scratch"
	trap slurm_finish EXIT
	cd "$scratch" || exit 1
	slurm_ports
}

# The ports slurm_conf_common writes (again for a second slurmctld: the first one's may linger).
slurm_ports() {
	slurm_ctl_port=$(slurm_free_port) && slurm_d_port=$(slurm_free_port) || skip "no free port"
}

# A port nothing listens on (connecting is refused), for slurmctld and the unused slurmd one.
slurm_free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo $p; return 0; }
	done
	return 1
}

# munge: its own key (munged wants it readable by its user only) and socket directory.
slurm_munge() {
	head -c 1024 /dev/urandom >munge.key && chmod 400 munge.key
	mkdir -m 755 sock
	munged -F --force --socket="$scratch/sock/munge" --key-file="$scratch/munge.key" \
		--log-file="$scratch/munged.log" --pid-file="$scratch/munged.pid" --seed-file="$scratch/munged.seed" \
		>munged.out 2>&1 &
	munged_pid=$!
	pids+=($munged_pid)
	for _ in $(seq 1 200); do
		munge -n -S "$scratch/sock/munge" >/dev/null 2>&1 && break
		kill -0 "$munged_pid" 2>/dev/null || break
		sleep 0.05
	done
	munge -n -S "$scratch/sock/munge" >/dev/null 2>&1 || { cat munged.out >&2; skip "munged did not start"; }
}

slurm_conf_common() {
	echo "ClusterName=xpooltest"
	echo "SlurmctldHost=$(hostname -s)(127.0.0.1)"
	echo "SlurmctldPort=$slurm_ctl_port"
	echo "SlurmdPort=$slurm_d_port"
	echo "SlurmUser=$(id -un)"
	echo "AuthType=auth/munge"
	echo "AuthInfo=socket=$scratch/sock/munge"
	echo "CredType=cred/munge"
	echo "StateSaveLocation=$scratch/state"
	echo "SlurmdSpoolDir=$scratch/spool"
	echo "SlurmctldPidFile=$scratch/slurmctld.pid"
	echo "SlurmctldLogFile=$scratch/slurmctld.log"
	echo "ProctrackType=proctrack/linuxproc"
	echo "TaskPlugin=task/none"
	echo "MpiDefault=none"
	echo "SelectType=select/cons_tres"
	echo "SelectTypeParameters=CR_Core"
	echo "JobCompType=jobcomp/none"
	echo "AccountingStorageType=accounting_storage/none"
	echo "SuspendProgram=/bin/true"
	echo "ResumeProgram=/bin/true"
	echo "SuspendTime=600"
	echo "ResumeTimeout=600"
}

slurm_ctld() {
	mkdir -m 700 state spool
	export SLURM_CONF=$scratch/slurm.conf
	slurmctld -D -f "$SLURM_CONF" >slurmctld.out 2>&1 &
	ctld_pid=$!
	pids+=($ctld_pid)
	for _ in $(seq 1 200); do
		scontrol ping 2>/dev/null | grep -q 'is UP' && break
		kill -0 "$ctld_pid" 2>/dev/null || break
		sleep 0.05
	done
	scontrol ping 2>/dev/null | grep -q 'is UP' || { tail -20 slurmctld.out >&2; skip "slurmctld did not start"; }
}

slurm_ctld_stop() {
	local p keep=()
	kill "$ctld_pid" 2>/dev/null
	wait "$ctld_pid" 2>/dev/null
	for p in "${pids[@]}"; do [ "$p" = "$ctld_pid" ] || keep+=("$p"); done
	pids=("${keep[@]}")
	rm -rf state spool
}

slurm_cloud() {
	local types=$1
	shift
	slurm_scratch
	slurm_munge
	{
		slurm_conf_common
		echo "SchedulerType=sched/backfill"
		echo "PrivateData=cloud"
		echo "GresTypes=$types"
		printf '%s\n' "$@"
	} >slurm.conf
	slurm_ctld
}
