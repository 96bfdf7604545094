#!/bin/bash
# A long run through a real driver: the MPU-6050 on i2c-stub (inv_mpu6050, polled sysfs) at its fastest
# rate (500 Hz) through CMMotionManager with `coremotion bench soak`: lost samples, CPU and RSS per
# window. Before the SourceWorker fix (d36f1f1) the cost per delivery grew until the stack overflowed.
#   scripts/vm/run --timeout 4000 scripts/vm/scenarios/i2c-mpu6050-soak.sh [SECONDS [WINDOW [SENSOR [DRIVER [RATE]]]]]
# (the tests run 90 s in 15 s windows; by hand, e.g. 3600 60 for the hour). DRIVER `user` leaves the chip
# to the user-space driver (`--source i2c:/dev/i2c-N:0x68`, reading the registers through i2c-dev) instead
# of binding inv_mpu6050 (`kernel`, the default); RATE defaults to 500 Hz.
. "$(dirname "$0")/lib.sh"
seconds=${1:-90} window=${2:-15} sensor=${3:-accelerometer} driver=${4:-kernel} rate=${5:-500}
soak_memory_setup

modprobe i2c-stub chip_addr=0x68 && modprobe i2c-dev || { value error=modprobe; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus; exit 1; }
i2cset -f -y "$bus" 0x68 0x75 0x68
put16 "$bus" 0x68 0x3f 16384 be                          # face up
put16 "$bus" 0x68 0x47 94 be                             # turning about Z at about 0.1 rad/s
value seconds "$seconds"
value driver "$driver"
if [ "$driver" = user ]; then
    node=/dev/i2c-$bus
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$node" ] && break; sleep 0.2; done
    run soak "$CM" bench soak --source "i2c:$node:0x68" --sensor "$sensor" --rate "$rate" --seconds "$seconds" --window "$window" --json
    exit 0
fi
modprobe inv-mpu6050-i2c || { value error=modprobe; exit 1; }
echo mpu6050 0x68 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
dev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do dev=$(iio_device mpu6050) && break; sleep 0.2; done
[ -n "$dev" ] || { value probed=no; exit 1; }
value probed yes
run soak "$CM" bench soak --source iio --sensor "$sensor" --rate "$rate" --seconds "$seconds" --window "$window" --json
value sampling_frequency "$(cat "$dev/sampling_frequency")"
