#!/usr/bin/env python3
"""Publishes Sensor Logger MQTT messages with paho-mqtt, a client this project did not write.

usage: sensorlogger-mqtt-publisher.py HOST PORT TOPIC SECONDS [RATE_HZ] [BATCH_S]

The message layout is Sensor Logger's push format as ../shared/docs/phone-formats.md describes it:
{messageId, sessionId, deviceId, payload: [{name, time (epoch ns), values: {x, y, z}}]}, one message
per batch period, QoS 0 (what the app uses). An Android phone with "Standardise Units & Frames":
`totalacceleration` in m/s² with Android's sign (face up reads +9.80665 on z, which Core Motion
calls -1 g), `gyroscope` in rad/s, `magnetometer` in µT. The phone lies face up and turns
counter-clockwise at 0.1 rad/s, so the horizontal field turns the other way in the phone's frame.

Prints one line at the end: `sent MESSAGES SAMPLES_PER_SENSOR`.
"""
import json
import math
import sys
import time

import paho.mqtt.client as mqtt


def main():
    host, port, topic, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    rate = float(sys.argv[5]) if len(sys.argv) > 5 else 100.0
    batch = float(sys.argv[6]) if len(sys.argv) > 6 else 0.1
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="paho-soak-publisher")
    client.connect(host, port, keepalive=30)
    client.loop_start()
    period, turn = 1.0 / rate, 0.1
    per_batch = max(1, round(batch * rate))
    start_wall, start = time.time(), time.monotonic()
    message_id, index = 0, 0
    while True:
        deadline = start + (message_id + 1) * batch
        if deadline - start > seconds:
            break
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        payload = []
        for _ in range(per_batch):
            t = index * period
            ns = int((start_wall + t) * 1e9)
            heading = turn * t
            payload.append({"name": "totalacceleration", "time": ns, "values": {"x": 0.0, "y": 0.0, "z": 9.80665}})
            payload.append({"name": "gyroscope", "time": ns, "values": {"x": 0.0, "y": 0.0, "z": turn}})
            payload.append({"name": "magnetometer", "time": ns,
                            "values": {"x": 20.0 * math.cos(-heading), "y": 20.0 * math.sin(-heading), "z": -40.0}})
            index += 1
        body = {"messageId": message_id, "sessionId": "paho-soak", "deviceId": "paho-soak", "payload": payload}
        client.publish(topic, json.dumps(body), qos=0)
        message_id += 1
    time.sleep(0.5)
    client.loop_stop()
    client.disconnect()
    print(f"sent {message_id} {index}", flush=True)


if __name__ == "__main__":
    main()
