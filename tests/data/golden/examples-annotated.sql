-- atlas2kudu 0.1.0 compile
-- options: --database atlas --key-encoding hex --tombstone soft --prior none --props-max-bytes 60000 --window-events 50000 --batch-rows 1000 --batch-bytes 4194304 --annotate
-- prior state: none (only what this input establishes; renames and tag removals use predicate deletes, props of entities first seen here merge from {}, and a type change of one without its qualifiedName drops its entity_by_qn row)
-- window 1: events 1-23 (examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:4)
-- window 1 phase 1: deletes (12 statements)
-- entity_by_qn: 3 keys from 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('204aed264bf63d51b9e8f3a9c0fa7c76', '462ed479747bd5bbf0c1a3610874fe6e', 'de09793dfc2386f36591aaf9fc831606');
-- entity_by_qn: 3 keys from 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('204aed264bf63d51b9e8f3a9c0fa7c76', '462ed479747bd5bbf0c1a3610874fe6e', 'de09793dfc2386f36591aaf9fc831606') AND `guid` IN ('00000001000040008000000000000001');
-- entity_by_qn: 8 keys from 20 events, examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:4
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001', '00000002000040008000000000000002', '00000003000040008000000000000003', '06146bc1a6314f9d8d0cf1c7b71a9c0a', '0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c', '2237918c91544725bfc430b9d82cbddd', '81f18e763257450cb1963b50c7e273be', 'd278a8045ccf47809e69a335f3b40449') AND `qn_digest` NOT IN ('25e7dff921eb57a98ffea22c1a1086f4', '3121cad19ea632f22154c6589a6c5127', '5deefa138f365651520fb4c4319575ff', 'a21efddc5025ca1afaa82cc8176a40f2', 'b7a8812245539a37ff921447e3af6cc3', 'd54571ed41567996375da23e0528ebdf', 'de09793dfc2386f36591aaf9fc831606', 'e3c3856f005ba5c45136866926ec8be2');
-- edge_out: edge 00000003-0000-4000-8000-000000000003 -> 00000001-0000-4000-8000-000000000001 (owns); 2 events, examples/02-rename-tags-edges-delete.jsonl:8 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000003000040008000000000000003') AND `elabel` IN ('owns') AND `dst` IN ('00000001000040008000000000000001');
-- edge_out: edge 00000001-0000-4000-8000-000000000001 -> 00000002-0000-4000-8000-000000000002 (r:ab); 2 events, examples/02-rename-tags-edges-delete.jsonl:7 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001') AND `elabel` IN ('r:ab') AND `dst` IN ('00000002000040008000000000000002');
-- edge_in: edge 00000003-0000-4000-8000-000000000003 -> 00000001-0000-4000-8000-000000000001 (owns); 2 events, examples/02-rename-tags-edges-delete.jsonl:8 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001') AND `elabel` IN ('owns') AND `src` IN ('00000003000040008000000000000003');
-- edge_in: edge 00000001-0000-4000-8000-000000000001 -> 00000002-0000-4000-8000-000000000002 (r:ab); 2 events, examples/02-rename-tags-edges-delete.jsonl:7 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000002000040008000000000000002') AND `elabel` IN ('r:ab') AND `src` IN ('00000001000040008000000000000001');
-- edge_out: guid 00000001-0000-4000-8000-000000000001; 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
-- edge_out: guid 00000001-0000-4000-8000-000000000001; 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
-- edge_in: guid 00000001-0000-4000-8000-000000000001; 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
-- edge_in: guid 00000001-0000-4000-8000-000000000001; 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
-- entity_classifications: guid 00000001-0000-4000-8000-000000000001; 6 events, examples/02-rename-tags-edges-delete.jsonl:1 .. examples/02-rename-tags-edges-delete.jsonl:11
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000001000040008000000000000001') AND `tag_name` NOT IN ('Tier1');
-- window 1 phase 2: upserts (9 statements)
-- entity_by_qn: 7 rows from 14 events, examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:4
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('25e7dff921eb57a98ffea22c1a1086f4', '0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c', 'hive_table'),
('3121cad19ea632f22154c6589a6c5127', '81f18e763257450cb1963b50c7e273be', 'hive_table'),
('5deefa138f365651520fb4c4319575ff', '00000002000040008000000000000002', 'hive_table'),
('a21efddc5025ca1afaa82cc8176a40f2', '2237918c91544725bfc430b9d82cbddd', 'hive_column'),
('b7a8812245539a37ff921447e3af6cc3', '06146bc1a6314f9d8d0cf1c7b71a9c0a', 'hive_db'),
('d54571ed41567996375da23e0528ebdf', '00000003000040008000000000000003', 'DataSet'),
('e3c3856f005ba5c45136866926ec8be2', 'd278a8045ccf47809e69a335f3b40449', 'hive_storagedesc');
-- edge_out: edge 00000002-0000-4000-8000-000000000002 -> 00000003-0000-4000-8000-000000000003 (r:bc); event examples/02-rename-tags-edges-delete.jsonl:9
UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`, `dst_type`) VALUES
('00000002000040008000000000000002', 'r:bc', '00000003000040008000000000000003', 'DataSet');
-- edge_in: edge 00000002-0000-4000-8000-000000000002 -> 00000003-0000-4000-8000-000000000003 (r:bc); event examples/02-rename-tags-edges-delete.jsonl:9
UPSERT INTO `atlas`.`edge_in` (`dst`, `elabel`, `src`, `src_type`) VALUES
('00000003000040008000000000000003', 'r:bc', '00000002000040008000000000000002', 'hive_table');
-- entity_classifications: guid 00000001-0000-4000-8000-000000000001 tag Tier1; event examples/02-rename-tags-edges-delete.jsonl:10
UPSERT INTO `atlas`.`entity_classifications` (`tag_name`, `guid`, `propagated`, `source_guid`, `attrs_json`, `updated_ts`) VALUES
('Tier1', '00000001000040008000000000000001', FALSE, '00000001000040008000000000000001', '{"steward":"z"}', 16000);
-- entity_audit: 13 rows from 20 events, examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:4
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 10000, 2305330978963641890, 'ENTITY_CREATE', 'hive_table', 'qa', '{"attributes":["name","owner","qualifiedName"]}'),
('00000001000040008000000000000001', 16000, 8351584290116406131, 'CLASSIFICATION_ADD', 'hive_table', 'qa', '{"attributes":["name","owner","qualifiedName"],"classifications":["Tier1"]}'),
('00000001000040008000000000000001', 17000, 7003480131857390707, 'ENTITY_DELETE', 'hive_table', 'qa', '{"attributes":["createTime","description","name","qualifiedName"]}'),
('00000001000040008000000000000001', 1000000, -8295234345922607189, 'ENTITY_CREATE', 'hive_table', 'db.t1@c', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
('00000001000040008000000000000001', 1500000, 4101352618644405226, 'ENTITY_UPDATE', 'hive_table', 'db.t1_renamed@c', '{"attributes":["owner","qualifiedName"]}'),
('00000001000040008000000000000001', 2000000, 18921854422602368, 'ENTITY_UPDATE', 'hive_table', NULL, '{"attributes":["name"]}'),
('00000002000040008000000000000002', 11000, -2997305779398060460, 'ENTITY_CREATE', 'hive_table', 'qb', '{"attributes":["name","qualifiedName"]}'),
('00000003000040008000000000000003', 12000, -3971968420251196195, 'ENTITY_CREATE', 'DataSet', 'qc', '{"attributes":["name","qualifiedName"]}'),
('06146bc1a6314f9d8d0cf1c7b71a9c0a', 1619751227966000, -4286866311184872771, 'ENTITY_UPDATE', 'hive_db', 'experiments@cm', '{"attributes":["clusterName","name","owner","qualifiedName"]}'),
('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c', 1700000000001000, 6329537724402035958, 'ENTITY_UPDATE', 'hive_table', 'sales.orders@cl1', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
('2237918c91544725bfc430b9d82cbddd', 1619751227966000, -8204605483336678306, 'ENTITY_CREATE', 'hive_column', 'experiments.movies_info.id@cm', '{"attributes":["name","owner","qualifiedName"]}'),
('81f18e763257450cb1963b50c7e273be', 1619751227966000, -4076759820777536272, 'ENTITY_CREATE', 'hive_table', 'experiments.movies_info@cm', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
('d278a8045ccf47809e69a335f3b40449', 1619751227966000, 5094382392383997176, 'ENTITY_CREATE', 'hive_storagedesc', 'experiments.movies_info@cm_storage', '{"attributes":["qualifiedName"]}');
-- entity_flat: guid d278a804-5ccf-4780-9e69-a335f3b40449; 3 events, examples/01-create-table-atlas21.jsonl:2 .. examples/04-kcat-export.jsonl:2
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `state`, `created_ts`, `updated_ts`) VALUES
('d278a8045ccf47809e69a335f3b40449', 'hive_storagedesc', 'experiments.movies_info@cm_storage', 'ACTIVE', 1619751227966000, 1619751227966000);
-- entity_flat: 2 rows from 2 events, examples/02-rename-tags-edges-delete.jsonl:5 .. examples/02-rename-tags-edges-delete.jsonl:6
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`) VALUES
('00000002000040008000000000000002', 'hive_table', 'qb', 'b', 'ACTIVE', 11000, 11000),
('00000003000040008000000000000003', 'DataSet', 'qc', 'c', 'ACTIVE', 12000, 12000);
-- entity_flat: 2 rows from 3 events, examples/01-create-table-atlas21.jsonl:4 .. examples/04-kcat-export.jsonl:4
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `updated_ts`, `props_json`) VALUES
('06146bc1a6314f9d8d0cf1c7b71a9c0a', 'hive_db', 'experiments@cm', 'experiments', 'ACTIVE', 1619751227966000, '{"clusterName":"cm","owner":"impala"}'),
('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c', 'hive_table', 'sales.orders@cl1', 'orders', 'ACTIVE', 1700000000001000, '{"createTime":1699999990000,"owner":"etl"}');
-- entity_flat: 3 rows from 12 events, examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:3
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`, `props_json`) VALUES
('00000001000040008000000000000001', 'hive_table', 'qa', 'a', 'DELETED', 10000, 17000, '{"createTime":5,"owner":"o"}'),
('2237918c91544725bfc430b9d82cbddd', 'hive_column', 'experiments.movies_info.id@cm', 'id', 'ACTIVE', 1619751227966000, 1619751227966000, '{"owner":"impala"}'),
('81f18e763257450cb1963b50c7e273be', 'hive_table', 'experiments.movies_info@cm', 'movies_info', 'ACTIVE', 1619751227966000, 1619751227966000, '{"createTime":1619751227000,"owner":"impala"}');
