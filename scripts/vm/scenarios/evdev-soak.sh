#!/bin/bash
# A long run through the kernel's input core: a DualSense-like motion node made through /dev/uinput
# (scripts/vm/devices/uinput_motion.py: accelerometer and gyroscope events with MSC_TIMESTAMP, face up,
# turning at 0.1 rad/s) read by `--source evdev:NODE` into a CMMotionManager with `coremotion bench soak`:
# lost samples, CPU and RSS per window.
#   scripts/vm/run --timeout 4000 scripts/vm/scenarios/evdev-soak.sh [SECONDS [WINDOW [SENSOR [RATE]]]]
# (the tests run it briefly; by hand, e.g. 3600 60 for the hour). SENSOR defaults to device-motion, RATE
# (the node's frames per second, and the rate asked for) to 100.
. "$(dirname "$0")/lib.sh"
seconds=${1:-60} window=${2:-15} sensor=${3:-device-motion} rate=${4:-100}
soak_memory_setup
root=$(cd "$(dirname "$0")/../../.." && pwd)
py=/usr/bin/python3; [ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/evdev-soak.XXXXXX)
modprobe evdev && modprobe uinput || { value error=modprobe; exit 1; }
"$py" "$root/scripts/vm/devices/uinput_motion.py" --rate "$rate" --accel 0,0,-1 --gyro 0,0,0.1 \
    --ready-file "$work/ready" >"$work/node.out" 2>"$work/node.err" &
node_pid=$!
trap 'kill "$node_pid" 2>/dev/null' EXIT
for _ in $(seq 120); do [ -s "$work/ready" ] && break; sleep 0.25; done
node=$(cat "$work/ready" 2>/dev/null)
[ -n "$node" ] && [ -e "$node" ] || { value error=no-node; tail -3 "$work/node.err"; exit 1; }
value node "$node"
value seconds "$seconds"
run soak "$CM" bench soak --source "evdev:$node" --sensor "$sensor" --rate "$rate" --seconds "$seconds" --window "$window" --json
kill -0 "$node_pid" 2>/dev/null && value node_alive yes || value node_alive no
