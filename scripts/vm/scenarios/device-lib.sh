# Shared by the scenarios that play a device from scripts/vm/devices (hid-hub.sh, evdev-uinput.sh);
# sourced after they set cli, py, dev (the devices folder), work (a scratch folder) and ctl (the device
# program's control FIFO).
summ() { "$py" "$dev/csvstat.py" "$@"; }
info() { echo "INFO $*"; }

# unplug_mid_stream LABEL PID SOURCE: streams SOURCE's accelerometer, removes the device (program PID)
# through its control FIFO once 30 rows are out, and prints `RESULT LABEL unplug …`: the stream's exit
# status, its error and stderr lines, the rows written in all and before the removal. The caller clears
# its own copy of PID afterwards.
unplug_mid_stream() {
    local label=$1 pid=$2 source=$3 cli_pid st n rows_before rows errors lines
    timeout 90 "$cli" stream --source "$source" --sensor accelerometer --duration 60 --format csv \
        >"$work/unplug.csv" 2>"$work/unplug.err" &
    cli_pid=$!
    for _ in $(seq 240); do
        n=$(grep -c '^[0-9]' "$work/unplug.csv" 2>/dev/null); [ "${n:-0}" -ge 30 ] && break
        sleep 0.25
    done
    rows_before=$(grep -c '^[0-9]' "$work/unplug.csv")
    echo destroy >"$ctl"
    wait "$cli_pid"; st=$?
    wait "$pid" 2>/dev/null
    rows=$(grep -c '^[0-9]' "$work/unplug.csv")
    errors=$(grep -c '^Error:' "$work/unplug.err")
    lines=$(grep -c . "$work/unplug.err")
    sed 's/^/INFO unplug stderr| /' "$work/unplug.err" | head -5
    echo "RESULT $label unplug status=$st error_lines=$errors stderr_lines=$lines rows=$rows rows_at_unplug=$rows_before $(summ csv "$work/unplug.csv" | cut -d' ' -f2-4)"
}
