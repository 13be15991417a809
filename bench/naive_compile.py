#!/usr/bin/env python3
"""The naive baseline for `atlas2kudu compile`: one UPSERT per event, standard `json` module.

Usage: naive_compile.py [FILE] > out.sql      (no FILE or "-": stdin)

What a competent engineer writes in an afternoon: read one envelope per line with json.loads,
and for every event print one statement that applies it alone (entity events and classification
changes: an UPSERT of the entity_flat row with its props_json; relationship events: an UPSERT
into edge_out). Literals are escaped properly and props_json is serialized with sorted keys, so
the SQL is runnable; there is no folding across events, no batching, no prior state and none of
the other projection tables. It exists to be measured next to the real compiler (bench/run).
"""
import json
import sys

ESCAPES = {c: "\\%03o" % c for c in list(range(0x20)) + [0x7F]}
ESCAPES.update({ord("\\"): "\\\\", ord("'"): "\\'", ord("\n"): "\\n", ord("\r"): "\\r",
                ord("\t"): "\\t"})


def literal(text):
    if text is None:
        return "NULL"
    return "'" + text.translate(ESCAPES) + "'"


def key(guid):
    return "'" + guid.replace("-", "").lower() + "'"


def main(argv):
    source = open(argv[1], encoding="utf-8") if len(argv) > 1 and argv[1] != "-" else sys.stdin
    out = sys.stdout
    events = 0
    for line in source:
        line = line.strip()
        if not line:
            continue
        envelope = json.loads(line)
        message = envelope["message"]
        op = message["operationType"]
        ts = int(message.get("eventTime", envelope.get("msgCreationTime", 0))) * 1000
        events += 1
        if op.startswith("RELATIONSHIP_"):
            rel = message["relationship"]
            label = rel.get("label") or rel["typeName"]
            out.write("UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`, `dst_type`) VALUES (%s, %s, %s, %s);\n"
                      % (key(rel["end1"]["guid"]), literal(label), key(rel["end2"]["guid"]),
                         literal(rel["end2"].get("typeName", ""))))
            continue
        entity = message["entity"]
        attrs = dict(entity.get("attributes") or {})
        qn = attrs.pop("qualifiedName", None)
        name = attrs.pop("name", None)
        props = json.dumps({k: v for k, v in attrs.items() if v is not None},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        state = "DELETED" if op == "ENTITY_DELETE" else "ACTIVE"
        out.write("UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, "
                  "`state`, `updated_ts`, `props_json`) VALUES (%s, %s, %s, %s, '%s', %d, %s);\n"
                  % (key(entity["guid"]), literal(entity["typeName"]), literal(qn), literal(name),
                     state, ts, literal(props)))
    print("naive_compile: %d events -> %d statements" % (events, events), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
