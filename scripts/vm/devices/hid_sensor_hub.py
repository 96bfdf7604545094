#!/usr/bin/env python3
"""Plays the firmware of a HID sensor hub through /dev/uhid (Linux's user-space HID), so that the
kernel's own drivers (hid-sensor-hub, hid-sensor-accel-3d, -gyro-3d, -magn-3d, -press) bind to it
and create buffered IIO devices (accel_3d, gyro_3d, magn_3d, press) with their triggers, as on a
laptop or tablet whose sensors sit behind Intel ISH or AMD SFH.

Written from the public specifications only: the uhid ABI (include/uapi/linux/uhid.h), the HID
1.11 report descriptor format and the HID Usage Tables' Sensor page (0x20). Python 3 standard
library, run as root.

Conventions (HID sensor hubs follow Windows'): acceleration is the gravity vector, in g; a device
lying face up at rest reads (0, 0, -1) g, held upright in portrait (0, -1, 0) g. Angular velocity in
rad/s on the command line (the hub reports degrees/s), right-handed about the same axes. Magnetic
flux in microtesla on the command line (the hub reports milligauss). Pressure in kPa (the hub
reports bar with a unit exponent).

Usage examples:
  hid_sensor_hub.py --pose face-up --duration 30
  hid_sensor_hub.py --accel 0,-1,0 --gyro 0,0,0.5 --destroy-after 3
  hid_sensor_hub.py --pose face-up --at 2:pose=upright --at 4:destroy
See scripts/vm/devices/README.md.
"""

import argparse
import json
import os
import select
import signal
import struct
import sys
import time

from control import ControlFifo

# ---------------------------------------------------------------------------------------------
# uhid ABI (include/uapi/linux/uhid.h): every event is a packed struct uhid_event, a u32 type then
# a union whose largest member is uhid_create2_req (128 + 64 + 64 + 2 + 2 + 4*4 + 4096 = 4372
# bytes); the union itself is not packed and holds a u64 (uhid_start_req), so it is padded to 4376
# and the event is 4380 bytes (what sizeof(struct uhid_event) gives on x86-64).
UHID_DESTROY = 1
UHID_START = 2
UHID_STOP = 3
UHID_OPEN = 4
UHID_CLOSE = 5
UHID_OUTPUT = 6
UHID_GET_REPORT = 9
UHID_GET_REPORT_REPLY = 10
UHID_CREATE2 = 11
UHID_INPUT2 = 12
UHID_SET_REPORT = 13
UHID_SET_REPORT_REPLY = 14

UHID_FEATURE_REPORT = 0
UHID_OUTPUT_REPORT = 1
UHID_INPUT_REPORT = 2

HID_MAX_DESCRIPTOR_SIZE = 4096
UHID_DATA_MAX = 4096
UHID_EVENT_SIZE = 4380

BUS_USB = 0x03
BUS_VIRTUAL = 0x06

EVENT_NAMES = {UHID_START: "START", UHID_STOP: "STOP", UHID_OPEN: "OPEN", UHID_CLOSE: "CLOSE",
               UHID_OUTPUT: "OUTPUT", UHID_GET_REPORT: "GET_REPORT", UHID_SET_REPORT: "SET_REPORT"}

# ---------------------------------------------------------------------------------------------
# HID report descriptor items (HID 1.11, 6.2.2): short items, prefix = tag | type | size code.
MAIN_INPUT, MAIN_FEATURE, MAIN_COLLECTION, MAIN_END_COLLECTION = 0x80, 0xB0, 0xA0, 0xC0
G_USAGE_PAGE, G_LOGICAL_MIN, G_LOGICAL_MAX = 0x04, 0x14, 0x24
G_UNIT_EXPONENT, G_UNIT, G_REPORT_SIZE, G_REPORT_ID, G_REPORT_COUNT = 0x54, 0x64, 0x74, 0x84, 0x94
L_USAGE = 0x08

COLLECTION_PHYSICAL, COLLECTION_APPLICATION, COLLECTION_LOGICAL = 0x00, 0x01, 0x02
DATA_ARRAY_ABS = 0x00     # Data, Array, Absolute: a named-array selector
DATA_VAR_ABS = 0x02       # Data, Variable, Absolute

USAGE_PAGE_SENSOR = 0x20

# Sensor page usages (HID Usage Tables, Sensors page 0x20).
SENSOR_COLLECTION = 0x0001
SENSOR_ACCELEROMETER_3D = 0x0073
SENSOR_GYROMETER_3D = 0x0076
SENSOR_COMPASS_3D = 0x0083
SENSOR_BAROMETER = 0x0031

PROP_CONNECTION_TYPE = 0x0309
PROP_REPORTING_STATE = 0x0316
PROP_POWER_STATE = 0x0319
PROP_SENSOR_STATE = 0x0201      # "Sensor State" (a property in features, a field in inputs)
EVENT_SENSOR_EVENT = 0x0202
PROP_REPORT_INTERVAL = 0x030E
MOD_CHANGE_SENSITIVITY_ABS = 0x1000

CONNECTION_TYPE_SEL = [0x0830, 0x0831, 0x0832]          # integrated, attached, external
REPORTING_STATE_SEL = [0x0840, 0x0841, 0x0842, 0x0843, 0x0844, 0x0845]
# no events, all events, threshold events, wake no events, wake all events, wake threshold events
POWER_STATE_SEL = [0x0850, 0x0851, 0x0852, 0x0853, 0x0854, 0x0855]
# undefined, D0 full power, D1 low power, D2 standby with wake, D3 sleep with wake, D4 power off
SENSOR_STATE_SEL = [0x0800, 0x0801, 0x0802, 0x0803, 0x0804, 0x0805, 0x0806]
# unknown, ready, not available, no data, initializing, access denied, error
SENSOR_EVENT_SEL = [0x0810, 0x0811, 0x0812, 0x0813, 0x0814, 0x0815]
# unknown, state changed, property changed, data updated, poll response, change sensitivity

REPORTING_NAMES = dict(zip(REPORTING_STATE_SEL, ["no-events", "all-events", "threshold-events",
                                                  "wake-no-events", "wake-all-events", "wake-threshold-events"]))
POWER_NAMES = dict(zip(POWER_STATE_SEL, ["undefined", "D0", "D1", "D2", "D3", "D4"]))

# Named-array selectors are sent as 1 + the selector's index (logical minimum 1): what the
# kernel's hid-sensor-trigger writes (usage index + 1) and what the HID spec means by an array
# value with Logical Minimum 1.
def sel_value(selectors, usage):
    return selectors.index(usage) + 1


def sel_usage(selectors, value):
    i = value - 1
    return selectors[i] if 0 <= i < len(selectors) else None


def item(prefix, value=None, signed=False):
    """One short item; `value` encoded in the fewest bytes (0, 1, 2 or 4) that hold it."""
    if value is None:
        return bytes([prefix])
    for size, code, fmt in ((1, 1, "b" if signed else "B"), (2, 2, "<h" if signed else "<H"),
                            (4, 3, "<i" if signed else "<I")):
        lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << (8 * size)) - 1)
        if lo <= value <= hi:
            return bytes([prefix | code]) + struct.pack(fmt, value)
    raise ValueError("item value out of range: %r" % value)


def usage(u):
    return item(L_USAGE, u)


def logical(lo, hi):
    return item(G_LOGICAL_MIN, lo, signed=True) + item(G_LOGICAL_MAX, hi, signed=True)


def unit_exponent(e):
    # HID 1.11: a 4-bit two's-complement nibble (0x0E is -2); hid-core reads it that way.
    return item(G_UNIT_EXPONENT, e & 0x0F)


def named_array(prop, selectors, main):
    """Usage(prop) Collection(Logical) { selectors, one 8-bit array field } End, as hubs do."""
    d = usage(prop) + logical(1, len(selectors)) + item(G_REPORT_SIZE, 8) + item(G_REPORT_COUNT, 1)
    d += item(MAIN_COLLECTION, COLLECTION_LOGICAL)
    for s in selectors:
        d += usage(s)
    d += item(main, DATA_ARRAY_ABS) + item(MAIN_END_COLLECTION)
    return d


# ---------------------------------------------------------------------------------------------
class Sensor:
    """One sensor of the hub: its physical collection, feature report and input report."""

    def __init__(self, key, name, usage_id, report_id, data_usages, sensitivity_usage, exponent,
                 to_counts, interval_ms):
        self.key = key                    # accel, gyro, magn, press
        self.name = name                  # what the IIO device will be called
        self.usage = usage_id
        self.report_id = report_id
        self.data_usages = data_usages
        self.sensitivity_usage = sensitivity_usage
        self.exponent = exponent          # unit exponent of the data fields
        self.to_counts = to_counts        # command-line units -> counts of the data fields
        self.values = [0.0] * len(data_usages)   # in command-line units
        # Feature state, as the kernel last set it (raw field values).
        self.connection = sel_value(CONNECTION_TYPE_SEL, 0x0830)
        self.reporting = sel_value(REPORTING_STATE_SEL, 0x0840)     # no events until asked
        self.power = sel_value(POWER_STATE_SEL, 0x0855)             # D4 power off until asked
        self.state = sel_value(SENSOR_STATE_SEL, 0x0801)            # ready
        self.interval_ms = interval_ms
        self.default_interval_ms = interval_ms
        self.sensitivity = 0
        self.next_due = None
        self.sent = 0

    # Layout: feature report [id, connection u8, reporting u8, power u8, state u8, interval u32,
    # sensitivity u16]; input report [id, state u8, event u8, data i32...]. Byte-aligned fields.
    def descriptor(self):
        d = item(G_REPORT_ID, self.report_id) + usage(self.usage)
        d += item(MAIN_COLLECTION, COLLECTION_PHYSICAL)
        d += item(G_UNIT, 0) + unit_exponent(0)
        d += named_array(PROP_CONNECTION_TYPE, CONNECTION_TYPE_SEL, MAIN_FEATURE)
        d += named_array(PROP_REPORTING_STATE, REPORTING_STATE_SEL, MAIN_FEATURE)
        d += named_array(PROP_POWER_STATE, POWER_STATE_SEL, MAIN_FEATURE)
        d += named_array(PROP_SENSOR_STATE, SENSOR_STATE_SEL, MAIN_FEATURE)
        # Report interval: milliseconds (the spec's default unit when Unit is 0), exponent 0.
        d += usage(PROP_REPORT_INTERVAL) + logical(0, 0x7FFFFFFF)
        d += item(G_REPORT_SIZE, 32) + item(G_REPORT_COUNT, 1) + item(MAIN_FEATURE, DATA_VAR_ABS)
        # Change sensitivity (absolute), in the data fields' unit and exponent.
        d += usage(self.sensitivity_usage) + logical(0, 0x7FFF) + unit_exponent(self.exponent)
        d += item(G_REPORT_SIZE, 16) + item(G_REPORT_COUNT, 1) + item(MAIN_FEATURE, DATA_VAR_ABS)
        d += unit_exponent(0)
        # Input report.
        d += named_array(PROP_SENSOR_STATE, SENSOR_STATE_SEL, MAIN_INPUT)
        d += named_array(EVENT_SENSOR_EVENT, SENSOR_EVENT_SEL, MAIN_INPUT)
        # One field per axis (the drivers look each data usage up as the first usage of a field).
        d += logical(-0x80000000, 0x7FFFFFFF) + unit_exponent(self.exponent)
        d += item(G_REPORT_SIZE, 32) + item(G_REPORT_COUNT, 1)
        for u in self.data_usages:
            d += usage(u) + item(MAIN_INPUT, DATA_VAR_ABS)
        d += unit_exponent(0)
        d += item(MAIN_END_COLLECTION)
        return d

    def feature_report(self):
        return struct.pack("<BBBBBIH", self.report_id, self.connection, self.reporting, self.power,
                           self.state, self.interval_ms & 0xFFFFFFFF, self.sensitivity & 0xFFFF)

    FEATURE_SIZE = struct.calcsize("<BBBBBIH")

    def set_feature(self, data):
        if len(data) < self.FEATURE_SIZE:
            return False
        (_, self.connection, self.reporting, self.power, self.state, interval,
         self.sensitivity) = struct.unpack_from("<BBBBBIH", data)
        self.interval_ms = interval
        return True

    def counts(self):
        out = []
        for v in self.values:
            c = int(round(self.to_counts(v)))
            out.append(max(-0x80000000, min(0x7FFFFFFF, c)))
        return out

    def input_report(self, event):
        return struct.pack("<BBB%di" % len(self.values), self.report_id,
                           sel_value(SENSOR_STATE_SEL, 0x0801), sel_value(SENSOR_EVENT_SEL, event),
                           *self.counts())

    @property
    def reporting_on(self):
        return (sel_usage(REPORTING_STATE_SEL, self.reporting) in (0x0841, 0x0844)
                and sel_usage(POWER_STATE_SEL, self.power) in (0x0851, 0x0852))

    @property
    def period(self):
        ms = self.interval_ms if self.interval_ms > 0 else self.default_interval_ms
        return max(ms, 1) / 1000.0

    def describe(self):
        return {"sensor": self.key, "report_id": self.report_id,
                "reporting": REPORTING_NAMES.get(sel_usage(REPORTING_STATE_SEL, self.reporting), self.reporting),
                "power": POWER_NAMES.get(sel_usage(POWER_STATE_SEL, self.power), self.power),
                "interval_ms": self.interval_ms, "sensitivity": self.sensitivity}


G_PER_COUNT_EXP = -2   # acceleration: g (unit 0), exponent -2: 0.01 g per count


def make_sensors(args):
    ae, ge, me, pe = args.accel_exponent, args.gyro_exponent, args.magn_exponent, args.pressure_exponent
    deg = 180.0 / 3.141592653589793
    s = [
        Sensor("accel", "accel_3d", SENSOR_ACCELEROMETER_3D, 1, [0x0453, 0x0454, 0x0455],
               MOD_CHANGE_SENSITIVITY_ABS | 0x0452, ae, lambda g: g / 10.0 ** ae, args.interval_ms),
        # Angular velocity: the drivers' default unit is degrees per second.
        Sensor("gyro", "gyro_3d", SENSOR_GYROMETER_3D, 2, [0x0457, 0x0458, 0x0459],
               MOD_CHANGE_SENSITIVITY_ABS | 0x0456, ge, lambda r: r * deg / 10.0 ** ge, args.interval_ms),
        # Magnetic flux: the default unit is milligauss; 1 µT = 10 mG.
        Sensor("magn", "magn_3d", SENSOR_COMPASS_3D, 3, [0x0485, 0x0486, 0x0487],
               MOD_CHANGE_SENSITIVITY_ABS | 0x0484, me, lambda ut: ut * 10.0 / 10.0 ** me, args.interval_ms),
        # Atmospheric pressure: the default unit is the bar; 1 kPa = 0.01 bar.
        Sensor("press", "press", SENSOR_BAROMETER, 4, [0x0431],
               MOD_CHANGE_SENSITIVITY_ABS | 0x0430, pe, lambda kpa: kpa / 100.0 / 10.0 ** pe, args.interval_ms),
    ]
    wanted = set(args.sensors.split(","))
    unknown = wanted - {x.key for x in s}
    if unknown:
        raise SystemExit("hid_sensor_hub: unknown sensors %s (accel, gyro, magn, press)" % ",".join(sorted(unknown)))
    return [x for x in s if x.key in wanted]


def report_descriptor(sensors):
    d = item(G_USAGE_PAGE, USAGE_PAGE_SENSOR) + usage(SENSOR_COLLECTION)
    d += item(MAIN_COLLECTION, COLLECTION_APPLICATION)
    for s in sensors:
        d += s.descriptor()
    d += item(MAIN_END_COLLECTION)
    return d


# ---------------------------------------------------------------------------------------------
POSES = {
    # name: (accel g, gyro rad/s), the hub's (Windows') frame.
    "face-up": ((0.0, 0.0, -1.0), (0.0, 0.0, 0.0)),
    "face-down": ((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)),
    "upright": ((0.0, -1.0, 0.0), (0.0, 0.0, 0.0)),
    "upside-down": ((0.0, 1.0, 0.0), (0.0, 0.0, 0.0)),
    "landscape-left": ((-1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "landscape-right": ((1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "spin": ((0.0, 0.0, -1.0), (0.0, 0.0, 0.5)),
}


def vec3(text):
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("expected X,Y,Z, got %r" % text)
    return parts


class Hub:
    def __init__(self, args):
        self.args = args
        self.sensors = make_sensors(args)
        self.by_id = {s.report_id: s for s in self.sensors}
        self.by_key = {s.key: s for s in self.sensors}
        self.fd = None
        self.started = False
        self.open_count = 0
        self.t0 = time.monotonic()
        self.log_file = open(args.log, "a", buffering=1) if args.log else None
        self.apply({"pose": args.pose} if args.pose else {})
        self.apply({k: v for k, v in (("accel", args.accel), ("gyro", args.gyro), ("magn", args.magn),
                                      ("press", args.pressure)) if v is not None})

    def log(self, what, **fields):
        rec = {"t": round(time.monotonic() - self.t0, 4), "event": what}
        rec.update(fields)
        line = json.dumps(rec, sort_keys=True)
        if self.log_file:
            self.log_file.write(line + "\n")
        if self.args.verbose:
            print("hid_sensor_hub: " + line, file=sys.stderr, flush=True)

    def apply(self, change):
        """Sets values: {"pose": name} or {"accel"|"gyro"|"magn": [x,y,z], "press": kPa}."""
        if "pose" in change:
            a, g = POSES[change["pose"]]
            change = dict(change, accel=list(a), gyro=list(g))
        for key in ("accel", "gyro", "magn"):
            if key in change and key in self.by_key:
                self.by_key[key].values = [float(v) for v in change[key]]
        if "press" in change and "press" in self.by_key:
            self.by_key["press"].values = [float(change["press"])]

    # -- uhid I/O --------------------------------------------------------------------------------
    def write_event(self, etype, payload):
        buf = struct.pack("<I", etype) + payload
        buf += b"\0" * (UHID_EVENT_SIZE - len(buf))
        os.write(self.fd, buf)

    def create(self):
        self.fd = os.open(self.args.uhid, os.O_RDWR | os.O_CLOEXEC)
        rd = report_descriptor(self.sensors)
        if len(rd) > HID_MAX_DESCRIPTOR_SIZE:
            raise SystemExit("hid_sensor_hub: report descriptor too long (%d bytes)" % len(rd))
        name = self.args.name.encode()[:127]
        payload = struct.pack("<128s64s64sHHIIII", name, b"coremotion-vm/hid-sensor-hub", b"",
                              len(rd), self.args.bus, self.args.vendor, self.args.product, 1, 0)
        payload += rd
        self.write_event(UHID_CREATE2, payload)
        self.log("create", descriptor_bytes=len(rd), sensors=[s.key for s in self.sensors],
                 bus=self.args.bus, vendor=self.args.vendor, product=self.args.product)

    def destroy(self):
        if self.fd is not None:
            try:
                self.write_event(UHID_DESTROY, b"")
            except OSError:
                pass
            os.close(self.fd)
            self.fd = None
            self.log("destroy", sent={s.key: s.sent for s in self.sensors})

    def send_input(self, sensor, event=0x0813):
        data = sensor.input_report(event)
        self.write_event(UHID_INPUT2, struct.pack("<H", len(data)) + data)
        sensor.sent += 1

    def handle(self, buf):
        etype = struct.unpack_from("<I", buf)[0]
        if etype == UHID_START:
            self.started = True
            self.log("start", dev_flags=struct.unpack_from("<Q", buf, 4)[0])
        elif etype == UHID_STOP:
            self.started = False
            self.log("stop")
        elif etype == UHID_OPEN:
            self.open_count += 1
            self.log("open")
        elif etype == UHID_CLOSE:
            self.open_count = max(0, self.open_count - 1)
            self.log("close")
        elif etype == UHID_OUTPUT:
            self.log("output")
        elif etype == UHID_GET_REPORT:
            rid, rnum, rtype = struct.unpack_from("<IBB", buf, 4)
            s = self.by_id.get(rnum)
            if s is None or rtype == UHID_OUTPUT_REPORT:
                data, err = b"", 5   # EIO
            elif rtype == UHID_FEATURE_REPORT:
                data, err = s.feature_report(), 0
            else:
                data, err = s.input_report(0x0814), 0   # poll response
            self.write_event(UHID_GET_REPORT_REPLY, struct.pack("<IHH", rid, err, len(data)) + data)
            self.log("get_report", rnum=rnum, rtype=rtype, err=err)
        elif etype == UHID_SET_REPORT:
            rid, rnum, rtype, size = struct.unpack_from("<IBBH", buf, 4)
            data = bytes(buf[12:12 + size])
            s = self.by_id.get(rnum)
            err = 5
            if s is not None and rtype == UHID_FEATURE_REPORT:
                before = s.describe()
                was_on = s.reporting_on
                if s.set_feature(data):
                    err = 0
                    if s.reporting_on and not was_on:
                        s.next_due = time.monotonic() + s.period
                    after = s.describe()
                    if after != before:
                        self.log("set_feature", **after)
            self.write_event(UHID_SET_REPORT_REPLY, struct.pack("<IH", rid, err))
            if err:
                self.log("set_report_refused", rnum=rnum, rtype=rtype, size=size)
        else:
            self.log("event", type=etype)

    def log_status(self):
        self.log("status", sensors=[dict(s.describe(), sent=s.sent, on=s.reporting_on) for s in self.sensors],
                 open=self.open_count)

    def read_control(self):
        out = []
        for line in self.control.lines():
            if line == "status":
                out.append({"status": True})
                continue
            try:
                out.append(parse_at("0:" + line)[1])
            except argparse.ArgumentTypeError as e:
                self.log("control_error", line=line, error=str(e))
        return out

    # -- main loop -------------------------------------------------------------------------------
    def run(self):
        self.control = ControlFifo.open(self.args.control)
        self.create()
        schedule = sorted(self.args.at, key=lambda a: a[0])
        end = self.t0 + self.args.duration if self.args.duration else None
        if self.args.destroy_after is not None:
            schedule.append((self.args.destroy_after, {"destroy": True}))
            schedule.sort(key=lambda a: a[0])
        status_every = self.args.status_every
        next_status = self.t0 + status_every if status_every else None
        try:
            while True:
                now = time.monotonic()
                while schedule and now >= self.t0 + schedule[0][0]:
                    _, change = schedule.pop(0)
                    if change.get("destroy"):
                        self.log("scheduled_destroy")
                        self.destroy()
                        if self.args.linger:
                            time.sleep(self.args.linger)
                        return 0
                    self.apply(change)
                    self.log("change", **change)
                if end is not None and now >= end:
                    break
                if next_status is not None and now >= next_status:
                    self.log_status()
                    next_status += status_every
                # Input reports due.
                for s in self.sensors:
                    if self.open_count > 0 and s.reporting_on or self.args.always_report and self.started:
                        if s.next_due is None:
                            s.next_due = now
                        if now >= s.next_due:
                            self.send_input(s)
                            s.next_due += s.period
                            if s.next_due < now - 0.5:   # fell far behind: do not burst
                                s.next_due = now + s.period
                    else:
                        s.next_due = None
                dues = [s.next_due for s in self.sensors if s.next_due is not None]
                deadline = min(dues) if dues else now + 0.05
                if schedule:
                    deadline = min(deadline, self.t0 + schedule[0][0])
                if end is not None:
                    deadline = min(deadline, end)
                if next_status is not None:
                    deadline = min(deadline, next_status)
                timeout = max(0.0, min(deadline - time.monotonic(), 0.25))
                fds = [self.fd] + ([self.control.fd] if self.control is not None else [])
                r, _, _ = select.select(fds, [], [], timeout)
                if self.fd in r:
                    buf = os.read(self.fd, UHID_EVENT_SIZE)
                    if len(buf) >= 4:
                        self.handle(buf)
                if self.control is not None and self.control.fd in r:
                    for change in self.read_control():
                        if change.get("destroy"):
                            self.log("control_destroy")
                            self.destroy()
                            if self.args.linger:
                                time.sleep(self.args.linger)
                            return 0
                        if change.get("status"):
                            self.log_status()
                            continue
                        self.apply(change)
                        self.log("change", **change)
        finally:
            self.destroy()
        return 0


def parse_at(text):
    """`T:pose=NAME`, `T:accel=X,Y,Z`, `T:gyro=…`, `T:magn=…`, `T:press=KPA`, `T:destroy`."""
    try:
        t, rest = text.split(":", 1)
        t = float(t)
        if rest == "destroy":
            return (t, {"destroy": True})
        change = {}
        for part in rest.split(";"):
            k, v = part.split("=", 1)
            if k == "pose":
                if v not in POSES:
                    raise ValueError("unknown pose " + v)
                change["pose"] = v
            elif k in ("accel", "gyro", "magn"):
                change[k] = vec3(v)
            elif k in ("press", "pressure"):
                change["press"] = float(v)
            else:
                raise ValueError("unknown key " + k)
        return (t, change)
    except ValueError as e:
        raise argparse.ArgumentTypeError("--at %r: %s" % (text, e))


def main(argv=None):
    p = argparse.ArgumentParser(description="A HID sensor hub (accelerometer, gyrometer, compass, "
                                "barometer) played through /dev/uhid for the kernel's hid-sensor-* drivers.")
    p.add_argument("--pose", choices=sorted(POSES), help="accel and gyro preset (hub frame); default face-up")
    p.add_argument("--accel", type=vec3, help="acceleration X,Y,Z in g, gravity-vector convention (face up: 0,0,-1)")
    p.add_argument("--gyro", type=vec3, help="angular velocity X,Y,Z in rad/s")
    p.add_argument("--magn", type=vec3, default=[20.0, 0.0, -40.0], help="magnetic flux X,Y,Z in µT (default 20,0,-40)")
    p.add_argument("--pressure", type=float, default=101.325, help="atmospheric pressure in kPa (default 101.325)")
    p.add_argument("--at", type=parse_at, action="append", default=[],
                   help="T:pose=NAME | T:accel=X,Y,Z | T:gyro=… | T:magn=… | T:press=KPA (';' joins several) | T:destroy; T in s from start")
    p.add_argument("--destroy-after", type=float, help="UHID_DESTROY (unplug) after S seconds")
    p.add_argument("--duration", type=float, help="run S seconds, then UHID_DESTROY and exit (default: until SIGTERM/SIGINT)")
    p.add_argument("--control", help="a FIFO (created if missing) read for commands, one a line, in --at's "
                   "syntax without 'T:' (pose=upright, accel=0,-1,0;gyro=0,0,0.5, press=100.5, destroy, status)")
    p.add_argument("--linger", type=float, default=0.0, help="seconds to stay alive after a scheduled destroy")
    p.add_argument("--sensors", default="accel,gyro,magn,press", help="which sensors the hub has (default all four)")
    p.add_argument("--interval-ms", type=int, default=100, help="report interval before the kernel sets one (ms)")
    p.add_argument("--accel-exponent", type=int, default=-2, help="unit exponent of acceleration (g); default -2")
    p.add_argument("--gyro-exponent", type=int, default=-2, help="unit exponent of angular velocity (deg/s); default -2")
    p.add_argument("--magn-exponent", type=int, default=-2, help="unit exponent of magnetic flux (mG); default -2")
    p.add_argument("--pressure-exponent", type=int, default=-6, help="unit exponent of pressure (bar); default -6 (0.1 Pa)")
    p.add_argument("--bus", type=lambda s: int(s, 0), default=BUS_VIRTUAL, help="bus type (default 0x06 BUS_VIRTUAL; 0x03 BUS_USB)")
    p.add_argument("--vendor", type=lambda s: int(s, 0), default=0x1209, help="vendor id (default 0x1209)")
    p.add_argument("--product", type=lambda s: int(s, 0), default=0x0c0e, help="product id (default 0x0c0e)")
    p.add_argument("--name", default="OpenCoreMotion VM Sensor Hub", help="HID device name")
    p.add_argument("--always-report", action="store_true", help="send input reports whether or not the kernel asked for them")
    p.add_argument("--uhid", default="/dev/uhid", help="the uhid node")
    p.add_argument("--log", help="append JSON lines of what the kernel asked for (SET_REPORT values, open/close) to FILE")
    p.add_argument("--status-every", type=float, default=0.0, help="log a status line every S seconds")
    p.add_argument("--print-descriptor", action="store_true", help="print the report descriptor in hex and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr too")
    args = p.parse_args(argv)
    for e in (args.accel_exponent, args.gyro_exponent, args.magn_exponent, args.pressure_exponent):
        if not -8 <= e <= 7:
            p.error("unit exponents are 4-bit: -8…7")
    if args.pose is None and args.accel is None:
        args.pose = "face-up"
    if args.print_descriptor:
        rd = report_descriptor(make_sensors(args))
        print(rd.hex())
        return 0
    hub = Hub(args)

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        return hub.run()
    except KeyboardInterrupt:
        hub.destroy()
        return 0


if __name__ == "__main__":
    sys.exit(main())
