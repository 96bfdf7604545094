#!/bin/bash
# A long run through the kernel's HID sensor drivers: a sensor hub made through /dev/uhid
# (scripts/vm/devices/hid_sensor_hub.py, face up, turning at 0.1 rad/s) met by hid-sensor-hub and
# hid-sensor-{accel,gyro,magn}-3d, whose IIO buffers `--source iio` reads as device motion into a
# CMMotionManager with `coremotion bench soak`: lost samples, CPU and RSS per window.
#   scripts/vm/run --timeout 4000 scripts/vm/scenarios/hid-soak.sh [SECONDS [WINDOW [SENSOR [RATE]]]]
# (by hand, e.g. 3600 60 for the hour). SENSOR defaults to device-motion, RATE to 50 Hz (asked of the
# hub through sampling_frequency, which the kernel turns into the hub's report interval).
. "$(dirname "$0")/lib.sh"
seconds=${1:-60} window=${2:-15} sensor=${3:-device-motion} rate=${4:-50}
soak_memory_setup
root=$(cd "$(dirname "$0")/../../.." && pwd)
py=/usr/bin/python3; [ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/hid-soak.XXXXXX)
for m in uhid hid-sensor-hub hid-sensor-accel-3d hid-sensor-gyro-3d hid-sensor-magn-3d; do
    modprobe "$m" || { value error="modprobe-$m"; exit 1; }
done
"$py" "$root/scripts/vm/devices/hid_sensor_hub.py" --accel 0,0,-1 --gyro 0,0,0.1 --sensors accel,gyro,magn \
    >"$work/hub.out" 2>"$work/hub.err" &
hub_pid=$!
trap 'kill "$hub_pid" 2>/dev/null' EXIT
found=""
for _ in $(seq 240); do
    found=$(cat /sys/bus/iio/devices/iio:device*/name 2>/dev/null | sort | tr '\n' ' ')
    case "$found" in *accel_3d*gyro_3d*magn_3d*) break ;; esac
    kill -0 "$hub_pid" 2>/dev/null || { value error=hub-exited; tail -3 "$work/hub.err"; exit 1; }
    sleep 0.5
done
value devices "$found"
value seconds "$seconds"
run soak "$CM" bench soak --source iio --sensor "$sensor" --rate "$rate" --seconds "$seconds" --window "$window" --json
kill -0 "$hub_pid" 2>/dev/null && value hub_alive yes || value hub_alive no
