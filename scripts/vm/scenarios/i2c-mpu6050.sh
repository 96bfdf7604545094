#!/bin/bash
# The real inv_mpu6050 driver on i2c-stub (a chip at 0x68 whose registers are plain memory): known
# poses written into the data registers, read through `coremotion stream` (CMMotionManager), and two
# faults (the device deleted mid-stream; a user without permission to the sysfs attributes).
# Run: scripts/vm/run scripts/vm/scenarios/i2c-mpu6050.sh
. "$(dirname "$0")/lib.sh"

modprobe i2c-stub chip_addr=0x68 && modprobe i2c-dev && modprobe inv-mpu6050-i2c || { value error=modprobe; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus; exit 1; }
value bus "$bus"
i2cset -f -y "$bus" 0x68 0x75 0x68                       # WHO_AM_I of an MPU-6050
echo mpu6050 0x68 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
dev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do dev=$(iio_device mpu6050) && break; sleep 0.2; done
[ -n "$dev" ] || { value probed=no; dmesg | tail -n 20; exit 1; }
value probed yes
for a in in_accel_scale in_anglvel_scale sampling_frequency sampling_frequency_available in_accel_mount_matrix; do
    value "$a" "$(cat "$dev/$a")"
done
gscale=$(cat "$dev/in_anglvel_scale")

# pose NAME AX AY AZ GX GY GZ: register values (LSB) written AFTER the probe, with the chip powered on
# by a first read (the driver writes its configuration registers at probe and on power-up, never the
# data registers, which on i2c-stub keep what we write).
pose() {
    local name=$1; shift
    local regs=(0x3b 0x3d 0x3f 0x43 0x45 0x47) i=0
    for v in "$@"; do put16 "$bus" 0x68 "${regs[$i]}" "$v" be; i=$((i + 1)); done
    value "$name.in_accel_x_raw" "$(cat "$dev/in_accel_x_raw")"
    value "$name.in_accel_y_raw" "$(cat "$dev/in_accel_y_raw")"
    value "$name.in_accel_z_raw" "$(cat "$dev/in_accel_z_raw")"
    value "$name.in_anglvel_z_raw" "$(cat "$dev/in_anglvel_z_raw")"
}

# Spin about Z at +0.5 rad/s: the gyro Z register at the driver's scale (rad/s per LSB).
spin=$(awk -v s="$gscale" 'BEGIN { printf "%d", 0.5 / s + 0.5 }')
value spin.register "$spin"

pose faceup 0 0 16384 0 0 0                             # lying face up at rest: +1 g specific force on Z
run faceup.accel "$CM" stream --source iio --sensor accelerometer --interval 0.05 --duration 3 --format csv
run faceup.gyro "$CM" stream --source iio --sensor gyro --interval 0.05 --duration 3 --format csv
pose upright 0 16384 0 0 0 0                            # upright in portrait: +1 g on Y
run upright.raw "$CM" stream --source iio --sensor raw --interval 0.05 --duration 3 --format csv
pose spin 0 0 16384 0 0 "$spin"                          # face up, turning counter-clockwise seen from above
run spin.raw "$CM" stream --source iio --sensor raw --interval 0.05 --duration 3 --format csv

# The range changed by another process mid-stream (±2 g → ±4 g): the same register value is now twice
# the acceleration; the project re-reads the scale (once a second) and follows.
pose faceup 0 0 16384 0 0 0
out=$(mktemp) err=$(mktemp)
"$CM" stream --source iio --sensor accelerometer --interval 0.05 --duration 8 --format csv > "$out" 2> "$err" &
pid=$!
for _ in $(seq 1 100); do [ "$(grep -c '^[0-9]' "$out")" -ge 10 ] && break; sleep 0.2; done
value range.changed_at "$(cut -d' ' -f1 /proc/uptime)"
echo 0.001196 > "$dev/in_accel_scale"
value range.in_accel_scale "$(cat "$dev/in_accel_scale")"
wait "$pid"; status=$?
echo "@@ begin range.accel"; cat "$out"; echo "@@ stderr range.accel"; cat "$err"; echo "@@ end range.accel status=$status"
echo 0.000598 > "$dev/in_accel_scale"

# A user without permission to the sensor's attributes (sysfs makes them 0444; a site may restrict them).
pose faceup 0 0 16384 0 0 0
chmod 0400 "$dev"/in_accel_*_raw
run denied.accel setpriv --reuid 65534 --regid 65534 --clear-groups "$CM" stream --source iio --sensor accelerometer --interval 0.05 --duration 1 --format csv
chmod 0444 "$dev"/in_accel_*_raw
value denied.file "$dev/in_accel_x_raw"

# The device deleted mid-stream: the rows before it are kept, then one error and status 1.
out=$(mktemp) err=$(mktemp)
"$CM" stream --source iio --sensor accelerometer --interval 0.05 --duration 30 --format csv > "$out" 2> "$err" &
pid=$!
for _ in $(seq 1 100); do [ "$(grep -c '^[0-9]' "$out")" -ge 10 ] && break; sleep 0.2; done
value unplug.rows_before_delete "$(grep -c '^[0-9]' "$out")"
echo 0x68 > "/sys/bus/i2c/devices/i2c-$bus/delete_device"
wait "$pid"; status=$?
echo "@@ begin unplug.accel"; cat "$out"; echo "@@ stderr unplug.accel"; cat "$err"; echo "@@ end unplug.accel status=$status"
value unplug.device_gone "$([ -e "$dev" ] && echo no || echo yes)"
