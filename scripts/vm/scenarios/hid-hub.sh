#!/usr/bin/env bash
# A HID sensor hub (scripts/vm/devices/hid_sensor_hub.py through /dev/uhid) met by the kernel's real
# hid-sensor-hub and hid-sensor-{accel-3d,gyro-3d,magn-3d,press} drivers, read by the project's CLI.
# Runs inside the VM (scripts/vm/run scripts/vm/scenarios/hid-hub.sh), as root.
#
# Prints `RESULT hid …` lines (format and expected values: scripts/vm/devices/README.md) and
# `INFO …` lines for people. Exit status 0 when every step could be run (the values are judged by
# the tests that read the RESULT lines), 1 when the set-up failed (`RESULT hid setup fail …`).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
dev=$root/scripts/vm/devices
cli=${COREMOTION_BIN:-${COREMOTION_CLI:-$root/.build/debug/coremotion}}
py=/usr/bin/python3; [ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/hid-hub.XXXXXX)
ctl=$work/control log=$work/hub.log
. "$(dirname "$0")/device-lib.sh"
fail_setup() { echo "RESULT hid setup fail $*"; cleanup; exit 1; }
hub_pid=
cleanup() {
    [ -n "$hub_pid" ] && kill "$hub_pid" 2>/dev/null && wait "$hub_pid" 2>/dev/null
    hub_pid=
}
trap cleanup EXIT

[ -x "$cli" ] || fail_setup "no CLI at $cli (swift build --product coremotion)"
for m in uhid hid-sensor-hub hid-sensor-accel-3d hid-sensor-gyro-3d hid-sensor-magn-3d hid-sensor-press; do
    modprobe "$m" 2>"$work/modprobe.err" || fail_setup "modprobe $m: $(head -1 "$work/modprobe.err")"
done

"$py" "$dev/hid_sensor_hub.py" --pose face-up --control "$ctl" --log "$log" 2>"$work/hub.err" &
hub_pid=$!

# The four IIO devices, by name.
declare -A iio
for _ in $(seq 240); do
    for d in /sys/bus/iio/devices/iio:device*; do
        [ -f "$d/name" ] && iio[$(cat "$d/name")]=$d
    done
    [ -n "${iio[accel_3d]:-}" ] && [ -n "${iio[gyro_3d]:-}" ] && [ -n "${iio[magn_3d]:-}" ] && [ -n "${iio[press]:-}" ] && break
    kill -0 "$hub_pid" 2>/dev/null || fail_setup "the hub program exited: $(tail -3 "$work/hub.err")"
    sleep 0.5
done
[ -n "${iio[accel_3d]:-}" ] || fail_setup "no accel_3d IIO device after 60 s ($(dmesg | grep -i hid | tail -3 | tr '\n' ' '))"
for n in accel_3d gyro_3d magn_3d press; do
    d=${iio[$n]:-}
    if [ -n "$d" ]; then
        trig=$(cat "$d/trigger/current_trigger" 2>/dev/null || echo none)
        buf=$([ -d "$d/buffer" ] || [ -d "$d/buffer0" ] && echo yes || echo no)
        echo "RESULT hid device $n $(basename "$d") trigger=$trig buffer=$buf"
    else
        echo "RESULT hid device $n missing"
    fi
done
info "accel_3d scale $(cat "${iio[accel_3d]}/in_accel_scale") raw z $(cat "${iio[accel_3d]}/in_accel_z_raw")"

# --- coremotion sensors ---------------------------------------------------------------------------
timeout 60 "$cli" sensors >"$work/sensors.out" 2>"$work/sensors.err"; st=$?
sed 's/^/INFO sensors| /' "$work/sensors.out"
found() { grep -q -- "$1" "$work/sensors.out" && echo 1 || echo 0; }
echo "RESULT hid sensors status=$st accel_3d=$(found accel_3d) gyro_3d=$(found gyro_3d) magn_3d=$(found magn_3d) press=$(found 'pressure sensor press')"
p=$(grep -A1 'pressure sensor press' "$work/sensors.out" | grep -o 'now [-0-9.]*' | head -1 | cut -d' ' -f2)
echo "RESULT hid pressure now=${p:-none}"

# --- one stream: stream NAME SENSOR [ARGS...] -> $work/NAME.csv, .err, status ----------------------
polls() { summ count-log "$log" get_report rtype=2; }
stream() {
    local name=$1 sensor=$2; shift 2
    local before; before=$(polls)
    timeout 90 "$cli" stream --source iio --sensor "$sensor" --duration 3 --format csv "$@" \
        >"$work/$name.csv" 2>"$work/$name.err"
    local st=$?
    local after; after=$(polls)
    [ -s "$work/$name.err" ] && sed "s/^/INFO $name stderr| /" "$work/$name.err" | head -5
    echo "RESULT hid $name $sensor status=$st $(summ csv "$work/$name.csv" --skip 0.5) polls=$((after - before))"
}
pose() { echo "$1" >"$ctl"; sleep 0.5; }

# Face up: (0, 0, -1) g; gyro 0; magnetometer (20, 0, -40) µT as sent.
stream face-up accelerometer
stream face-up gyro
stream face-up magnetometer
# Upright in portrait: (0, -1, 0) g.
pose pose=upright
stream upright accelerometer
# Spinning at +0.5 rad/s about z, face up.
pose pose=spin
stream spin gyro
stream spin accelerometer
pose pose=face-up

# --- rate changes: what the kernel asked the hub for, and what came ------------------------------
# (The hub_interval_ms line comes first: a reader looking for the first 'RESULT hid rate-0.05 ' line
# gets it, and 'RESULT hid rate-0.05 accelerometer ' is the stream's.)
for iv in 0.05 0.02 0.01; do
    out=$(stream "rate-$iv" accelerometer --interval "$iv" --duration 4)
    echo "RESULT hid rate-$iv hub_interval_ms=$(summ log "$log" set_feature sensor=accel --get interval_ms)"
    echo "$out"
done

# --- CMAltimeter: the dashboard's altitude stream (CMAltimeter on the first IIO pressure sensor, the
# hub's barometer), read over its WebSocket. After a few seconds at 101.325 kPa the hub's pressure
# drops by 12 Pa: about +1.0 m by the International Standard Atmosphere. The page also starts the
# accelerometer beside the dashboard's orientation watch: a second demand on accel_3d, which reopens
# its buffer (busy= counts "Device or resource busy" fallbacks to polling; there must be none). -----
ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null
port=18765
polls_by() { summ count-log "$log" get_report rtype=2 rnum="$1"; }
a0=$(polls_by 1) g0=$(polls_by 2) p0=$(polls_by 4)
timeout 120 "$cli" dashboard --source iio --port "$port" >"$work/dash.out" 2>"$work/dash.err" &
dash_pid=$!
"$py" "$dev/dashboard_client.py" --port "$port" --start altitude --start accelerometer --seconds 100 >"$work/alt.out" 2>"$work/alt.err" &
client_pid=$!
alt_rows() { grep -c '^altitude' "$work/alt.out" 2>/dev/null; }
waitrows() { for _ in $(seq 240); do [ "$(alt_rows)" -ge "$1" ] && return 0; kill -0 "$client_pid" 2>/dev/null || return 1; sleep 0.25; done; return 1; }
waitrows 3
echo "press=101.313" >"$ctl"
waitrows $(( $(alt_rows) + 5 ))
kill "$client_pid" 2>/dev/null; wait "$client_pid" 2>/dev/null
kill "$dash_pid" 2>/dev/null; wait "$dash_pid" 2>/dev/null
a1=$(polls_by 1) g1=$(polls_by 2) p1=$(polls_by 4)
sed 's/^/INFO altimeter| /' "$work/alt.out" | head -20
[ -s "$work/alt.err" ] && sed 's/^/INFO altimeter stderr| /' "$work/alt.err" | head -3
[ -s "$work/dash.err" ] && sed 's/^/INFO dashboard stderr| /' "$work/dash.err" | head -3
alt_rows=$(grep -c '^altitude' "$work/alt.out")
first=$(grep '^altitude' "$work/alt.out" | head -1 | awk '{print "first_rel=" $3 " first_kpa=" $4}')
last=$(grep '^altitude' "$work/alt.out" | tail -1 | awk '{print "last_rel=" $3 " last_kpa=" $4}')
echo "RESULT hid altimeter rows=$alt_rows ${first:-first_rel=none first_kpa=none} ${last:-last_rel=none last_kpa=none} errors=$(grep -c '^ERROR' "$work/alt.out") accel_rows=$(grep -c '^accelerometer' "$work/alt.out") busy=$(grep -c 'resource busy' "$work/dash.err") accel_polls=$((a1 - a0)) gyro_polls=$((g1 - g0)) press_polls=$((p1 - p0))"
echo "press=101.325" >"$ctl"

# --- CMBatchedSensorManager (`coremotion batches`, Apple's async sequence) on the accelerometer's
# kernel buffer, face up: three batches of about one second at accelerometerDataFrequency. After the
# rate changes, which expect the driver's defaults. -------------------------------------------------
before=$(polls)
timeout 90 "$cli" batches --source iio --count 3 --duration 30 >"$work/batches.out" 2>"$work/batches.err"; st=$?
after=$(polls)
sed 's/^/INFO batches| /' "$work/batches.out"
[ -s "$work/batches.err" ] && sed 's/^/INFO batches stderr| /' "$work/batches.err" | head -5
hz=$(sed -n 's/^# accelerometer batches at \([0-9]*\) Hz$/\1/p' "$work/batches.out")
echo "RESULT hid batches status=$st frequency=${hz:-none} batches=$(grep -c '^[0-9]' "$work/batches.out") polls=$((after - before)) hub_interval_ms=$(summ log "$log" set_feature sensor=accel --get interval_ms)"
grep '^[0-9]' "$work/batches.out" | while IFS=, read -r n count first last min_step max_step x y z; do
    echo "RESULT hid batch-$n count=$count first=$first last=$last min_step=$min_step max_step=$max_step x=$x y=$y z=$z"
done

# --- unplug mid-stream: exit 1, one Error: line, the rows before it kept ---------------------------
unplug_mid_stream hid "$hub_pid" iio; hub_pid=
echo "RESULT hid done"
