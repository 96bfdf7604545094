#!/usr/bin/env python3
"""Creates, through /dev/uinput, the motion-sensor input node a game controller's kernel driver
creates (by default what hid-playstation makes for a DualSense: "Sony Interactive Entertainment
DualSense Wireless Controller Motion Sensors", INPUT_PROP_ACCELEROMETER, ABS_X/Y/Z acceleration at
8192 counts per g, ABS_RX/RY/RZ angular velocity at 1024 counts per degree/s, fuzz 16, MSC_TIMESTAMP
in microseconds), and streams frames at a fixed rate. It can make the kernel drop events for every
reader (a burst larger than evdev's client buffer, so readers get a real SYN_DROPPED) and can remove
the node mid-stream (UI_DEV_DESTROY).

Written from the public uinput/evdev ABI (include/uapi/linux/uinput.h, input.h,
input-event-codes.h) and the kernel's hid-playstation facts (resolutions, ranges, axis frame).
Python 3 standard library, run as root.

Frames. Poses and --accel/--gyro are given in Core Motion's frame (x right, y forward/up the screen,
z out of the face; acceleration as the gravity vector in g, face up = (0, 0, -1); rotation rate in
rad/s, right-handed) and converted to the driver's frame. hid-playstation's frame at rest face up:
X right, Y up (out of the face), Z toward the player; its acceleration is the reaction to gravity
(+1 g on the axis pointing up). So, with Core Motion's (x, y, z):
    driver accel (X, Y, Z) = (-x, -z, y) g            (face up: Y = +8192)
    driver gyro (RX, RY, RZ) = (x, z, -y) rad/s       (spin +0.5 rad/s about z: RY = +29335)
--raw-accel/--raw-gyro give the driver's counts directly.
"""

import argparse
import fcntl
import glob
import json
import math
import os
import select
import signal
import struct
import sys
import time

from control import ControlFifo

# ioctl numbers (asm-generic ioctl.h: dir << 30 | size << 16 | type << 8 | nr).
def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr


_IOC_NONE, _IOC_WRITE, _IOC_READ = 0, 1, 2
UI_DEV_CREATE = _ioc(_IOC_NONE, 1, 0)
UI_DEV_DESTROY = _ioc(_IOC_NONE, 2, 0)
UINPUT_SETUP_FMT = "<HHHH80sI"          # struct uinput_setup: input_id, name[80], ff_effects_max
UINPUT_ABS_SETUP_FMT = "<Hxxiiiiii"     # struct uinput_abs_setup: code, pad, input_absinfo
UI_DEV_SETUP = _ioc(_IOC_WRITE, 3, struct.calcsize(UINPUT_SETUP_FMT))
UI_ABS_SETUP = _ioc(_IOC_WRITE, 4, struct.calcsize(UINPUT_ABS_SETUP_FMT))
UI_SET_EVBIT = _ioc(_IOC_WRITE, 100, 4)
UI_SET_ABSBIT = _ioc(_IOC_WRITE, 103, 4)
UI_SET_MSCBIT = _ioc(_IOC_WRITE, 104, 4)
UI_SET_PROPBIT = _ioc(_IOC_WRITE, 110, 4)


def UI_GET_SYSNAME(length):
    return _ioc(_IOC_READ, 44, length)


EV_SYN, EV_ABS, EV_MSC = 0x00, 0x03, 0x04
SYN_REPORT, SYN_DROPPED = 0, 3
ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ = 0, 1, 2, 3, 4, 5
MSC_TIMESTAMP = 0x05
INPUT_PROP_ACCELEROMETER = 0x06
BUS_USB, BUS_BLUETOOTH = 0x03, 0x05
INPUT_EVENT_FMT = "<qqHHi"              # struct input_event on 64-bit: timeval, type, code, value

# Driver presets: name, vendor, product, version, accel counts per g, accel range (counts),
# gyro counts per degree/s, gyro range (counts), fuzz.
DRIVERS = {
    # hid-playstation: DS_ACC_RES_PER_G 8192, DS_ACC_RANGE 4 g, DS_GYRO_RES_PER_DEG_S 1024,
    # DS_GYRO_RANGE 2048 deg/s, input_set_abs_params(..., fuzz 16, flat 0).
    "dualsense": ("Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors",
                  0x054C, 0x0CE6, 0x8111, 8192, 4 * 8192, 1024, 2048 * 1024, 16),
    "dualshock4": ("Sony Interactive Entertainment Wireless Controller Motion Sensors",
                   0x054C, 0x09CC, 0x8111, 8192, 4 * 8192, 1024, 2048 * 1024, 16),
}

POSES = {
    # Core Motion frame: accel g (gravity vector), rotation rate rad/s.
    "face-up": ((0.0, 0.0, -1.0), (0.0, 0.0, 0.0)),
    "face-down": ((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)),
    "upright": ((0.0, -1.0, 0.0), (0.0, 0.0, 0.0)),
    "upside-down": ((0.0, 1.0, 0.0), (0.0, 0.0, 0.0)),
    "landscape-left": ((-1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "landscape-right": ((1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "spin": ((0.0, 0.0, -1.0), (0.0, 0.0, 0.5)),
}


def driver_accel_g(cm):
    x, y, z = cm
    return (-x, -z, y)


def driver_gyro_rad(cm):
    x, y, z = cm
    return (x, z, -y)


def vec3(text):
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("expected X,Y,Z, got %r" % text)
    return parts


def ivec3(text):
    parts = [int(p) for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("expected X,Y,Z counts, got %r" % text)
    return parts


class Node:
    def __init__(self, args):
        self.args = args
        (self.name, self.vendor, self.product, self.version, self.acc_res, self.acc_range,
         self.gyro_res, self.gyro_range, self.fuzz) = DRIVERS[args.driver]
        if args.name:
            self.name = args.name
        self.fd = None
        self.t0 = time.monotonic()
        self.ts_us = args.timestamp_start & 0xFFFFFFFF
        self.last_ts_wall = None
        self.accel = [0, 0, 0]
        self.gyro = [0, 0, 0]
        self.frames = 0
        self.log_file = open(args.log, "a", buffering=1) if args.log else None
        self.event_path = None
        self.sysname = None

    def log(self, what, **fields):
        rec = {"t": round(time.monotonic() - self.t0, 4), "event": what}
        rec.update(fields)
        line = json.dumps(rec, sort_keys=True)
        if self.log_file:
            self.log_file.write(line + "\n")
        if self.args.verbose:
            print("uinput_motion: " + line, file=sys.stderr, flush=True)

    def set_pose(self, change):
        """{"pose": NAME} | {"accel": cm g} | {"gyro": cm rad/s} | {"raw_accel": counts} | {"raw_gyro": counts}."""
        if "pose" in change:
            a, g = POSES[change["pose"]]
            change = dict(change, accel=a, gyro=g)
        if "accel" in change:
            self.accel = [self.clamp(round(v * self.acc_res), self.acc_range) for v in driver_accel_g(change["accel"])]
        if "gyro" in change:
            self.gyro = [self.clamp(round(math.degrees(v) * self.gyro_res), self.gyro_range)
                         for v in driver_gyro_rad(change["gyro"])]
        if "raw_accel" in change:
            self.accel = list(change["raw_accel"])
        if "raw_gyro" in change:
            self.gyro = list(change["raw_gyro"])
        if "ts" in change:
            self.ts_us = change["ts"] & 0xFFFFFFFF
            self.last_ts_wall = None    # the next frame carries exactly this timestamp

    @staticmethod
    def clamp(v, r):
        return int(max(-r, min(r, v)))

    def create(self):
        a = self.args
        self.fd = os.open(a.uinput, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_ABS)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_MSC)
        if not a.no_timestamp:
            fcntl.ioctl(self.fd, UI_SET_MSCBIT, MSC_TIMESTAMP)
        if not a.no_accelerometer_prop:
            fcntl.ioctl(self.fd, UI_SET_PROPBIT, INPUT_PROP_ACCELEROMETER)
        axes = [(ABS_X, self.acc_range, self.acc_res), (ABS_Y, self.acc_range, self.acc_res),
                (ABS_Z, self.acc_range, self.acc_res)]
        if not a.no_gyro:
            axes += [(ABS_RX, self.gyro_range, self.gyro_res), (ABS_RY, self.gyro_range, self.gyro_res),
                     (ABS_RZ, self.gyro_range, self.gyro_res)]
        values = dict(zip([ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ], self.accel + self.gyro))
        for code, rng, res in axes:
            fcntl.ioctl(self.fd, UI_SET_ABSBIT, code)
            fcntl.ioctl(self.fd, UI_ABS_SETUP, struct.pack(UINPUT_ABS_SETUP_FMT, code, values[code], -rng, rng,
                                                         self.fuzz, 0, res))
        setup = struct.pack(UINPUT_SETUP_FMT, a.bus, self.vendor, self.product, self.version,
                            self.name.encode()[:79], 0)
        fcntl.ioctl(self.fd, UI_DEV_SETUP, setup)
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        buf = bytearray(64)
        try:
            fcntl.ioctl(self.fd, UI_GET_SYSNAME(len(buf)), buf)
            self.sysname = bytes(buf).split(b"\0", 1)[0].decode()
        except OSError:
            self.sysname = None
        self.event_path = self.find_event_node()
        self.log("create", name=self.name, sysname=self.sysname, event=self.event_path,
                 accel=self.accel, gyro=self.gyro, acc_res=self.acc_res, gyro_res=self.gyro_res)
        line = "EVENT %s %s" % (self.event_path or "?", self.sysname or "?")
        print(line, flush=True)
        if a.ready_file:
            with open(a.ready_file + ".tmp", "w") as f:
                f.write((self.event_path or "") + "\n")
            os.rename(a.ready_file + ".tmp", a.ready_file)

    def find_event_node(self):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            dirs = []
            if self.sysname:
                dirs = glob.glob("/sys/devices/virtual/input/%s/event*" % self.sysname)
            if not dirs:
                for d in glob.glob("/sys/class/input/event*"):
                    try:
                        with open(os.path.join(d, "device/name")) as f:
                            if f.read().strip() == self.name:
                                dirs.append(d)
                    except OSError:
                        pass
            for d in dirs:
                node = "/dev/input/" + os.path.basename(d)
                if os.path.exists(node):
                    return node
            time.sleep(0.02)
        return None

    def event(self, etype, code, value):
        return struct.pack(INPUT_EVENT_FMT, 0, 0, etype, code, value)

    def frame_bytes(self, ts_us):
        b = b""
        for code, v in zip((ABS_X, ABS_Y, ABS_Z), self.accel):
            b += self.event(EV_ABS, code, v)
        if not self.args.no_gyro:
            for code, v in zip((ABS_RX, ABS_RY, ABS_RZ), self.gyro):
                b += self.event(EV_ABS, code, v)
        if not self.args.no_timestamp:
            v = ts_us & 0xFFFFFFFF
            b += self.event(EV_MSC, MSC_TIMESTAMP, v - (1 << 32) if v >= 1 << 31 else v)
        b += self.event(EV_SYN, SYN_REPORT, 0)
        return b

    def advance_timestamp(self, now, minimum_step_us=1):
        if self.last_ts_wall is None:
            step = 0
        else:
            step = max(minimum_step_us, int(round((now - self.last_ts_wall) * 1e6)))
        self.last_ts_wall = now
        self.ts_us = (self.ts_us + step) & 0xFFFFFFFF
        return self.ts_us

    def write_all(self, data):
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            view = view[n:]

    def send_frame(self, now):
        self.write_all(self.frame_bytes(self.advance_timestamp(now)))
        self.frames += 1

    def burst(self, count):
        """`count` frames in one write(): more events than evdev's per-client buffer (a power of two
        near 8 packets), so every reader's queue overflows and it reads SYN_DROPPED."""
        parts = []
        for i in range(count):
            self.ts_us = (self.ts_us + 1) & 0xFFFFFFFF
            parts.append(self.frame_bytes(self.ts_us))
        self.write_all(b"".join(parts))
        self.frames += count

    def destroy(self):
        if self.fd is not None:
            try:
                fcntl.ioctl(self.fd, UI_DEV_DESTROY)
            except OSError:
                pass
            os.close(self.fd)
            self.fd = None
            self.log("destroy", frames=self.frames)

    def read_control(self):
        out = []
        for line in self.control.lines():
            try:
                out.append(parse_at("0:" + line)[1])
            except argparse.ArgumentTypeError as e:
                self.log("control_error", line=line, error=str(e))
        return out

    def run(self):
        a = self.args
        self.control = ControlFifo.open(self.args.control)
        self.set_pose({"pose": a.pose} if a.pose else {})
        self.set_pose({k: v for k, v in (("accel", a.accel), ("gyro", a.gyro), ("raw_accel", a.raw_accel),
                                         ("raw_gyro", a.raw_gyro)) if v is not None})
        self.create()
        schedule = list(a.at)
        if a.destroy_after is not None:
            schedule.append((a.destroy_after, {"destroy": True}))
        schedule.sort(key=lambda x: x[0])
        period = 1.0 / a.rate
        end = self.t0 + a.duration if a.duration else None
        next_frame = time.monotonic() + a.start_delay
        try:
            while True:
                now = time.monotonic()
                while schedule and now >= self.t0 + schedule[0][0]:
                    _, change = schedule.pop(0)
                    if change.get("destroy"):
                        self.log("scheduled_destroy", frames=self.frames)
                        self.destroy()
                        if a.linger:
                            time.sleep(a.linger)
                        return 0
                    if "burst" in change:
                        self.set_pose({k: v for k, v in change.items() if k != "burst"})
                        self.burst(change["burst"])
                        self.log("burst", frames=change["burst"], accel=self.accel, gyro=self.gyro)
                    else:
                        self.set_pose(change)
                        self.log("change", accel=self.accel, gyro=self.gyro, **change)
                if end is not None and now >= end:
                    break
                if now >= next_frame:
                    self.send_frame(now)
                    next_frame += period
                    if next_frame < now - 0.5:
                        next_frame = now + period
                deadline = next_frame
                if schedule:
                    deadline = min(deadline, self.t0 + schedule[0][0])
                if end is not None:
                    deadline = min(deadline, end)
                delay = deadline - time.monotonic()
                if delay > 0 or self.control is not None:
                    fds = [self.control.fd] if self.control is not None else []
                    r, _, _ = select.select(fds, [], [], min(max(delay, 0), 0.25))
                    if r:
                        for change in self.read_control():
                            schedule.insert(0, (-1e9, change))
        finally:
            self.destroy()
        return 0


def parse_at(text):
    """`T:pose=NAME`, `T:accel=X,Y,Z`, `T:gyro=X,Y,Z` (Core Motion frame), `T:raw_accel=…`,
    `T:raw_gyro=…` (counts), `T:burst=N` (N frames at once: SYN_DROPPED), `T:ts=µs` (the next
    MSC_TIMESTAMP, then counting on from it), `T:destroy`; ';' joins."""
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
            elif k in ("accel", "gyro"):
                change[k] = vec3(v)
            elif k in ("raw_accel", "raw_gyro"):
                change[k] = ivec3(v)
            elif k == "burst":
                change["burst"] = int(v)
            elif k == "ts":
                change["ts"] = int(v, 0)
            else:
                raise ValueError("unknown key " + k)
        return (t, change)
    except ValueError as e:
        raise argparse.ArgumentTypeError("--at %r: %s" % (text, e))


def main(argv=None):
    p = argparse.ArgumentParser(description="A game controller's motion-sensor node (as hid-playstation "
                                "creates for a DualSense) played through /dev/uinput.")
    p.add_argument("--driver", choices=sorted(DRIVERS), default="dualsense", help="name, ids and resolutions (default dualsense)")
    p.add_argument("--name", help="override the node's name")
    p.add_argument("--bus", type=lambda s: int(s, 0), default=BUS_USB, help="bus type (default 0x03 USB)")
    p.add_argument("--pose", choices=sorted(POSES), help="preset in Core Motion's frame (default face-up)")
    p.add_argument("--accel", type=vec3, help="acceleration X,Y,Z in g, Core Motion's frame (face up 0,0,-1)")
    p.add_argument("--gyro", type=vec3, help="rotation rate X,Y,Z in rad/s, Core Motion's frame")
    p.add_argument("--raw-accel", type=ivec3, help="driver ABS_X,Y,Z counts (overrides --accel)")
    p.add_argument("--raw-gyro", type=ivec3, help="driver ABS_RX,RY,RZ counts (overrides --gyro)")
    p.add_argument("--rate", type=float, default=100.0, help="frames per second (default 100)")
    p.add_argument("--at", type=parse_at, action="append", default=[],
                   help="T:pose=NAME | T:accel=… | T:gyro=… | T:raw_accel=… | T:raw_gyro=… | T:burst=N[;pose=NAME] | T:ts=µs | T:destroy")
    p.add_argument("--syn-dropped-at", type=float, action="append", default=[],
                   help="at S seconds, one burst of --burst-frames frames (every reader gets SYN_DROPPED)")
    p.add_argument("--burst-frames", type=int, default=1000, help="frames per burst (default 1000)")
    p.add_argument("--destroy-after", type=float, help="UI_DEV_DESTROY (unplug) after S seconds")
    p.add_argument("--duration", type=float, help="run S seconds then destroy the node (default: until SIGTERM)")
    p.add_argument("--start-delay", type=float, default=0.0, help="seconds between creating the node and the first frame")
    p.add_argument("--control", help="a FIFO (created if missing) read for commands, one a line, in --at's "
                   "syntax without 'T:' (pose=upright, accel=0,-1,0, burst=1000;pose=upright, destroy)")
    p.add_argument("--linger", type=float, default=0.0, help="seconds to stay alive after a scheduled destroy")
    p.add_argument("--timestamp-start", type=lambda s: int(s, 0), default=0,
                   help="first MSC_TIMESTAMP (µs, u32; e.g. 0xFFF00000 to cross the wrap soon)")
    p.add_argument("--no-timestamp", action="store_true", help="no EV_MSC/MSC_TIMESTAMP")
    p.add_argument("--no-gyro", action="store_true", help="accelerometer axes only")
    p.add_argument("--no-accelerometer-prop", action="store_true", help="do not set INPUT_PROP_ACCELEROMETER")
    p.add_argument("--uinput", default="/dev/uinput")
    p.add_argument("--ready-file", help="write the event node's path here once it exists")
    p.add_argument("--log", help="append JSON lines of what was done to FILE")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    if args.pose is None and args.accel is None and args.raw_accel is None:
        args.pose = "face-up"
    for t in args.syn_dropped_at:
        args.at.append((t, {"burst": args.burst_frames}))
    node = Node(args)

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        return node.run()
    except KeyboardInterrupt:
        node.destroy()
        return 0


if __name__ == "__main__":
    sys.exit(main())
