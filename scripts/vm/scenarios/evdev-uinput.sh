#!/usr/bin/env bash
# A DualSense-like motion node (scripts/vm/devices/uinput_motion.py through /dev/uinput) met by the
# kernel's real input core and evdev, read by the project's CLI (`--source evdev`).
# Runs inside the VM (scripts/vm/run scripts/vm/scenarios/evdev-uinput.sh), as root.
#
# Prints `RESULT evdev …` lines (format and expected values: scripts/vm/devices/README.md) and
# `INFO …` lines. Exit status 0 when every step could be run, 1 when the set-up failed
# (`RESULT evdev setup fail …`).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
dev=$root/scripts/vm/devices
cli=${COREMOTION_BIN:-${COREMOTION_CLI:-$root/.build/debug/coremotion}}
py=/usr/bin/python3; [ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/evdev-uinput.XXXXXX)
ctl=$work/control log=$work/node.log
. "$(dirname "$0")/device-lib.sh"
node_pid=
cleanup() {
    [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null && wait "$node_pid" 2>/dev/null
    node_pid=
}
fail_setup() { echo "RESULT evdev setup fail $*"; cleanup; exit 1; }
trap cleanup EXIT

[ -x "$cli" ] || fail_setup "no CLI at $cli (swift build --product coremotion)"
for m in evdev uinput; do
    modprobe "$m" 2>"$work/modprobe.err" || fail_setup "modprobe $m: $(head -1 "$work/modprobe.err")"
done

# start_node [ARGS...]: a node at 100 Hz, face up; sets $node.
start_node() {
    rm -f "$work/ready"
    "$py" "$dev/uinput_motion.py" --rate 100 --control "$ctl" --log "$log" --ready-file "$work/ready" "$@" \
        >"$work/node.out" 2>"$work/node.err" &
    node_pid=$!
    for _ in $(seq 120); do
        [ -s "$work/ready" ] && break
        kill -0 "$node_pid" 2>/dev/null || fail_setup "the uinput program exited: $(tail -3 "$work/node.err")"
        sleep 0.25
    done
    node=$(cat "$work/ready" 2>/dev/null)
    [ -n "$node" ] && [ -e "$node" ] || fail_setup "no event node after 30 s"
}
stop_node() { cleanup; sleep 0.5; }

start_node --pose face-up
sys=/sys/class/input/$(basename "$node")/device
echo "RESULT evdev node $node name=\"$(cat "$sys/name")\" properties=$(cat "$sys/properties") abs=$(cat "$sys/capabilities/abs") msc=$(cat "$sys/capabilities/msc") vendor=$(cat "$sys/id/vendor")"

# --- coremotion sensors ---------------------------------------------------------------------------
timeout 60 "$cli" sensors >"$work/sensors.out" 2>"$work/sensors.err"; st=$?
sed 's/^/INFO sensors| /' "$work/sensors.out"
listed=$(grep -c -- "$node" "$work/sensors.out")
echo "RESULT evdev sensors status=$st listed=$listed playstation=$(grep -c -i 'playstation' "$work/sensors.out")"

# --- one stream: stream NAME SENSOR [ARGS...] -> $work/NAME.csv ----------------------------------
stream() {
    local name=$1 sensor=$2; shift 2
    timeout 90 "$cli" stream --source "evdev:$node" --sensor "$sensor" --duration 3 --format csv "$@" \
        >"$work/$name.csv" 2>"$work/$name.err"
    local st=$?
    [ -s "$work/$name.err" ] && sed "s/^/INFO $name stderr| /" "$work/$name.err" | head -5
    echo "RESULT evdev $name $sensor status=$st $(summ csv "$work/$name.csv" --skip 0.5)"
}
pose() { echo "$1" >"$ctl"; sleep 0.5; }

# Face up: (0, 0, -1) g, no rotation.
stream face-up accelerometer
stream face-up gyro
# Upright in portrait: (0, -1, 0) g.
pose pose=upright
stream upright accelerometer
# Spinning at +0.5 rad/s about Core Motion's z, face up.
pose pose=spin
stream spin gyro
stream spin accelerometer
pose pose=face-up

# --- SYN_DROPPED: the reader is stopped (SIGSTOP) while the node goes upright and then sends a burst
# of 1000 frames, far more than evdev's per-client queue (a power of two near 8 packets): the queue
# overflows, the frame that changed the axes is discarded, and when the reader runs again it reads
# SYN_DROPPED. Only a reader that re-reads the axes (EVIOCGABS) after it sees upright afterwards.
# The stream's --duration counts sample time from its first sample (so the stopped time too); it is
# stopped once 20 rows are in, so 30 s leave it reading after it continues even on a loaded machine.
"$py" "$dev/evdev_probe.py" "$node" --ready-file "$work/probe.ready" >"$work/probe.out" 2>&1 &
probe_pid=$!
for _ in $(seq 120); do [ -s "$work/probe.ready" ] && break; sleep 0.25; done
"$cli" stream --source "evdev:$node" --sensor accelerometer --duration 30 --format csv \
    >"$work/dropped.csv" 2>"$work/dropped.err" &
cli_pid=$!
for _ in $(seq 600); do
    n=$(grep -c '^[0-9]' "$work/dropped.csv" 2>/dev/null); [ "${n:-0}" -ge 20 ] && break
    sleep 0.1
done
kill -STOP "$cli_pid" "$probe_pid"
stopped_at=$(cut -d' ' -f1 /proc/uptime) rows_at_stop=$(grep -c '^[0-9]' "$work/dropped.csv")
echo "pose=upright" >"$ctl"
sleep 0.5
echo "burst=1000" >"$ctl"
sleep 0.5
kill -CONT "$cli_pid" "$probe_pid"
info "the stream was stopped for $(echo "$(cut -d' ' -f1 /proc/uptime) $stopped_at" | awk '{print $1 - $2}') s after $rows_at_stop rows"
( sleep 60; kill "$cli_pid" 2>/dev/null ) & guard=$!
wait "$cli_pid"; st=$?
kill "$guard" 2>/dev/null
[ -s "$work/dropped.err" ] && sed 's/^/INFO dropped stderr| /' "$work/dropped.err" | head -5
echo "RESULT evdev syn-dropped status=$st face_up_rows=$(summ csv "$work/dropped.csv" --where 'z < -0.5' | cut -d' ' -f1) upright_rows=$(summ csv "$work/dropped.csv" --where 'y < -0.5' | cut -d' ' -f1) last=$(summ csv "$work/dropped.csv" --tail 0.5 | cut -d' ' -f2-4 | tr ' ' ',') bursts=$(summ count-log "$log" burst) rows_at_stop=$rows_at_stop"
kill -TERM "$probe_pid" 2>/dev/null
wait "$probe_pid"
echo "RESULT evdev syn-dropped-naive $(cat "$work/probe.out")"
pose pose=face-up

# --- unplug mid-stream: exit 1, one Error: line, the rows before it kept ---------------------------
unplug_mid_stream evdev "$node_pid" "evdev:$node"; node_pid=

# --- MSC_TIMESTAMP: time comes from the device's µs counter, across its 2^32 wrap ------------------
# Mid-stream the counter is set to 0.5 s before its wrap; the CSV's timestamps must stay increasing
# and 10 ms apart through the wrap.
start_node --pose face-up
timeout 90 "$cli" stream --source "evdev:$node" --sensor accelerometer --duration 4 --format csv \
    >"$work/wrap.csv" 2>"$work/wrap.err" &
cli_pid=$!
for _ in $(seq 240); do
    n=$(grep -c '^[0-9]' "$work/wrap.csv" 2>/dev/null); [ "${n:-0}" -ge 30 ] && break
    sleep 0.25
done
echo "ts=0xFFF85EE0" >"$ctl"
wait "$cli_pid"; st=$?
[ -s "$work/wrap.err" ] && sed 's/^/INFO wrap stderr| /' "$work/wrap.err" | head -5
echo "RESULT evdev timestamp-wrap status=$st $(summ csv "$work/wrap.csv")"
stop_node
echo "RESULT evdev done"
