// OpenCoreMotion dashboard page: plain JS, no dependencies. Protocol: Sources/MotionDashboard/PROTOCOL.md
"use strict";
(function () {
  const SENSORS = ["accelerometer", "gyro", "magnetometer", "deviceMotion"];  // graphed streams
  const COUNTERS = ["pedometer", "altitude", "activity"];  // streams shown as numbers, when the source has them
  const HISTORY_SECONDS = 5;          // visible time window of every graph
  const CAPACITY = 2048;              // samples kept per stream (≥ 5 s at 100 Hz)
  const COLORS = ["#ff5c5c", "#4cd964", "#4da3ff"];
  const RAD2DEG = 180 / Math.PI;
  // Smallest half-range of each graph's y axis, so a still device does not zoom noise to full height.
  const MIN_SPAN = { accelerometer: 1.2, gyro: 0.5, magnetometer: 60, deviceMotion: 30 };
  const LABELS = {
    accelerometer: ["x", "y", "z"], gyro: ["x", "y", "z"], magnetometer: ["x", "y", "z"],
    deviceMotion: ["roll", "pitch", "yaw"],
  };
  const UNITS = { accelerometer: "g", gyro: "rad/s", magnetometer: "µT", deviceMotion: "°" };

  // ---- what the browser test reads ------------------------------------------------------------
  // dashboardFrames: animation frames rendered so far. dashboardStats: messages and samples received.
  window.dashboardFrames = 0;
  const stats = {
    messages: 0, sampleMessages: 0, samples: 0, perSensor: {}, connects: 0, errors: 0,
    lastError: null, closeReason: null, intervalMs: null,
  };
  SENSORS.concat(COUNTERS).forEach((s) => (stats.perSensor[s] = 0));
  window.dashboardStats = stats;
  window.dashboardState = null; // the last `state` message
  window.dashboardLast = {};    // the last row of each stream

  // ---- per-stream ring buffers ----------------------------------------------------------------
  function Series() {
    this.t = new Float64Array(CAPACITY);
    this.v = [new Float64Array(CAPACITY), new Float64Array(CAPACITY), new Float64Array(CAPACITY)];
    this.head = 0;   // next write index
    this.count = 0;
    this.arrivals = []; // [performance.now(), samples] for the delivered rate
    this.dirty = true;
    this.span = 0;
  }
  Series.prototype.push = function (t, a, b, c) {
    const i = this.head;
    this.t[i] = t; this.v[0][i] = a; this.v[1][i] = b; this.v[2][i] = c;
    this.head = (i + 1) % CAPACITY;
    if (this.count < CAPACITY) this.count++;
    this.dirty = true;
  };
  Series.prototype.at = function (k) { // k = 0 oldest … count-1 newest
    return (this.head - this.count + k + CAPACITY) % CAPACITY;
  };
  Series.prototype.clear = function () { this.count = 0; this.head = 0; this.dirty = true; };

  const series = {};
  SENSORS.forEach((s) => (series[s] = new Series()));
  let lastMotion = null;

  // ---- DOM --------------------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);
  const panels = {};
  SENSORS.forEach((s) => {
    const el = $("panel-" + s);
    panels[s] = {
      el, canvas: el.querySelector("[data-graph]"), values: el.querySelector("[data-values]"),
      rate: el.querySelector("[data-rate]"), toggle: el.querySelector("[data-toggle]"),
      error: el.querySelector("[data-error]"), running: false, available: true,
    };
    panels[s].toggle.addEventListener("click", () => {
      send({ type: panels[s].running ? "stop" : "start", sensor: s });
    });
  });
  const counters = {};
  COUNTERS.forEach((s) => {
    const el = $("panel-" + s);
    counters[s] = {
      el, rate: el.querySelector("[data-rate]"), toggle: el.querySelector("[data-toggle]"),
      error: el.querySelector("[data-error]"), running: false, available: false, rows: 0,
    };
    counters[s].toggle.addEventListener("click", () => {
      send({ type: counters[s].running ? "stop" : "start", sensor: s });
    });
  });
  let altitudeRange = null;
  const devicePicker = $("device-picker");
  const deviceSelect = $("device");
  let shownDevice = null;
  deviceSelect.addEventListener("change", () => send({ type: "device", device: deviceSelect.value }));
  const slider = $("interval");
  const sliderLabel = $("interval-label");
  const filterMode = $("filter-mode");
  const filterFactor = $("filter-factor");
  const frameSelect = $("reference-frame");
  const device3d = $("device3d");

  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "—";
    const s = v.toFixed(digits);
    return v >= 0 ? "+" + s : s;
  }
  function showSliderLabel(ms) {
    sliderLabel.textContent = ms + " ms (" + (1000 / ms).toFixed(ms % 3 === 0 ? 1 : 0) + " Hz requested)";
  }

  let sentInterval = null;
  slider.addEventListener("input", () => {
    const ms = Number(slider.value);
    showSliderLabel(ms);
    if (ms !== sentInterval) { sentInterval = ms; send({ type: "interval", ms }); }
  });
  function sendFilter() {
    const factor = Number(filterFactor.value);
    send({ type: "filter", mode: filterMode.value, factor: isFinite(factor) ? factor : 0.1 });
  }
  filterMode.addEventListener("change", sendFilter);
  filterFactor.addEventListener("change", sendFilter);
  frameSelect.addEventListener("change", () => send({ type: "referenceFrame", frame: frameSelect.value }));

  // ---- connection ---------------------------------------------------------------------------------
  let socket = null;
  let retryDelay = 500;
  let controlErrorTimer = null;

  function setConnection(text, on) {
    const el = $("connection");
    el.textContent = text;
    el.className = "badge " + (on ? "on" : "off");
  }
  function send(obj) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(obj));
  }
  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws");
    socket.onopen = () => {
      retryDelay = 500;
      stats.connects++;
      stats.closeReason = null;
      setConnection("live", true);
    };
    socket.onmessage = (event) => {
      stats.messages++;
      let msg;
      try { msg = JSON.parse(event.data); } catch (e) { return; }
      handle(msg);
    };
    socket.onclose = (event) => {
      const reason = event.reason ? ": " + event.reason : "";
      stats.closeReason = event.reason || null;
      setConnection("disconnected" + reason + " — retrying", false);
      socket = null;
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 5000);
    };
  }

  function handle(msg) {
    switch (msg.type) {
      case "samples": onSamples(msg); break;
      case "hello": onHello(msg); break;
      case "state": onState(msg); break;
      case "error":
        stats.errors++;
        stats.lastError = msg;
        showControlError(msg.message + (msg.request ? " (" + msg.request + ")" : ""));
        break;
      case "sourceError": break; // also reflected in the next state message
      default: break;
    }
  }

  function onHello(msg) {
    const src = msg.source || {};
    $("source-name").textContent = src.name || "—";
    $("source-id").textContent = src.identifier || "";
    const parts = [];
    for (const name of SENSORS) {
      const s = src.streams && src.streams[name];
      if (!s) { parts.push(name + ": unavailable"); continue; }
      let r = name;
      const num = (v) => String(+Number(v).toPrecision(4));
      if (s.minimumRateHz !== null && s.maximumRateHz !== null) r += " " + num(s.minimumRateHz) + "–" + num(s.maximumRateHz) + " Hz";
      if (s.range !== null && s.range !== undefined) r += ", ±" + num(s.range) + " " + (UNITS[name] || "");
      parts.push(r);
    }
    $("source-streams").textContent = parts.join(" · ");
    $("source-details").textContent = (src.details || []).map((d) => d[0] + ": " + d[1]).join(" · ");
    frameSelect.innerHTML = "";
    for (const f of msg.referenceFrames || []) {
      const o = document.createElement("option");
      o.value = f; o.textContent = f;
      frameSelect.appendChild(o);
    }
    frameSelect.disabled = (msg.referenceFrames || []).length < 2;
    SENSORS.forEach((s) => series[s].clear());
    for (const s of COUNTERS) counters[s].el.hidden = !(src.streams && src.streams[s]);
  }

  function onState(msg) {
    window.dashboardState = msg;
    stats.intervalMs = msg.intervalMs;
    if (document.activeElement !== slider || sentInterval === msg.intervalMs) {
      slider.value = msg.intervalMs;
      showSliderLabel(msg.intervalMs);
    }
    sentInterval = msg.intervalMs;
    for (const s of SENSORS) {
      const st = msg.sensors[s];
      const p = panels[s];
      p.running = !!st.running;
      p.available = !!st.available;
      p.toggle.textContent = !st.available ? "Unavailable" : st.running ? "Stop" : "Start";
      p.toggle.disabled = !st.available;
      p.el.classList.toggle("stopped", !st.running);
      p.error.hidden = !st.error;
      p.error.textContent = st.error ? "Source error: " + st.error : "";
      if (!st.running) { p.rate.textContent = st.available ? "stopped" : "unavailable"; }
    }
    for (const s of COUNTERS) {
      const st = msg.sensors[s], c = counters[s];
      if (!st) continue;
      c.running = !!st.running;
      c.available = !!st.available;
      c.el.hidden = !st.available;
      c.toggle.textContent = st.running ? "Stop" : "Start";
      c.el.classList.toggle("stopped", !st.running);
      c.error.hidden = !st.error;
      c.error.textContent = st.error ? "Source error: " + st.error : "";
      c.rate.textContent = st.running ? ({ altitude: "1 Hz", activity: "on change" }[s] || "on each step") : "stopped";
    }
    const devices = msg.devices || [];
    devicePicker.hidden = devices.length === 0;
    if (document.activeElement !== deviceSelect) {
      deviceSelect.innerHTML = "";
      for (const d of devices) {
        const o = document.createElement("option");
        o.value = d.id; o.textContent = d.id + (d.silent ? " (silent)" : "");
        deviceSelect.appendChild(o);
      }
      if (msg.device) deviceSelect.value = msg.device;
    }
    if ((msg.device || null) !== shownDevice) {
      // Another device: its samples start afresh.
      shownDevice = msg.device || null;
      SENSORS.forEach((s) => series[s].clear());
      lastMotion = null;
      altitudeRange = null;
    }
    const srcErr = $("source-error");
    srcErr.hidden = !msg.sourceError;
    srcErr.textContent = msg.sourceError ? "Source error: " + msg.sourceError : "";
    if (msg.referenceFrame) frameSelect.value = msg.referenceFrame;
    if (document.activeElement !== filterMode) filterMode.value = msg.filter.mode;
    if (document.activeElement !== filterFactor) filterFactor.value = msg.filter.factor;
    $("orientation").textContent = msg.orientation || "unknown";
    $("clients").textContent = msg.clients;
  }

  function showControlError(text) {
    const el = $("control-error");
    el.textContent = "Refused: " + text;
    el.hidden = false;
    clearTimeout(controlErrorTimer);
    controlErrorTimer = setTimeout(() => (el.hidden = true), 6000);
  }

  function num(v, digits) {
    return v === null || v === undefined || !isFinite(v) ? "—" : v.toFixed(digits);
  }
  function onCounters(msg) {
    const ped = msg.pedometer;
    if (ped && ped.length) {
      const r = ped[ped.length - 1];  // [t, steps, distance, cadence, pace]
      window.dashboardLast.pedometer = r;
      $("ped-steps").textContent = r[1];
      $("ped-distance").textContent = num(r[2], 1);
      $("ped-cadence").textContent = r[3] === null ? "— (not walking)" : num(r[3], 2);
      $("ped-pace").textContent = num(r[4], 2);
    }
    const alt = msg.altitude;
    if (alt && alt.length) {
      for (const r of alt) {  // [t, relativeAltitude, pressure]
        if (r[1] === null) continue;
        altitudeRange = altitudeRange ? [Math.min(altitudeRange[0], r[1]), Math.max(altitudeRange[1], r[1])] : [r[1], r[1]];
      }
      const r = alt[alt.length - 1];
      window.dashboardLast.altitude = r;
      $("alt-relative").textContent = fmt(r[1], 2);
      $("alt-pressure").textContent = num(r[2], 3);
      $("alt-range").textContent = altitudeRange ? fmt(altitudeRange[0], 2) + " … " + fmt(altitudeRange[1], 2) : "—";
    }
    const act = msg.activity;
    if (act && act.length) {
      const r = act[act.length - 1];  // [t, activity, confidence]
      window.dashboardLast.activity = r;
      $("act-kind").textContent = r[1];
      $("act-confidence").textContent = ["low", "medium", "high"][r[2]] || "—";
    }
    for (const s of COUNTERS) {
      if (!msg[s]) continue;
      stats.samples += msg[s].length;
      stats.perSensor[s] += msg[s].length;
    }
  }

  function onSamples(msg) {
    stats.sampleMessages++;
    onCounters(msg);
    const now = performance.now();
    for (const s of SENSORS) {
      const rows = msg[s];
      if (!rows) continue;
      const ser = series[s];
      for (const r of rows) {
        if (s === "deviceMotion") {
          ser.push(r[0], r[1] * RAD2DEG, r[2] * RAD2DEG, r[3] * RAD2DEG);
          lastMotion = r;
        } else {
          ser.push(r[0], r[1], r[2], r[3]);
        }
      }
      ser.arrivals.push([now, rows.length]);
      stats.samples += rows.length;
      stats.perSensor[s] += rows.length;
    }
  }

  // ---- delivered rate: samples that arrived in the last second -------------------------------------
  function deliveredRate(ser, now) {
    while (ser.arrivals.length && now - ser.arrivals[0][0] > 1000) ser.arrivals.shift();
    let n = 0;
    for (const a of ser.arrivals) n += a[1];
    return n; // per second
  }

  // ---- graphs -------------------------------------------------------------------------------------
  function fitCanvas(c) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(c.clientWidth * dpr), h = Math.round(c.clientHeight * dpr);
    if (w > 0 && h > 0 && (c.width !== w || c.height !== h)) { c.width = w; c.height = h; return true; }
    return false;
  }

  function niceStep(span) {
    const raw = span / 4;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }

  function drawGraph(sensor) {
    const p = panels[sensor], ser = series[sensor], c = p.canvas;
    const resized = fitCanvas(c);
    if (!ser.dirty && !resized) return;
    ser.dirty = false;
    const ctx = c.getContext("2d");
    const dpr = window.devicePixelRatio || 1;
    const W = c.width / dpr, H = c.height / dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const left = 52, right = 8, top = 20, bottom = 22; // the legend sits above the plot
    const pw = W - left - right, ph = H - top - bottom;

    // y range: symmetric, at least MIN_SPAN, grows at once and shrinks slowly
    let maxAbs = 0;
    const tEnd = ser.count ? ser.t[ser.at(ser.count - 1)] : 0;
    const tStart = tEnd - HISTORY_SECONDS;
    let first = 0;
    while (first < ser.count && ser.t[ser.at(first)] < tStart) first++;
    for (let k = first; k < ser.count; k++) {
      const i = ser.at(k);
      for (let a = 0; a < 3; a++) maxAbs = Math.max(maxAbs, Math.abs(ser.v[a][i]));
    }
    const want = Math.max(MIN_SPAN[sensor], maxAbs * 1.1);
    ser.span = want > ser.span ? want : ser.span * 0.98 + want * 0.02;
    const span = ser.span;
    const y = (v) => top + ph / 2 - (v / span) * (ph / 2);
    const x = (t) => left + ((t - tStart) / HISTORY_SECONDS) * pw;

    // axes and grid
    ctx.font = "11px ui-monospace, monospace";
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#26303a";
    ctx.fillStyle = "#8b97a3";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const step = niceStep(span * 2);
    for (let v = -Math.floor(span / step) * step; v <= span + 1e-9; v += step) {
      const yy = Math.round(y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(left, yy); ctx.lineTo(left + pw, yy); ctx.stroke();
      ctx.fillText(Math.abs(v) < 1e-9 ? "0" : +v.toPrecision(3) + "", left - 6, yy);
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let s = 0; s <= HISTORY_SECONDS; s++) {
      const xx = Math.round(left + (s / HISTORY_SECONDS) * pw) + 0.5;
      ctx.beginPath(); ctx.moveTo(xx, top); ctx.lineTo(xx, top + ph); ctx.stroke();
      ctx.fillText(s === HISTORY_SECONDS ? "now" : "−" + (HISTORY_SECONDS - s) + " s", xx, top + ph + 5);
    }
    ctx.strokeStyle = "#55616d";
    ctx.strokeRect(left + 0.5, top + 0.5, pw, ph);
    ctx.save();
    ctx.translate(12, top + ph / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(UNITS[sensor], 0, 0);
    ctx.restore();

    // traces
    ctx.save();
    ctx.beginPath(); ctx.rect(left, top, pw, ph); ctx.clip();
    ctx.lineWidth = 1.5;
    for (let a = 0; a < 3; a++) {
      ctx.strokeStyle = COLORS[a];
      ctx.beginPath();
      for (let k = Math.max(0, first - 1); k < ser.count; k++) {
        const i = ser.at(k);
        const xx = x(ser.t[i]), yy = y(ser.v[a][i]);
        if (k === Math.max(0, first - 1)) ctx.moveTo(xx, yy); else ctx.lineTo(xx, yy);
      }
      ctx.stroke();
    }
    ctx.restore();

    // legend
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    LABELS[sensor].forEach((label, a) => {
      const lx = left + a * 62;
      ctx.fillStyle = COLORS[a];
      ctx.fillRect(lx, 8, 12, 3);
      ctx.fillStyle = "#dde3ea";
      ctx.fillText(label, lx + 16, 4);
    });

    // current values
    if (ser.count) {
      const i = ser.at(ser.count - 1);
      const digits = sensor === "magnetometer" || sensor === "deviceMotion" ? 1 : 3;
      p.values.innerHTML = "";
      LABELS[sensor].forEach((label, a) => {
        const span = document.createElement("span");
        span.className = ["x", "y", "z"][a];
        span.textContent = label + " " + fmt(ser.v[a][i], digits) + " " + UNITS[sensor];
        p.values.appendChild(span);
      });
    }
  }

  // ---- the 3D device: a phone-shaped box turned by the attitude quaternion ---------------------------
  const BOX = (function () {
    const hx = 0.36, hy = 0.72, hz = 0.06;
    const v = [];
    for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) v.push([sx * hx, sy * hy, sz * hz]);
    // faces as vertex indices (index = 4*(sx>0) + 2*(sy>0) + (sz>0)) with a colour each
    const faces = [
      { f: [1, 3, 7, 5], c: "#3b82c4", screen: true },  // +z: the screen
      { f: [0, 4, 6, 2], c: "#3a424b" },                // −z: the back
      { f: [4, 5, 7, 6], c: "#59636e" },                // +x
      { f: [0, 2, 3, 1], c: "#59636e" },                // −x
      { f: [2, 6, 7, 3], c: "#6b7682" },                // +y: the top
      { f: [0, 1, 5, 4], c: "#4a535d" },                // −y
    ];
    return { v, faces };
  })();

  function rotate(q, p) { // q = [x, y, z, w], device → reference frame
    const [x, y, z, w] = q;
    const ix = w * p[0] + y * p[2] - z * p[1];
    const iy = w * p[1] + z * p[0] - x * p[2];
    const iz = w * p[2] + x * p[1] - y * p[0];
    const iw = -x * p[0] - y * p[1] - z * p[2];
    return [
      ix * w + iw * -x + iy * -z - iz * -y,
      iy * w + iw * -y + iz * -x - ix * -z,
      iz * w + iw * -z + ix * -y - iy * -x,
    ];
  }

  let drawn3d = null;
  function drawDevice() {
    const resized = fitCanvas(device3d);
    if (!resized && drawn3d === lastMotion) return;
    drawn3d = lastMotion;
    const ctx = device3d.getContext("2d");
    const dpr = window.devicePixelRatio || 1;
    const W = device3d.width / dpr, H = device3d.height / dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const q = lastMotion ? [lastMotion[4], lastMotion[5], lastMotion[6], lastMotion[7]] : [0, 0, 0, 1];
    // view: reference Z is up on screen, seen from 35° above the horizon, looking along +Y
    const tilt = 35 * Math.PI / 180, ct = Math.cos(tilt), st = Math.sin(tilt);
    const scale = Math.min(W, H) * 0.55;
    const pts = BOX.v.map((p) => {
      const r = rotate(q, p);
      const depth = r[1] * ct - r[2] * st;          // away from the viewer
      const up = r[2] * ct + r[1] * st;
      const persp = 3 / (3 + depth);
      return [W / 2 + r[0] * scale * persp, H / 2 - up * scale * persp, depth];
    });
    const order = BOX.faces.map((face) => ({
      face, depth: face.f.reduce((s, i) => s + pts[i][2], 0) / 4,
    })).sort((a, b) => b.depth - a.depth);
    ctx.lineJoin = "round";
    for (const { face } of order) {
      ctx.beginPath();
      face.f.forEach((i, k) => (k ? ctx.lineTo(pts[i][0], pts[i][1]) : ctx.moveTo(pts[i][0], pts[i][1])));
      ctx.closePath();
      ctx.fillStyle = face.c;
      ctx.fill();
      ctx.strokeStyle = "#0c1014";
      ctx.stroke();
    }
    // the home-button end, so the top of the device is obvious
    const top = rotate(q, [0, 0.6, 0.07]);
    const d = top[1] * ct - top[2] * st, u = top[2] * ct + top[1] * st, ps = 3 / (3 + d);
    ctx.fillStyle = "#dde3ea";
    ctx.beginPath();
    ctx.arc(W / 2 + top[0] * scale * ps, H / 2 - u * scale * ps, 3, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = "#8b97a3";
    ctx.font = "11px ui-monospace, monospace";
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    if (lastMotion) {
      ctx.fillText("roll  " + fmt(lastMotion[1] * RAD2DEG, 1) + "°", 6, 6);
      ctx.fillText("pitch " + fmt(lastMotion[2] * RAD2DEG, 1) + "°", 6, 20);
      ctx.fillText("yaw   " + fmt(lastMotion[3] * RAD2DEG, 1) + "°", 6, 34);
    } else {
      ctx.fillText("no device motion yet", 6, 6);
    }
  }

  function vec(r, i, digits) { return fmt(r[i], digits) + " " + fmt(r[i + 1], digits) + " " + fmt(r[i + 2], digits); }
  let shownMotion = null;
  function showMotionValues() {
    if (!lastMotion || shownMotion === lastMotion) return;
    shownMotion = lastMotion;
    const r = lastMotion;
    $("dm-gravity").textContent = vec(r, 8, 3);
    $("dm-user").textContent = vec(r, 11, 3);
    $("dm-rate").textContent = vec(r, 14, 3);
    const acc = ["uncalibrated", "low", "medium", "high"][r[20] + 1] || "?";
    $("dm-field").textContent = vec(r, 17, 1) + " (" + acc + ")";
    $("dm-heading").textContent = r[21] === null || r[21] < 0 ? "unavailable" : r[21].toFixed(1) + "°";
  }

  // ---- the render loop ----------------------------------------------------------------------------
  let fpsFrames = 0, fpsStart = performance.now(), lastRateUpdate = 0;
  function frame(now) {
    window.dashboardFrames++;
    fpsFrames++;
    for (const s of SENSORS) drawGraph(s);
    drawDevice();
    showMotionValues();
    if (now - lastRateUpdate > 250) {
      lastRateUpdate = now;
      let total = 0;
      for (const s of SENSORS) {
        const r = deliveredRate(series[s], performance.now());
        total += r;
        if (panels[s].running) panels[s].rate.textContent = r + " Hz delivered";
      }
      $("delivered-total").textContent = total + " samples/s";
    }
    if (now - fpsStart >= 1000) {
      $("fps").textContent = Math.round((fpsFrames * 1000) / (now - fpsStart));
      fpsFrames = 0; fpsStart = now;
    }
    requestAnimationFrame(frame);
  }

  showSliderLabel(Number(slider.value));
  requestAnimationFrame(frame);
  connect();
})();
