# Shared helpers of the VM scenarios (sourced; bash). Every line meant for the test starts with "@@ ":
#   @@ value KEY=VALUE                  a fact (sysfs attribute, register, probe result)
#   @@ begin NAME                       then the command's standard output, verbatim
#   @@ stderr NAME                      then its standard error, verbatim
#   @@ end NAME status=N                its exit status
# Tests/LinuxKernelTests parses these; everything else is commentary for people.

# The project's CLI: COREMOTION_BIN (set by the tests) or COREMOTION_CLI, else the debug build of the current directory.
CM=${CM:-${COREMOTION_BIN:-${COREMOTION_CLI:-$PWD/.build/debug/coremotion}}}
[ -x "$CM" ] || { echo "@@ value error=no coremotion at $CM (swift build --product coremotion)"; exit 2; }

value() { echo "@@ value $1=$2"; }

# soak_memory_setup: for the soak scenarios. Debian's kernel backs anonymous memory with 2 MB transparent
# huge pages whenever it can ("always"): one such fault shows as an RSS step of exactly 2048 kB with nothing
# leaking (seen at minute 7 of an hour). Most distributions use "madvise"; so does a soak, so that RSS
# measures the process's own growth. Reports the setting as `thp`.
soak_memory_setup() {
    echo madvise > /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
    value thp "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
}

# run NAME COMMAND...: runs it, reporting its output, error output and status in blocks.
run() {
    local name=$1; shift
    local out err status
    out=$(mktemp) err=$(mktemp)
    "$@" > "$out" 2> "$err"
    status=$?
    echo "@@ begin $name"; cat "$out"
    echo "@@ stderr $name"; cat "$err"
    echo "@@ end $name status=$status"
    rm -f "$out" "$err"
    return 0
}

# put16 BUS ADDR REG VALUE ENDIAN: a signed 16-bit register pair. ENDIAN be: REG holds the high byte
# (drivers reading bytes, e.g. with I2C block reads); le: REG holds the low byte; word: one SMBus word
# write at REG, for drivers that read with SMBus word reads (i2c-stub keeps a word per register: a
# word read at REG returns what a word write at REG stored, not the bytes of REG and REG+1).
put16() {
    local bus=$1 addr=$2 reg=$3 v=$4 endian=${5:-be}
    local u=$(( v & 0xffff )) hi lo
    hi=$(( u >> 8 )) lo=$(( u & 0xff ))
    if [ "$endian" = word ]; then
        i2cset -f -y "$bus" "$addr" "$reg" "$u" w
    elif [ "$endian" = be ]; then
        i2cset -f -y "$bus" "$addr" "$reg" "$hi" && i2cset -f -y "$bus" "$addr" $(( reg + 1 )) "$lo"
    else
        i2cset -f -y "$bus" "$addr" "$reg" "$lo" && i2cset -f -y "$bus" "$addr" $(( reg + 1 )) "$hi"
    fi
}

# The bus i2c-stub created (its name is "SMBus stub driver").
stub_bus() {
    local d
    for d in /sys/bus/i2c/devices/i2c-*; do
        if grep -q "SMBus stub driver" "$d/name" 2>/dev/null; then echo "${d##*i2c-}"; return 0; fi
    done
    return 1
}

# iio_device NAME: the sysfs folder of the IIO device with that name.
iio_device() {
    local d
    for d in /sys/bus/iio/devices/iio:device*; do
        [ "$(cat "$d/name" 2>/dev/null)" = "$1" ] && { echo "$d"; return 0; }
    done
    return 1
}
