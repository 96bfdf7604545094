#!/usr/bin/env python3
"""A deliberately naive evdev reader for the VM scenarios (Python 3 standard library): reads a node
for S seconds and tracks the axes from the events alone, never re-reading them after SYN_DROPPED.
Prints one line:

  dropped=N frames=M events_abs=X,Y,Z,RX,RY,RZ ioctl_abs=X,Y,Z,RX,RY,RZ

`events_abs` is what a reader that ignores SYN_DROPPED believes; `ioctl_abs` what EVIOCGABS says
(the truth). After an overflow that swallowed an axis change the two differ: the control that
shows a scenario's SYN_DROPPED really lost events.

  evdev_probe.py /dev/input/event0 --seconds 5
  evdev_probe.py /dev/input/event0 --ready-file F    (until SIGTERM; F is written once the node is open)
"""

import argparse
import fcntl
import os
import select
import signal
import struct
import sys
import time

EV_SYN, EV_ABS = 0, 3
SYN_REPORT, SYN_DROPPED = 0, 3
EVENT = struct.Struct("<qqHHi")


def eviocgabs(fd, code):
    buf = bytearray(24)   # struct input_absinfo: six s32
    fcntl.ioctl(fd, (2 << 30) | (24 << 16) | (ord("E") << 8) | (0x40 + code), buf)
    return struct.unpack("<6i", buf)[0]


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("node")
    p.add_argument("--seconds", type=float, default=0.0, help="read this long (default: until SIGTERM or SIGINT)")
    p.add_argument("--ready-file", help="written once the node is open")
    args = p.parse_args(argv)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    fd = os.open(args.node, os.O_RDONLY | os.O_NONBLOCK)
    values = [eviocgabs(fd, c) for c in range(6)]
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write("open\n")
    dropped = frames = 0
    end = time.monotonic() + args.seconds if args.seconds > 0 else float("inf")
    gone = False
    while time.monotonic() < end and not stop:
        try:
            r, _, _ = select.select([fd], [], [], 0.1)
        except InterruptedError:
            continue
        if not r:
            continue
        try:
            data = os.read(fd, EVENT.size * 256)
        except BlockingIOError:
            continue
        except OSError:
            gone = True
            break
        for i in range(0, len(data) - EVENT.size + 1, EVENT.size):
            _, _, etype, code, value = EVENT.unpack_from(data, i)
            if etype == EV_ABS and code < 6:
                values[code] = value
            elif etype == EV_SYN and code == SYN_DROPPED:
                dropped += 1
            elif etype == EV_SYN and code == SYN_REPORT:
                frames += 1
    truth = "gone" if gone else ",".join(str(eviocgabs(fd, c)) for c in range(6))
    print("dropped=%d frames=%d events_abs=%s ioctl_abs=%s" % (dropped, frames, ",".join(map(str, values)), truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
