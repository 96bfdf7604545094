#!/usr/bin/env python3
"""A minimal WebSocket client (RFC 6455, Python 3 standard library) for `coremotion dashboard`'s
/ws endpoint (Sources/MotionDashboard/PROTOCOL.md): starts the given streams and prints their rows,
one a line, `STREAM v1 v2 …` (the row's columns as in hello.columns), for S seconds. Used by the VM
scenarios to read CMAltimeter (the `altitude` stream) through the real barometer driver.

  dashboard_client.py --port 8765 --start altitude --seconds 10
"""

import argparse
import base64
import json
import os
import socket
import struct
import sys
import time


def connect(host, port, path, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            s = socket.create_connection((host, port), timeout=2)
            break
        except OSError as e:
            last = e
            time.sleep(0.25)
    else:
        raise SystemExit("dashboard_client: cannot connect to %s:%d: %s" % (host, port, last))
    key = base64.b64encode(os.urandom(16)).decode()
    req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key))
    s.sendall(req.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise SystemExit("dashboard_client: connection closed during the handshake")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    status = head.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        raise SystemExit("dashboard_client: handshake refused: %s" % status.decode(errors="replace"))
    return s, rest


def send_text(s, text):
    payload = text.encode()
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", 0x81, 0x80 | n)
    elif n < 65536:
        header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(header + mask + masked)


def send_control(s, opcode, payload=b""):
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(struct.pack("!BB", 0x80 | opcode, 0x80 | len(payload)) + mask + masked)


class Reader:
    """Frames parsed from a buffer; a frame is consumed only once it is complete, so a receive
    timeout never loses a partial frame."""

    def __init__(self, s, initial):
        self.s = s
        self.buf = initial
        self.fragments = b""

    def frame(self):
        """(fin, opcode, payload) of the next complete frame in the buffer, or None."""
        b = self.buf
        if len(b) < 2:
            return None
        n, i = b[1] & 0x7F, 2
        if n == 126:
            if len(b) < 4:
                return None
            n, i = struct.unpack("!H", b[2:4])[0], 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, i = struct.unpack("!Q", b[2:10])[0], 10
        mask = None
        if b[1] & 0x80:
            if len(b) < i + 4:
                return None
            mask, i = b[i:i + 4], i + 4
        if len(b) < i + n:
            return None
        payload = b[i:i + n]
        self.buf = b[i + n:]
        if mask:
            payload = bytes(x ^ mask[k % 4] for k, x in enumerate(payload))
        return b[0] & 0x80, b[0] & 0x0F, payload

    def message(self):
        """The next complete text message (str), answering pings; None on close; raises
        socket.timeout when nothing complete arrived in time, EOFError when the peer went away."""
        while True:
            f = self.frame()
            if f is None:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise EOFError
                self.buf += chunk
                continue
            fin, opcode, payload = f
            if opcode == 0x9:
                send_control(self.s, 0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                return None
            self.fragments += payload
            if fin:
                data, self.fragments = self.fragments, b""
                return data.decode(errors="replace")


def main(argv=None):
    p = argparse.ArgumentParser(description="Print rows of coremotion dashboard streams.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--start", action="append", default=[], help="stream to start (repeatable), e.g. altitude")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--connect-timeout", type=float, default=60.0)
    p.add_argument("--print-messages", action="store_true", help="also print every non-samples message")
    args = p.parse_args(argv)
    s, rest = connect(args.host, args.port, "/ws", args.connect_timeout)
    r = Reader(s, rest)
    for i, stream in enumerate(args.start):
        send_text(s, json.dumps({"type": "start", "sensor": stream, "id": i + 1}))
    end = time.monotonic() + args.seconds
    s.settimeout(0.5)
    while time.monotonic() < end:
        try:
            text = r.message()
        except socket.timeout:
            continue
        except EOFError:
            print("CLOSED", flush=True)
            break
        if text is None:
            print("CLOSED", flush=True)
            break
        try:
            msg = json.loads(text)
        except ValueError:
            continue
        kind = msg.get("type")
        if kind == "samples":
            for stream in args.start:
                for row in msg.get(stream, []):
                    print(stream + " " + " ".join("null" if v is None else str(v) for v in row), flush=True)
        elif kind in ("error", "sourceError"):
            print("ERROR " + json.dumps(msg), flush=True)
        elif args.print_messages:
            print("MESSAGE " + text, flush=True)
    try:
        send_control(s, 0x8, struct.pack("!H", 1000))
        s.close()
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
