#!/usr/bin/env python3
"""Writes inputs that were quadratic (or worse) for the reader or the fold, for timing.

Usage: gen_hostile.py KIND N > input.jsonl
  attributes N   one ENTITY_CREATE with N distinct attributes (N = 200000: about 4 MB)
  tags N         one CLASSIFICATION_ADD with N tags (N / 2 distinct names)
  guids N        N ENTITY_CREATEs whose guids all had one value under the old GuidHash
                 (high half XOR low half times 0x9e3779b97f4a7c15)
  splits N       N first chunks of split messages that each claim 1000 chunks

Deterministic. See RESULTS.md for the commands and figures.
"""
import json, sys

GUID = "00000001-0000-4000-8000-000000000001"


def envelope(message):
    return json.dumps({"version": {"version": "1.0.0"}, "msgCreationTime": 1700000000000,
                       "message": message}, separators=(",", ":"))


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    if kind == "attributes":
        attrs = {"qualifiedName": "db.t@c"}
        attrs.update({"attribute_%d" % i: i for i in range(n)})
        out.write(envelope({"type": "ENTITY_NOTIFICATION_V2", "operationType": "ENTITY_CREATE",
                            "eventTime": 1, "entity": {"typeName": "t", "guid": GUID,
                                                       "attributes": attrs}}) + "\n")
    elif kind == "tags":
        tags = [{"typeName": "T%d" % (i % (n // 2 or 1))} for i in range(n)]
        out.write(envelope({"type": "ENTITY_NOTIFICATION_V2", "operationType": "CLASSIFICATION_ADD",
                            "eventTime": 1, "entity": {"typeName": "t", "guid": GUID,
                                                       "classifications": tags}}) + "\n")
    elif kind == "guids":
        mask = (1 << 64) - 1
        for i in range(n):
            b = 0x4000800000000000 | i
            a = 0x1234567890ABCDEF ^ ((b * 0x9E3779B97F4A7C15) & mask)
            guid = "%016x%016x" % (a, b)
            out.write(envelope({"type": "ENTITY_NOTIFICATION_V2", "operationType": "ENTITY_CREATE",
                                "eventTime": i, "entity": {"typeName": "t", "guid": guid,
                                "attributes": {"qualifiedName": "q%d" % i}}}) + "\n")
    elif kind == "splits":
        for i in range(n):
            out.write(json.dumps({"version": {}, "msgId": "m_%d" % i, "msgCompressionKind": "GZIP",
                                  "msgSplitIdx": 0, "msgSplitCount": 1000, "message": "H4sI"},
                                 separators=(",", ":")) + "\n")
    else:
        sys.exit("unknown kind " + kind)


main()
