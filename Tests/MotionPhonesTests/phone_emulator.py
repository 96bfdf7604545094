#!/usr/bin/env python3
"""Plays a phone app for OpenCoreMotion's loopback tests, from the apps' documented formats only.

Python standard library only. The phone lies face up and turns about its z axis at RATE_Z rad/s
(default +0.5) in a field of HORIZONTAL µT horizontal and VERTICAL µT vertical (down, so negative z
in the device frame when face up). Android apps report acceleration in m/s² with +g on z face up;
iOS apps (SensorLog) in g with Core Motion's sign (−1 on z face up).

  phone_emulator.py sensorlogger URL SECONDS [RATE]   POST Sensor Logger push JSON batches
  phone_emulator.py hyperimu HOST PORT SECONDS [RATE] UDP CSV lines with an epoch-ms timestamp
  phone_emulator.py sensorserver SECONDS [RATE]       WebSocket server; prints its port, then serves
  phone_emulator.py sensorlog SECONDS [RATE] [csv]    TCP server; prints its port, then streams
  phone_emulator.py phyphox SECONDS [RATE] [ios|android]
                                                      phyphox remote access (HTTP REST); prints its port;
                                                      measures for SECONDS after /control?cmd=start
The servers listen on 127.0.0.1, on port $PHONE_PORT when set, else on a free one.
$PHONE_RATE_Z sets the turn rate (rad/s) and $PHONE_YAW the yaw at t = 0 (rad, counter-clockwise
from magnetic north seen from above, Core Motion's yaw). Sensor Logger also sends its `orientation`
(Android's quaternion, device -> east-north-up) and `gravity`; SensorServer sends
`android.sensor.rotation_vector` and `android.sensor.gravity` when asked for them.
"""
import base64, hashlib, http.server, json, math, os, random, socket, struct, sys, threading, time, urllib.parse, urllib.request

G = 9.80665
RATE_Z = float(os.environ.get("PHONE_RATE_Z", "0.5"))
YAW0 = float(os.environ.get("PHONE_YAW", "0"))
HORIZONTAL = 20.0
VERTICAL = -40.0


def field(t):
    """Magnetic field in the device frame (µT) at phone time t (s) while turning about z."""
    yaw = YAW0 + RATE_Z * t
    return (HORIZONTAL * math.cos(yaw), -HORIZONTAL * math.sin(yaw), VERTICAL)


def android_sample(t):
    mx, my, mz = field(t)
    return (0.0, 0.0, G), (0.0, 0.0, RATE_Z), (mx, my, mz)


def android_attitude(t):
    """Android's rotation quaternion (x, y, z, w), device -> east-north-up: the device's x axis points
    YAW0 + RATE_Z t counter-clockwise from north, so pi/2 more than that from east."""
    heading = math.pi / 2 + YAW0 + RATE_Z * t
    return (0.0, 0.0, math.sin(heading / 2), math.cos(heading / 2))


def sensorlogger(url, seconds, rate):
    # Sensor Logger push: {messageId, sessionId, deviceId, payload:[{name, time (epoch ns), values}]},
    # once per batch period; Android (standardised) units: m/s², +g on z face up.
    period = 1.0 / rate
    batch = 0.1
    start = time.time()
    message_id = 0
    n = 0
    # Every sample of the span is sent (seconds × rate), each in the batch after it is due: a loop
    # bounded by time instead sent one batch only when its request outlasted the span (loaded CI: one
    # sample per sensor, exit 0).
    total = int(round(seconds * rate))
    began = time.monotonic()
    while n < total:
        payload = []
        elapsed = time.monotonic() - began
        while n < total and n * period <= elapsed:
            t = start + n * period
            ns = int(t * 1e9) // 100 * 100
            acc, gyr, mag = android_sample(t - start)
            payload.append({"name": "totalacceleration", "time": ns, "values": {"x": acc[0], "y": acc[1], "z": acc[2]}, "accuracy": 3})
            payload.append({"name": "gyroscope", "time": ns, "values": {"x": gyr[0], "y": gyr[1], "z": gyr[2]}, "accuracy": 3})
            payload.append({"name": "magnetometer", "time": ns, "values": {"x": mag[0], "y": mag[1], "z": mag[2]}, "accuracy": 3})
            qx, qy, qz, qw = android_attitude(t - start)
            payload.append({"name": "orientation", "time": ns, "values": {"qw": qw, "qx": qx, "qy": qy, "qz": qz}})
            payload.append({"name": "gravity", "time": ns, "values": {"x": acc[0], "y": acc[1], "z": acc[2]}})
            n += 1
        if payload:
            body = json.dumps({"messageId": message_id, "sessionId": "11111111-2222-3333-4444-555555555555",
                               "deviceId": "emulated-android", "payload": payload}).encode()
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
            # A give-up bound: the receiver answers at once unless the machine is starved.
            with urllib.request.urlopen(request, timeout=60) as response:
                if response.status != 200:
                    sys.exit("status %d" % response.status)
            message_id += 1
        if n < total:
            time.sleep(batch)


def hyperimu(host, port, seconds, rate):
    # HyperIMU UDP: "timestamp_ms,ax,ay,az,gx,gy,gz,mx,my,mz" + CRLF, accelerometer/gyroscope/magnetometer order.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    period = 1.0 / rate
    start = time.time()
    n = 0
    # Every sample of the span (seconds × rate), paced in real time as far as the machine allows.
    total = int(round(seconds * rate))
    while n < total:
        t = start + n * period
        acc, gyr, mag = android_sample(t - start)
        values = ",".join("%.6f" % v for v in acc + gyr + mag)
        s.sendto(("%d,%s\r\n" % (int(t * 1000), values)).encode(), (host, port))
        n += 1
        delay = start + n * period - time.time()
        if delay > 0:
            time.sleep(delay)


def serve_one(seconds):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(os.environ.get("PHONE_PORT", "0"))))
    server.listen(1)
    print(server.getsockname()[1], flush=True)
    # Give-up bounds (a loaded machine may take long to connect), not part of any measurement.
    server.settimeout(seconds + 60)
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return server, conn


def sensorserver(seconds, rate):
    # SensorServer: WebSocket /sensors/connect?types=[...]; one text message per SensorEvent,
    # {"type", "values", "timestamp" (ns since boot), "accuracy"}.
    server, conn = serve_one(seconds)
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = conn.recv(4096)
        if not chunk:
            return
        request += chunk
    lines = request.decode().split("\r\n")
    target = lines[0].split(" ")[1]
    parsed = urllib.parse.urlparse(target)
    types = json.loads(urllib.parse.parse_qs(parsed.query)["types"][0])
    if parsed.path != "/sensors/connect" or len(types) < 2:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        return
    key = [l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode())

    def frame(text):
        data = text.encode()
        if len(data) < 126:
            return bytes([0x81, len(data)]) + data
        return bytes([0x81, 126]) + struct.pack("!H", len(data)) + data

    period = 1.0 / rate
    start = time.monotonic()
    n = 0
    # Every sample of the span (seconds × rate), paced in real time as far as the machine allows.
    total = int(round(seconds * rate))
    while n < total:
        t = start + n * period
        acc, gyr, mag = android_sample(t - start)
        ns = int(t * 1e9)
        try:
            x, y, z, w = android_attitude(t - start)
            for name, v in (("android.sensor.accelerometer", acc), ("android.sensor.gyroscope", gyr),
                            ("android.sensor.magnetic_field", mag), ("android.sensor.gravity", acc),
                            ("android.sensor.rotation_vector", (x, y, z, w, 0.0))):
                if name in types:
                    conn.sendall(frame(json.dumps({"values": list(v), "timestamp": ns, "accuracy": 3, "type": name})))
        except OSError:
            return
        n += 1
        delay = start + n * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()


def sensorlog(seconds, rate, csv):
    # SensorLog TCP (phone as server): CSV lines under a name(unit) header, or flat JSON objects back
    # to back, every value a string; Core Motion's own units (g, rad/s, µT), timestamps since reboot.
    server, conn = serve_one(seconds)
    names = ["loggingTime", "accelerometerTimestamp_sinceReboot", "accelerometerAccelerationX", "accelerometerAccelerationY",
             "accelerometerAccelerationZ", "gyroTimestamp_sinceReboot", "gyroRotationX", "gyroRotationY", "gyroRotationZ",
             "magnetometerTimestamp_sinceReboot", "magnetometerX", "magnetometerY", "magnetometerZ"]
    units = ["txt", "s", "G", "G", "G", "s", "rad/s", "rad/s", "rad/s", "s", "µT", "µT", "µT"]
    if csv:
        conn.sendall((",".join("%s(%s)" % p for p in zip(names, units)) + "\n").encode())
    period = 1.0 / rate
    start = time.monotonic()
    n = 0
    # Every sample of the span (seconds × rate), paced in real time as far as the machine allows.
    total = int(round(seconds * rate))
    while n < total:
        t = start + n * period
        mx, my, mz = field(t - start)
        values = ["2026-01-01 10:00:00.000", "%.6f" % t, "0.000000", "0.000000", "-1.000000",
                  "%.6f" % t, "0.000000", "0.000000", "%.6f" % RATE_Z, "%.6f" % t, "%.6f" % mx, "%.6f" % my, "%.6f" % mz]
        if csv:
            data = (",".join(values) + "\n").encode()
        else:
            data = json.dumps(dict(zip(names, values))).encode()
        try:
            conn.sendall(data)
        except OSError:
            return
        n += 1
        delay = start + n * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()


def phyphox(seconds, rate, platform):
    # phyphox remote access: the phone serves /config, /meta, /control?cmd=start, /get. Buffers of the
    # stock experiments, filled as the experiment runs; /get returns the last value of a buffer (no
    # value), the whole buffer (=full), or the entries after a threshold on a time buffer
    # (=T|timebuffer, or =T on the time buffer itself). Numbers have 8 significant digits, NaN is null.
    # Acceleration is m/s² with Android's sign on both platforms (+g on z face up); iOS scales Core
    # Motion's g by -9.81, Android reports the sensor's m/s².
    g = 9.81 if platform == "ios" else G
    # Also pressure (hPa, in x), gravity (m/s², Android's sign) and attitude: Android's y-north frame
    # (device -> east-north-up) on both platforms, x, y, z in x/y/z and w in abs. The device's x axis
    # points north at t = 0 and turns counter-clockwise (seen from above) at RATE_Z.
    names = {"accelerometer": ("acc_time", "accX", "accY", "accZ", "acc"),
             "gyroscope": ("gyr_time", "gyrX", "gyrY", "gyrZ", "gyr"),
             "magnetic_field": ("mag_time", "magX", "magY", "magZ", "mag"),
             "pressure": ("pre_time", "pre", "pre", "pre", None),
             "gravity": ("grav_time", "gravX", "gravY", "gravZ", "grav"),
             "attitude": ("att_time", "attX", "attY", "attZ", "attW")}
    buffers = {b: [] for group in names.values() for b in group if b is not None}
    lock = threading.Lock()
    state = {"start": None, "n": 0, "session": "%08x" % random.getrandbits(32)}
    period = 1.0 / rate
    rng = random.Random(7)

    def fill():
        # Appends every sample due by now (experiment time since start, up to SECONDS).
        if state["start"] is None:
            return
        now = min(time.monotonic() - state["start"], seconds)
        while state["n"] * period <= now:
            t = state["n"] * period
            acc, gyr, mag = (0.0, 0.0, g), (0.0, 0.0, RATE_Z), field(t)
            heading = math.pi / 2 + YAW0 + RATE_Z * t  # the device's x axis, counter-clockwise from east
            att = (0.0, 0.0, math.sin(heading / 2), math.cos(heading / 2))
            for source, v in (("accelerometer", acc), ("gyroscope", gyr), ("magnetic_field", mag),
                              ("gravity", acc), ("attitude", att)):
                tb, xb, yb, zb, ab = names[source]
                buffers[tb].append(t)
                buffers[xb].append(v[0]); buffers[yb].append(v[1]); buffers[zb].append(v[2])
                buffers[ab].append(v[3] if source == "attitude" else math.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2))
            buffers["pre_time"].append(t)
            buffers["pre"].append(1013.25)
            state["n"] += 1

    def number(v):
        return None if v is None or math.isnan(v) or math.isinf(v) else float("%.7E" % v)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, obj, status=200):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            if url.path == "/config":
                inputs = [{"source": s, "outputs": [{"x": n[1]}, {"y": n[2]}, {"z": n[3]}, {"abs": n[4]}, {"t": n[0]}]}
                          for s, n in names.items() if s != "pressure"]
                inputs.append({"source": "pressure", "outputs": [{"x": "pre"}, {"t": "pre_time"}]})
                self.reply({"crc32": "1a2b3c4d", "title": "Emulated sensors", "localTitle": "Emulated sensors",
                            "category": "Raw Sensors", "buffers": [{"name": b, "size": 0} for b in buffers],
                            "inputs": inputs, "export": []})
            elif url.path == "/meta":
                if platform == "ios":
                    self.reply({"version": "1.2.0", "build": "10200", "deviceModel": "iPhone14,2", "deviceBrand": "Apple"})
                else:
                    self.reply({"version": "1.2.0", "build": "1020003", "deviceModel": "Pixel 7", "deviceBrand": "google"})
            elif url.path == "/control":
                query = urllib.parse.parse_qs(url.query)
                with lock:
                    if query.get("cmd") == ["start"] and state["start"] is None:
                        state["start"] = time.monotonic()
                self.reply({"result": True})
            elif url.path == "/get":
                out = {}
                with lock:
                    fill()
                    for name, value in urllib.parse.parse_qsl(url.query, keep_blank_values=True):
                        if name not in buffers:
                            continue
                        data = buffers[name]
                        if value == "":
                            part = data[-1:]
                        elif value == "full":
                            part = list(data)
                        else:
                            threshold, _, timebuffer = value.partition("|")
                            times = buffers.get(timebuffer or name, [])
                            limit = float(threshold)
                            limit += abs(limit) * 1e-7
                            first = next((i for i, t in enumerate(times) if number(t) > limit), len(times))
                            part = data[first:]
                            # The buffers of one response can differ in length (phyphox-ios#22).
                            if part and name != (timebuffer or name) and rng.random() < 0.3:
                                part = part[:-1]
                        out[name] = {"size": 0, "updateMode": "partial", "buffer": [number(v) for v in part]}
                    measuring = state["start"] is not None and time.monotonic() - state["start"] < seconds
                self.reply({"buffer": out, "status": {"session": state["session"], "measuring": measuring,
                                                      "timedRun": False, "countDown": 0}})
            else:
                self.reply({"error": "not found"}, 404)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PHONE_PORT", "0"))), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    deadline = time.monotonic() + seconds + 60
    while time.monotonic() < deadline:
        with lock:
            started = state["start"]
        if started is not None and time.monotonic() > started + seconds + 0.5:
            break
        time.sleep(0.05)
    server.shutdown()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "sensorlogger":
        sensorlogger(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 100)
    elif mode == "hyperimu":
        hyperimu(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 100)
    elif mode == "sensorserver":
        sensorserver(float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 100)
    elif mode == "sensorlog":
        sensorlog(float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 100, len(sys.argv) > 4 and sys.argv[4] == "csv")
    elif mode == "phyphox":
        phyphox(float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 100, sys.argv[4] if len(sys.argv) > 4 else "android")
    else:
        sys.exit("unknown mode " + mode)
