#!/bin/bash
# The other I2C motion chip drivers of Debian's kernel on i2c-stub: each is instantiated at its own
# stub address with its identity register set; those that probe get a face-up pose (+1 g of specific
# force on Z, and +0.5 rad/s about Z for gyros) written into their data registers and read through
# `coremotion stream --source iio:NAME` (CMMotionManager). Those that do not probe say why.
# Run: scripts/vm/run scripts/vm/scenarios/i2c-chips.sh
. "$(dirname "$0")/lib.sh"

modprobe i2c-stub chip_addr=0x69,0x6a,0x0e,0x1d,0x10,0x18 && modprobe i2c-dev || { value error=modprobe; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus; exit 1; }
value bus "$bus"

# scale DEV TYPE AXIS: the channel's scale (shared or per axis).
scale() { cat "$1/in_$2_scale" 2>/dev/null || cat "$1/in_$2_$3_scale"; }
# write3 ADDR REG SHIFT ENDIAN X Y Z: three 16-bit registers (put16's ENDIAN), each value shifted left
# (left-justified data).
write3() {
    local addr=$1 reg=$2 shift=$3 endian=$4; shift 4
    for v in "$@"; do put16 "$bus" "$addr" "$reg" $(( v << shift )) "$endian"; reg=$(( reg + 2 )); done
}

# chip NAME MODULE ADDR WAI_REG WAI_VALUE ACCEL_REG SHIFT ENDIAN ACCEL_IIO_NAME [GYRO_REG GYRO_IIO_NAME]
chip() {
    local name=$1 module=$2 addr=$3 wreg=$4 wval=$5 areg=$6 shift=$7 endian=$8 aname=$9 greg=${10:-} gname=${11:-}
    modprobe "$module" || { value "$name.probed" "no module $module"; return; }
    i2cset -f -y "$bus" "$addr" "$wreg" "$wval"
    echo "$name $addr" > "/sys/bus/i2c/devices/i2c-$bus/new_device"
    local adev="" gdev="" _
    for _ in 1 2 3 4 5 6 7 8 9 10; do adev=$(iio_device "$aname") && break; sleep 0.2; done
    if [ -z "$adev" ]; then
        value "$name.probed" no
        value "$name.reason" "$(dmesg | grep -E "$(printf '%s|0-%04x' "$name" "$addr")" | grep -i -E 'fail|error|mismatch|invalid' | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')"
        return
    fi
    value "$name.probed" yes
    value "$name.buffered" "$([ -e "$adev/buffer" ] && echo yes || echo no)"
    value "$name.trigger" "$(cat "$adev/trigger/current_trigger" 2>/dev/null)"
    [ "$name" = bmi160 ] && i2cset -f -y "$bus" "$addr" 0x41 0x03   # ACC_RANGE ±2 g (the stub's 0 is no range: scale reads fail)
    value "$name.driver" "$(basename "$(readlink "/sys/bus/i2c/devices/$bus-$(printf '%04x' "$addr")/driver")")"
    local s counts
    s=$(scale "$adev" accel z)
    value "$name.in_accel_scale" "$s"
    counts=$(awk -v s="$s" 'BEGIN { printf "%d", 9.80665 / s + 0.5 }')
    write3 "$addr" "$areg" "$shift" "$endian" 0 0 "$counts"
    value "$name.faceup.in_accel_z_raw" "$(cat "$adev/in_accel_z_raw")"
    value "$name.faceup.counts" "$counts"
    if [ -n "$greg" ]; then
        gdev=$(iio_device "$gname")
        s=$(scale "$gdev" anglvel z)
        value "$name.in_anglvel_scale" "$s"
        counts=$(awk -v s="$s" 'BEGIN { printf "%d", 0.5 / s + 0.5 }')
        write3 "$addr" "$greg" 0 "$endian" 0 0 "$counts"
        value "$name.spin.in_anglvel_z_raw" "$(cat "$gdev/in_anglvel_z_raw")"
        run "$name.raw" "$CM" stream --source "iio:$aname" --sensor raw --interval 0.01 --duration 3 --format csv
    else
        run "$name.accel" "$CM" stream --source "iio:$aname" --sensor accelerometer --interval 0.01 --duration 3 --format csv
    fi
}

# Bosch BMI160: CHIP_ID 0x00 = 0xD1; gyro data 0x0C.., accel 0x12.. (little-endian).
chip bmi160 bmi160_i2c 0x69 0x00 0xd1 0x12 0 le bmi160 0x0c bmi160
# ST LSM6DS3: WHO_AM_I 0x0F = 0x69; OUTX_L_G 0x22.., OUTX_L_XL 0x28.. (little-endian); two IIO devices.
chip lsm6ds3 st_lsm6dsx_i2c 0x6a 0x0f 0x69 0x28 0 le lsm6ds3_accel 0x22 lsm6ds3_gyro
# Kionix KXCJK-1013: WHO_AM_I 0x0F = 0x11; XOUT_L 0x06.. (12 bits, left-justified), read as SMBus words.
chip kxcjk1013 kxcjk-1013 0x0e 0x0f 0x11 0x06 4 word kxcjk1013
# Bosch BMC150 accelerometer (BMA255 core): CHIP_ID 0x00 = 0xFA; ACCD_X_LSB 0x02.. (12 bits, left-justified).
chip bmc150_accel bmc150-accel-i2c 0x10 0x00 0xfa 0x02 4 le bmc150_accel
# ST LIS3DH (st_accel): WHO_AM_I 0x0F = 0x33; its I2C regmap sets bit 7 of every register address
# (auto-increment), so the driver reads 0x8F and OUT_X_L at 0xA8.. (12 bits, left-justified).
i2cset -f -y "$bus" 0x18 0x0f 0x33
chip lis3dh st_accel_i2c 0x18 0x8f 0x33 0xa8 4 le lis3dh
# NXP MMA8452Q: WHO_AM_I 0x0D = 0x2A. Its probe sets CTRL_REG2's software-reset bit and waits for the
# chip to clear it; i2c-stub's memory keeps it set, so the probe times out (-110).
chip mma8452 mma8452 0x1d 0x0d 0x2a 0x01 4 be mma8452
