#!/bin/bash
# The user-space MPU driver (`--source i2c:…`, through /dev/i2c-N) against the kernel's own inv_mpu6050
# (`--source iio`): i2c-stub holds two chips, 0x68 bound to the kernel driver and 0x69 left to user
# space; the same register contents (known poses) are written into both and read both ways. Then what
# `coremotion sensors` says of the bus: a chip found, an address the kernel driver holds, another
# WHO_AM_I, no permission, an empty bus. The ST chips likewise against st_lsm6dsx: an LSM6DS3 (kernel
# at 0x51, user space at 0x6b) and an LSM9DS1's accelerometer and gyroscope (kernel `lsm9ds1-imu` at
# 0x50, user space at 0x6a; the kernel binds any address, the scan looks at the chips' own). And a
# BMI160 against the kernel's bmi160 (kernel at 0x52, user space at 0x53, named by address). Then the
# magnetometers: an AK8963 behind an MPU-9250's bypass (user space: the MPU at 0x69, the AK8963 at
# 0x0c) against the kernel's ak8975 (an `ak8963` at 0x52 once the BMI160 is gone), and the LSM9DS1's
# magnetometer (user space at 0x1c, read with the accelerometer and gyroscope at 0x6a) against st_magn
# (`lsm9ds1_magn` at 0x53). i2c-stub holds at most 10 chips. Last, on the stub reloaded with its
# bank parameters, the ICM-20948 (0x68) and the BNO055 (0x28), which Debian's kernel does not drive.
# Run: scripts/vm/run scripts/vm/scenarios/i2c-userspace.sh
. "$(dirname "$0")/lib.sh"

modprobe i2c-stub chip_addr=0x68,0x69,0x6a,0x6b,0x50,0x51,0x52,0x53,0x0c,0x1c && modprobe i2c-dev && modprobe inv-mpu6050-i2c || { value error=modprobe; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus; exit 1; }
value bus "$bus"
node=/dev/i2c-$bus
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$node" ] && break; sleep 0.2; done
value node "$node"
i2cset -f -y "$bus" 0x68 0x75 0x68                       # WHO_AM_I of an MPU-6050, both chips
i2cset -f -y "$bus" 0x69 0x75 0x68
i2cset -f -y "$bus" 0x1c 0x0f 0x3d                       # the LSM9DS1's magnetometer, next to its 0x6a
echo mpu6050 0x68 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
dev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do dev=$(iio_device mpu6050) && break; sleep 0.2; done
[ -n "$dev" ] || { value probed=no; dmesg | tail -n 20; exit 1; }
value probed yes
value iio "$(basename "$dev")"
value in_accel_scale "$(cat "$dev/in_accel_scale")"
value in_anglvel_scale "$(cat "$dev/in_anglvel_scale")"

# pose NAME AX AY AZ GX GY GZ: the same data registers in both chips; then both ways of reading them.
pose() {
    local name=$1; shift
    local regs=(0x3b 0x3d 0x3f 0x43 0x45 0x47) i=0
    for v in "$@"; do
        put16 "$bus" 0x68 "${regs[$i]}" "$v" be; put16 "$bus" 0x69 "${regs[$i]}" "$v" be
        i=$((i + 1))
    done
    for a in accel_x accel_y accel_z anglvel_x anglvel_y anglvel_z; do value "$name.in_${a}_raw" "$(cat "$dev/in_${a}_raw")"; done
    run "$name.iio" "$CM" stream --source iio --sensor raw --interval 0.05 --duration 2 --format csv
    run "$name.i2c" "$CM" stream --source "i2c:$node:0x69" --sensor raw --interval 0.05 --duration 4 --format csv
}
pose faceup 0 0 16384 0 0 470                           # face up, turning counter-clockwise at ~0.5 rad/s
pose upright 0 16384 0 0 0 0                            # upright in portrait
pose tilted 3000 -5000 15000 100 -200 -1234              # every axis, both signs
value user.PWR_MGMT_1 "$(i2cget -f -y "$bus" 0x69 0x6b)"   # what the user-space driver wrote
value user.SMPLRT_DIV "$(i2cget -f -y "$bus" 0x69 0x19)"
value user.GYRO_CONFIG "$(i2cget -f -y "$bus" 0x69 0x1b)"
value user.ACCEL_CONFIG "$(i2cget -f -y "$bus" 0x69 0x1c)"
run tilted.i2c50hz "$CM" stream --source "i2c:$node:0x69" --sensor accelerometer --interval 0.02 --duration 1 --format csv
value user.SMPLRT_DIV.50hz "$(i2cget -f -y "$bus" 0x69 0x19)"

# The ST chips: WHO_AM_I (0x0F) 0x69 (LSM6DS3) and 0x68 (LSM9DS1), kernel and user-space copies.
modprobe st_lsm6dsx_i2c || { value error=modprobe-st; exit 1; }
for a in 0x51 0x6b; do i2cset -f -y "$bus" $a 0x0f 0x69; done
for a in 0x50 0x6a; do i2cset -f -y "$bus" $a 0x0f 0x68; done
echo lsm6ds3 0x51 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
echo lsm9ds1-imu 0x50 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
# stpose CHIP KERNEL_ADDR USER_ADDR GYRO_REG ACCEL_REG IIO_PREFIX AX AY AZ GX GY GZ (little-endian words)
stpose() {
    local chip=$1 ka=$2 ua=$3 greg=$4 areg=$5 prefix=$6; shift 6
    local adev="" gdev="" _ i=0 v reg
    for _ in 1 2 3 4 5 6 7 8 9 10; do adev=$(iio_device "${prefix}_accel") && gdev=$(iio_device "${prefix}_gyro") && break; sleep 0.2; done
    if [ -z "$adev" ] || [ -z "$gdev" ]; then
        value "$chip.probed" no
        value "$chip.reason" "$(dmesg | grep -i -E 'st_lsm6dsx|lsm' | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')"
        return
    fi
    value "$chip.probed" yes
    value "$chip.in_accel_scale" "$(cat "$adev/in_accel_scale" 2>/dev/null || cat "$adev/in_accel_x_scale")"
    value "$chip.in_anglvel_scale" "$(cat "$gdev/in_anglvel_scale" 2>/dev/null || cat "$gdev/in_anglvel_x_scale")"
    for v in "$@"; do
        if [ $i -lt 3 ]; then reg=$(( areg + 2 * i )); else reg=$(( greg + 2 * (i - 3) )); fi
        put16 "$bus" "$ka" "$reg" "$v" le; put16 "$bus" "$ua" "$reg" "$v" le
        i=$((i + 1))
    done
    # Each sysfs read powers the sensor up: ~0.9 s under emulation, far more on a loaded host. The six
    # reads here are timed and the kernel's stream is given room for two rounds of them after 3 s.
    local began took
    began=$(cut -d' ' -f1 /proc/uptime)
    for a in x y z; do value "$chip.in_accel_${a}_raw" "$(cat "$adev/in_accel_${a}_raw")"; value "$chip.in_anglvel_${a}_raw" "$(cat "$gdev/in_anglvel_${a}_raw")"; done
    took=$(echo "$(cut -d' ' -f1 /proc/uptime) $began" | awk '{ printf "%.1f", $1 - $2 }')
    value "$chip.six_reads_s" "$took"
    run "$chip.iio" "$CM" stream --source "iio:${prefix}_accel" --sensor raw --interval 0.05 \
        --duration "$(echo "$took" | awk '{ printf "%.1f", 3 + 2 * $1 }')" --format csv
    run "$chip.i2c" "$CM" stream --source "i2c:$node:$ua" --sensor raw --interval 0.05 --duration 4 --format csv
}
stpose lsm6ds3 0x51 0x6b 0x22 0x28 lsm6ds3 3000 -5000 15000 100 -200 -1234
stpose lsm9ds1 0x50 0x6a 0x18 0x28 lsm9ds1-imu -2000 7000 -15000 -300 250 2345
# The BMI160: CHIP_ID 0x00 = 0xd1; gyroscope 0x0c…, accelerometer 0x12… (little-endian). The kernel's
# copy needs ACC_RANGE 0x41 = 0x03 (±2 g; the stub's 0 is no range). The user-space copy gets the
# PMU_STATUS (0x03) a real chip shows after the power-up commands (0x14: both in normal mode): the
# stub does not act on CMD, and the driver checks it.
modprobe bmi160_i2c || { value error=modprobe-bmi160; exit 1; }
for a in 0x52 0x53; do i2cset -f -y "$bus" $a 0x00 0xd1; done
echo bmi160 0x52 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
bdev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do bdev=$(iio_device bmi160) && break; sleep 0.2; done
if [ -n "$bdev" ]; then
    value bmi160.probed yes
    i2cset -f -y "$bus" 0x52 0x41 0x03
    i2cset -f -y "$bus" 0x53 0x03 0x14
    value bmi160.in_accel_scale "$(cat "$bdev/in_accel_scale" 2>/dev/null || cat "$bdev/in_accel_x_scale")"
    value bmi160.in_anglvel_scale "$(cat "$bdev/in_anglvel_scale" 2>/dev/null || cat "$bdev/in_anglvel_x_scale")"
    i=0
    for v in 1000 -4000 16000 -150 300 2000; do   # accelerometer x y z, gyroscope x y z
        if [ $i -lt 3 ]; then reg=$(( 0x12 + 2 * i )); else reg=$(( 0x0c + 2 * (i - 3) )); fi
        put16 "$bus" 0x52 "$reg" "$v" le; put16 "$bus" 0x53 "$reg" "$v" le
        i=$((i + 1))
    done
    for a in x y z; do value "bmi160.in_accel_${a}_raw" "$(cat "$bdev/in_accel_${a}_raw")"; value "bmi160.in_anglvel_${a}_raw" "$(cat "$bdev/in_anglvel_${a}_raw")"; done
    run bmi160.iio "$CM" stream --source iio:bmi160 --sensor raw --interval 0.05 --duration 3 --format csv
    run bmi160.i2c "$CM" stream --source "i2c:$node:0x53" --sensor raw --interval 0.05 --duration 4 --format csv
    value bmi160.user.ACC_CONF "$(i2cget -f -y "$bus" 0x53 0x40)"
    value bmi160.user.ACC_RANGE "$(i2cget -f -y "$bus" 0x53 0x41)"
    value bmi160.user.GYR_CONF "$(i2cget -f -y "$bus" 0x53 0x42)"
    value bmi160.user.GYR_RANGE "$(i2cget -f -y "$bus" 0x53 0x43)"
    value bmi160.user.CMD "$(i2cget -f -y "$bus" 0x53 0x7e)"
else
    value bmi160.probed no
fi
value lsm6ds3.user.CTRL1_XL "$(i2cget -f -y "$bus" 0x6b 0x10)"
value lsm6ds3.user.CTRL2_G "$(i2cget -f -y "$bus" 0x6b 0x11)"
value lsm6ds3.user.CTRL3_C "$(i2cget -f -y "$bus" 0x6b 0x12)"
value lsm9ds1.user.CTRL_REG1_G "$(i2cget -f -y "$bus" 0x6a 0x10)"
value lsm9ds1.user.CTRL_REG6_XL "$(i2cget -f -y "$bus" 0x6a 0x20)"
value lsm9ds1.user.CTRL_REG8 "$(i2cget -f -y "$bus" 0x6a 0x22)"

# The AK8963: WIA 0x48, ST1 DRDY, ST2 0 (no overflow), the fuse ROM's ASA (typical values), HX, HY,
# HZ (little-endian; also as SMBus words, whichever way the kernel reads them). The kernel's ak8975
# reads 14-bit counts (0.6 µT) and clamps them to ±8190; the user-space driver sets 16-bit mode
# (0.15 µT): both are compared in counts. The MPU-9250 for user space: 0x69 answers 0x71 meanwhile.
modprobe ak8975 && modprobe st_magn_i2c || { value error=modprobe-magn; exit 1; }
echo 0x52 > "/sys/bus/i2c/devices/i2c-$bus/delete_device" 2>/dev/null
for a in 0x52 0x0c; do
    i2cset -f -y "$bus" $a 0x00 0x48; i2cset -f -y "$bus" $a 0x02 0x01; i2cset -f -y "$bus" $a 0x09 0x00
    i2cset -f -y "$bus" $a 0x10 0xb0; i2cset -f -y "$bus" $a 0x11 0xb4; i2cset -f -y "$bus" $a 0x12 0xa5
    i=0
    for v in 1500 -2600 4100; do put16 "$bus" $a $(( 0x03 + 2 * i )) $v le; put16 "$bus" $a $(( 0x03 + 2 * i )) $v word; i=$((i + 1)); done
done
echo ak8963 0x52 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
kdev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do kdev=$(iio_device ak8963) && break; sleep 0.2; done
if [ -n "$kdev" ]; then
    value ak8963.probed yes
    for a in x y z; do
        value "ak8963.in_magn_${a}_raw" "$(cat "$kdev/in_magn_${a}_raw")"
        value "ak8963.in_magn_${a}_scale" "$(cat "$kdev/in_magn_${a}_scale" 2>/dev/null || cat "$kdev/in_magn_scale")"
    done
    run ak8963.iio "$CM" stream --source iio:ak8963 --sensor magnetometer --interval 0.1 --duration 2 --format csv
else
    value ak8963.probed no
    value ak8963.reason "$(dmesg | grep -i -E 'ak89|ak8975' | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')"
fi
i2cset -f -y "$bus" 0x69 0x75 0x71
run sensors.mpu9250 "$CM" sensors
run ak8963.i2c "$CM" stream --source "i2c:$node:0x69" --sensor raw --interval 0.05 --duration 4 --format csv
value ak8963.user.CNTL1 "$(i2cget -f -y "$bus" 0x0c 0x0a)"
value mpu9250.user.INT_PIN_CFG "$(i2cget -f -y "$bus" 0x69 0x37)"
value mpu9250.user.USER_CTRL "$(i2cget -f -y "$bus" 0x69 0x6a)"
i2cset -f -y "$bus" 0x69 0x75 0x68
# The LSM9DS1's magnetometer: WHO_AM_I 0x3d, STATUS_REG_M ZYXDA, OUT_X_L_M… (little-endian). st_magn
# reads the data with the register address's top bit set (SUB(7): the magnetometer's auto-increment),
# which i2c-stub takes literally: the data also at 0xa8… (measured: with 0x28… alone it reads 0). The
# user-space driver reads 0x28… one byte each. st_magn starts at 1 Hz and waits two periods per
# read: 80 Hz first.
for a in 0x53 0x1c; do
    i2cset -f -y "$bus" $a 0x0f 0x3d; i2cset -f -y "$bus" $a 0x27 0x08
    i=0
    for v in -1200 2100 -3300; do
        put16 "$bus" $a $(( 0x28 + 2 * i )) $v le; put16 "$bus" $a $(( 0xa8 + 2 * i )) $v le
        i=$((i + 1))
    done
done
echo lsm9ds1_magn 0x53 > "/sys/bus/i2c/devices/i2c-$bus/new_device"
mdev=""
for _ in 1 2 3 4 5 6 7 8 9 10; do mdev=$(iio_device lsm9ds1_magn) && break; sleep 0.2; done
if [ -n "$mdev" ]; then
    value lsm9ds1m.probed yes
    echo 80 > "$mdev/sampling_frequency" 2>/dev/null
    for a in x y z; do
        value "lsm9ds1m.in_magn_${a}_raw" "$(cat "$mdev/in_magn_${a}_raw")"
        value "lsm9ds1m.in_magn_${a}_scale" "$(cat "$mdev/in_magn_${a}_scale" 2>/dev/null || cat "$mdev/in_magn_scale")"
    done
    run lsm9ds1m.iio "$CM" stream --source iio:lsm9ds1_magn --sensor magnetometer --interval 0.1 --duration 3 --format csv
else
    value lsm9ds1m.probed no
    value lsm9ds1m.reason "$(dmesg | grep -i -E 'st_magn|lsm9ds1' | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')"
fi
run lsm9ds1m.i2c "$CM" stream --source "i2c:$node:0x6a" --sensor raw --interval 0.05 --duration 4 --format csv
value lsm9ds1m.user.CTRL_REG1_M "$(i2cget -f -y "$bus" 0x1c 0x20)"
value lsm9ds1m.user.CTRL_REG5_M "$(i2cget -f -y "$bus" 0x1c 0x24)"

# What `coremotion sensors` says, and the sources `i2c` and `i2c:BUS` pick.
run sensors.found "$CM" sensors
run busy.i2c "$CM" stream --source "i2c:$node:0x68" --sensor accelerometer --duration 1 --format csv
run first.i2c "$CM" stream --source i2c --sensor accelerometer --interval 0.05 --duration 1 --format csv
i2cset -f -y "$bus" 0x69 0x75 0x70                       # an MPU-6500
run sensors.mpu6500 "$CM" sensors
run mpu6500.i2c "$CM" stream --source "i2c:$node" --sensor raw --interval 0.05 --duration 1 --format csv
value user.ACCEL_CONFIG2 "$(i2cget -f -y "$bus" 0x69 0x1d)"
i2cset -f -y "$bus" 0x69 0x75 0x12                       # another chip
run sensors.other "$CM" sensors
run other.i2c "$CM" stream --source "i2c:$node:0x69" --sensor accelerometer --duration 1 --format csv
run sensors.denied setpriv --reuid 65534 --regid 65534 --clear-groups "$CM" sensors
run denied.i2c setpriv --reuid 65534 --regid 65534 --clear-groups "$CM" stream --source "i2c:$node:0x69" --sensor accelerometer --duration 1 --format csv

# An empty bus: the stub again, with its only chip at 0x50.
for a in 0x68 0x50 0x51 0x52 0x53; do echo $a > "/sys/bus/i2c/devices/i2c-$bus/delete_device"; done
modprobe -r inv-mpu6050-i2c; modprobe -r st_lsm6dsx_i2c; modprobe -r bmi160_i2c; modprobe -r ak8975; modprobe -r st_magn_i2c
modprobe -r i2c-stub || { value error=rmmod; exit 1; }
modprobe i2c-stub chip_addr=0x50 || { value error=modprobe2; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus2; exit 1; }
node=/dev/i2c-$bus
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$node" ] && break; sleep 0.2; done
value empty.node "$node"
run sensors.empty "$CM" sensors
run empty.i2c "$CM" stream --source i2c --sensor accelerometer --duration 1 --format csv

# --- banked chips: the ICM-20948 and the BNO055 (no kernel driver in Debian's kernel) ---
# i2c-stub again, its per-chip bank parameters emulating the chips' register banks: the ICM-20948 at
# 0x68 (REG_BANK_SEL 0x7f, bank in bits 5:4, registers 0x00…0x7e banked: four banks) and the BNO055
# at 0x28 (PAGE_ID 0x07, bit 0, registers 0x08…0x7f: two pages). i2c-stub switches banks on SMBus
# byte writes to the bank register and honours them for byte and word transfers only: I2C block
# reads and writes always reach bank 0 (the ICM-20948's data registers, the BNO055's page 0). The
# data are written as the chips would present them; what each driver wrote is read back per bank.
modprobe -r i2c-stub || { value error=rmmod2; exit 1; }
modprobe i2c-stub chip_addr=0x68,0x28 bank_reg=0x7f,0x07 bank_mask=0x30,0x01 bank_start=0x00,0x08 bank_end=0x7e,0x7f \
    || { value error=modprobe3; exit 1; }
bus=$(stub_bus) || { value error=no-stub-bus3; exit 1; }
node=/dev/i2c-$bus
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$node" ] && break; sleep 0.2; done
value banked.node "$node"
# ICM-20948 (bank 0): WHO_AM_I 0xea; ACCEL_XOUT_H 0x2d…, GYRO_XOUT_H 0x33… (big-endian); the
# AK09916's ST1, HX, HY, HZ, TMPS, ST2 in EXT_SLV_SENS_DATA_00… (0x3b…0x43, little-endian) as the
# chip's I2C master leaves them: i2c-stub cannot run the master, so they are written here. ST1 is
# 0x09: the driver's check of the magnetometer reads WIA2 (0x09) through slave 0 in that very
# register, and 0x09 is also an ST1 with DRDY (bit 0; bit 3 is reserved, and the driver ignores it).
# icmpose AX AY AZ GX GY GZ HX HY HZ (counts)
icmpose() {
    i2cset -f -y "$bus" 0x68 0x7f 0x00
    local regs=(0x2d 0x2f 0x31 0x33 0x35 0x37) i=0 v
    for v in "${@:1:6}"; do put16 "$bus" 0x68 "${regs[$i]}" "$v" be; i=$((i + 1)); done
    i=0
    for v in "${@:7:3}"; do put16 "$bus" 0x68 $(( 0x3c + 2 * i )) "$v" le; i=$((i + 1)); done
    i2cset -f -y "$bus" 0x68 0x3b 0x09; i2cset -f -y "$bus" 0x68 0x43 0x00
}
i2cset -f -y "$bus" 0x68 0x7f 0x00; i2cset -f -y "$bus" 0x68 0x00 0xea
icmpose 0 0 16384 0 0 470 200 -100 -300                  # face up, turning counter-clockwise at ~0.5 rad/s
# BNO055 (page 0): CHIP_ID 0xa0; SYS_STATUS 5 (fusion running, as the chip reports in NDOF);
# ACC_DATA 0x08, MAG_DATA 0x0e, GYR_DATA 0x14, QUA_DATA 0x20 (w x y z), GRV_DATA 0x2e (little-endian):
# m/s² ×100 (specific force: +9.81 up), µT ×16, °/s ×16, quaternion ×2^14.
# bnopose AX AY AZ MX MY MZ GX GY GZ QW QX QY QZ (GRV_DATA = ACC_DATA)
bnopose() {
    i2cset -f -y "$bus" 0x28 0x07 0x00
    local i=0 v
    for v in "${@:1:9}"; do put16 "$bus" 0x28 $(( 0x08 + 2 * i )) "$v" le; i=$((i + 1)); done
    i=0
    for v in "${@:10:4}"; do put16 "$bus" 0x28 $(( 0x20 + 2 * i )) "$v" le; i=$((i + 1)); done
    i=0
    for v in "${@:1:3}"; do put16 "$bus" 0x28 $(( 0x2e + 2 * i )) "$v" le; i=$((i + 1)); done
}
i2cset -f -y "$bus" 0x28 0x07 0x00; i2cset -f -y "$bus" 0x28 0x00 0xa0; i2cset -f -y "$bus" 0x28 0x39 0x05
# Face up, heading: the chip's quaternion is 0.7 rad about z (cos 0.35, sin 0.35 times 2^14).
bnopose 0 0 981 320 -160 -640 0 0 458 15391 0 0 5618
run sensors.banked "$CM" sensors
# 4 s: in 2 s a loaded CI machine's emulation gave too few rows of one sensor (the magnetometer is read
# through the chip's I2C master, the slowest).
run icm.faceup "$CM" stream --source "i2c:$node:0x68" --sensor raw --interval 0.05 --duration 4 --format csv
for b in 0 2 3; do
    i2cset -f -y "$bus" 0x68 0x7f $(( b << 4 ))
    for r in 0x00 0x01 0x03 0x04 0x05 0x06 0x07 0x10 0x11 0x14; do value "icm.bank$b.$r" "$(i2cget -f -y "$bus" 0x68 $r)"; done
done
i2cset -f -y "$bus" 0x68 0x7f 0x00
icmpose 0 16384 0 0 0 0 200 -100 -300                   # upright in portrait
run icm.upright "$CM" stream --source "i2c:$node:0x68" --sensor accelerometer --interval 0.05 --duration 2 --format csv
run bno.faceup "$CM" stream --source "i2c:$node:0x28" --sensor raw --interval 0.05 --duration 4 --format csv
for r in 0x07 0x3b 0x3d 0x3e 0x41 0x42; do value "bno.user.$r" "$(i2cget -f -y "$bus" 0x28 $r)"; done
run bno.own "$CM" stream --source "i2c:$node:0x28?motion=own" --sensor device-motion --reference-frame x-magnetic-north-z-vertical --interval 0.05 --duration 2 --format csv
value bno.own.OPR_MODE "$(i2cget -f -y "$bus" 0x28 0x3d)"
# Upright in portrait: 90° about x (cos 45°, sin 45° times 2^14); gravity along +y of the chip.
bnopose 0 981 0 320 -160 -640 0 0 0 11585 11585 0 0
run bno.ownupright "$CM" stream --source "i2c:$node:0x28?motion=own" --sensor device-motion --reference-frame x-magnetic-north-z-vertical --interval 0.05 --duration 1 --format csv
