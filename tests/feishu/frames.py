"""Feishu's long-connection frames, encoded and decoded by the official Python SDK's
generated protobuf module (lark_oapi.ws.pb.pbbp2_pb2): the real counterpart of the desk's
own encoding in the e2e tests. One JSON request a line on stdin, one JSON answer a line
on stdout:
  {"op": "encode", "frame": F}  ->  {"hex": the serialized Frame in hex}
  {"op": "decode", "hex": ...}  ->  {"frame": F} or {"error": why}
F: {"SeqID", "LogID", "service", "method", "headers": [[key, value], ...],
    "payload": text (UTF-8), "payload_type", "payload_encoding", "LogIDNew"}; a field not
set is left out when decoding. Decoding refuses a frame missing a required field, as the
SDK's own client does."""
import json
import sys

from lark_oapi.ws.pb.pbbp2_pb2 import Frame

OPTIONAL = ("payload_encoding", "payload_type", "LogIDNew")


def encode(f):
    frame = Frame()
    frame.SeqID = f.get("SeqID", 0)
    frame.LogID = f.get("LogID", 0)
    frame.service = f.get("service", 0)
    frame.method = f.get("method", 0)
    for key, value in f.get("headers", []):
        h = frame.headers.add()
        h.key = key
        h.value = value
    if "payload" in f:
        frame.payload = f["payload"].encode("utf-8")
    for name in OPTIONAL:
        if name in f:
            setattr(frame, name, f[name])
    return frame.SerializeToString().hex()


def decode(text):
    frame = Frame()
    frame.ParseFromString(bytes.fromhex(text))
    if not frame.IsInitialized():
        raise ValueError("missing required fields: %s" % frame.FindInitializationErrors())
    out = {
        "SeqID": frame.SeqID,
        "LogID": frame.LogID,
        "service": frame.service,
        "method": frame.method,
        "headers": [[h.key, h.value] for h in frame.headers],
    }
    if frame.HasField("payload"):
        out["payload"] = frame.payload.decode("utf-8")
    for name in OPTIONAL:
        if frame.HasField(name):
            out[name] = getattr(frame, name)
    return out


for line in sys.stdin:
    request = json.loads(line)
    try:
        if request["op"] == "encode":
            answer = {"hex": encode(request["frame"])}
        else:
            answer = {"frame": decode(request["hex"])}
    except Exception as e:  # the test shows why
        answer = {"error": "%s: %s" % (type(e).__name__, e)}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    sys.stdout.flush()
