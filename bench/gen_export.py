#!/usr/bin/env python3
"""Writes a realistic ATLAS_ENTITIES export (one envelope per line) of about SIZE megabytes.

Usage: gen_export.py [SIZE_MB [SEED]] > export.jsonl      (defaults: 100 MB, seed 1)

The mix follows what Atlas emits for Hive workloads: entity creates and updates dominate, with
classification changes, relationship events and deletes. The guid pool grows with the size (one
guid per ~1,500 bytes of output, at least 20,000), so a 4 GiB export touches millions of distinct
entities, as a months-long backfill does. Most events hit an entity introduced recently (a table
is created, then altered, tagged and linked to its columns within minutes), the rest any entity
of the pool, so renames, re-tags and deletes hit old entities too. Deterministic for a given seed.
"""
import json, random, sys, uuid

USAGE = "usage: gen_export.py [SIZE_MB [SEED]] > export.jsonl"
BYTES_PER_GUID = 1500
HOT_SPAN = 50000   # guids near the current position that most events pick from
HOT_SHARE = 0.7


def main(argv):
    if len(argv) > 3 or any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if len(argv) <= 3 else 64
    try:
        size = int(float(argv[1]) * 1024 * 1024) if len(argv) > 1 else 100 * 1024 * 1024
        seed = int(argv[2]) if len(argv) > 2 else 1
    except ValueError:
        print(USAGE, file=sys.stderr)
        return 64
    if size <= 0:
        print(USAGE + " (SIZE_MB must be positive)", file=sys.stderr)
        return 64
    rng = random.Random(seed)
    pool = max(20000, size // BYTES_PER_GUID)
    guids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(pool)]
    tags = ["PII", "SENSITIVE", "GDPR", "FINANCE", "TIER1", "DEPRECATED"]
    types = ["hive_table", "hive_column", "hive_db", "hive_storagedesc", "hdfs_path", "hive_process"]
    out = sys.stdout
    written = 0
    t = 1619751227966
    head = ('{"version":{"version":"1.0.0","versionParts":[1]},"msgCompressionKind":"NONE",'
            '"msgSplitIdx":1,"msgSplitCount":1,"msgSourceIP":"172.27.79.198","msgCreatedBy":"",'
            '"msgCreationTime":%d,"spooled":false,"message":')

    def pick():
        # The hot span slides through the pool as the export proceeds.
        if rng.random() < HOT_SHARE:
            centre = int(written / size * pool)
            lo = max(0, min(centre, pool - HOT_SPAN))
            return guids[min(pool - 1, lo + rng.randrange(HOT_SPAN))]
        return rng.choice(guids)

    while written < size:
        t += rng.randint(0, 50)
        g = pick()
        ty = types[int(g[:2], 16) % len(types)]
        qn = "db%d.t%s@cm" % (int(g[2:4], 16) % 20, g[:8] if rng.random() < 0.95 else g[9:13])
        r = rng.random()
        attrs = {"owner": rng.choice(["impala", "hive", "etl"]), "createTime": t - 1000,
                 "qualifiedName": qn, "name": qn.split("@")[0].split(".")[-1]}
        if ty in ("hive_db", "hive_process"):
            attrs["clusterName"] = "cm"
        if rng.random() < 0.3:
            attrs["description"] = "Table holding %s data; refreshed nightly" % rng.choice(["sales", "ops", "hr"])
        entity = {"typeName": ty, "attributes": attrs, "guid": g, "displayText": attrs["name"],
                  "isIncomplete": False}
        if r < 0.45:
            op = "ENTITY_CREATE"
        elif r < 0.80:
            op = "ENTITY_UPDATE"
            entity["status"] = "ACTIVE"
        elif r < 0.83:
            op = "ENTITY_DELETE"
        elif r < 0.93:
            op = rng.choice(["CLASSIFICATION_ADD", "CLASSIFICATION_DELETE", "CLASSIFICATION_UPDATE"])
            chosen = rng.sample(tags, rng.randint(0, 3))
            if chosen:
                entity["classificationNames"] = chosen
                entity["classifications"] = [{"typeName": c, "attributes": {"level": rng.randint(1, 5)},
                                              "entityGuid": g if rng.random() < 0.8 else pick(),
                                              "entityStatus": "ACTIVE", "propagate": True,
                                              "removePropagationsOnEntityDelete": False} for c in chosen]
        else:
            op = rng.choice(["RELATIONSHIP_CREATE", "RELATIONSHIP_UPDATE", "RELATIONSHIP_DELETE"])
            g2 = pick()
            msg = {"type": "ENTITY_NOTIFICATION_V2",
                   "relationship": {"typeName": "hive_table_columns", "guid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                    "status": "ACTIVE", "propagateTags": "NONE", "label": "__hive_table.columns",
                                    "end1": {"guid": g, "typeName": "hive_table"},
                                    "end2": {"guid": g2, "typeName": "hive_column",
                                             "uniqueAttributes": {"qualifiedName": qn}}},
                   "operationType": op, "eventTime": t}
            line = head % (t + 700) + json.dumps(msg, separators=(",", ":")) + "}\n"
            out.write(line)
            written += len(line)
            continue
        msg = {"type": "ENTITY_NOTIFICATION_V2", "entity": entity, "operationType": op, "eventTime": t}
        line = head % (t + 700) + json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "}\n"
        out.write(line)
        written += len(line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:
        sys.exit(0)
