-- atlas2kudu 0.1.0 compile
-- options: --database atlas --key-encoding binary --tombstone hard --prior none --props-max-bytes 60000 --window-events 50000 --batch-rows 1000 --batch-bytes 4194304
-- prior state: none (only what this input establishes; renames and tag removals use predicate deletes, props of entities first seen here merge from {}, and a type change of one without its qualifiedName drops its entity_by_qn row)
-- window 1: events 1-23 (examples/01-create-table-atlas21.jsonl:1 .. examples/04-kcat-export.jsonl:4)
-- window 1 phase 1: deletes (14 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN (CAST(unhex('204aed264bf63d51b9e8f3a9c0fa7c76') AS BINARY), CAST(unhex('462ed479747bd5bbf0c1a3610874fe6e') AS BINARY), CAST(unhex('de09793dfc2386f36591aaf9fc831606') AS BINARY));
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN (CAST(unhex('204aed264bf63d51b9e8f3a9c0fa7c76') AS BINARY), CAST(unhex('462ed479747bd5bbf0c1a3610874fe6e') AS BINARY), CAST(unhex('de09793dfc2386f36591aaf9fc831606') AS BINARY)) AND `guid` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY), CAST(unhex('00000002000040008000000000000002') AS BINARY), CAST(unhex('00000003000040008000000000000003') AS BINARY), CAST(unhex('06146bc1a6314f9d8d0cf1c7b71a9c0a') AS BINARY), CAST(unhex('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c') AS BINARY), CAST(unhex('2237918c91544725bfc430b9d82cbddd') AS BINARY), CAST(unhex('81f18e763257450cb1963b50c7e273be') AS BINARY), CAST(unhex('d278a8045ccf47809e69a335f3b40449') AS BINARY)) AND `qn_digest` NOT IN (CAST(unhex('25e7dff921eb57a98ffea22c1a1086f4') AS BINARY), CAST(unhex('3121cad19ea632f22154c6589a6c5127') AS BINARY), CAST(unhex('5deefa138f365651520fb4c4319575ff') AS BINARY), CAST(unhex('a21efddc5025ca1afaa82cc8176a40f2') AS BINARY), CAST(unhex('b7a8812245539a37ff921447e3af6cc3') AS BINARY), CAST(unhex('d54571ed41567996375da23e0528ebdf') AS BINARY), CAST(unhex('de09793dfc2386f36591aaf9fc831606') AS BINARY), CAST(unhex('e3c3856f005ba5c45136866926ec8be2') AS BINARY));
DELETE FROM `atlas`.`edge_out` WHERE `src` IN (CAST(unhex('00000003000040008000000000000003') AS BINARY)) AND `elabel` IN ('owns') AND `dst` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`edge_out` WHERE `src` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY)) AND `elabel` IN ('r:ab') AND `dst` IN (CAST(unhex('00000002000040008000000000000002') AS BINARY));
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY)) AND `elabel` IN ('owns') AND `src` IN (CAST(unhex('00000003000040008000000000000003') AS BINARY));
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN (CAST(unhex('00000002000040008000000000000002') AS BINARY)) AND `elabel` IN ('r:ab') AND `src` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`edge_out` WHERE `src` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`edge_in` WHERE `src` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`entity_classifications` WHERE `tag_name` IN ('Tier1') AND `guid` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY)) AND `tag_name` NOT IN ('Tier1');
DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN (CAST(unhex('00000001000040008000000000000001') AS BINARY));
-- window 1 phase 2: upserts (8 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
(CAST(unhex('25e7dff921eb57a98ffea22c1a1086f4') AS BINARY), CAST(unhex('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c') AS BINARY), 'hive_table'),
(CAST(unhex('3121cad19ea632f22154c6589a6c5127') AS BINARY), CAST(unhex('81f18e763257450cb1963b50c7e273be') AS BINARY), 'hive_table'),
(CAST(unhex('5deefa138f365651520fb4c4319575ff') AS BINARY), CAST(unhex('00000002000040008000000000000002') AS BINARY), 'hive_table'),
(CAST(unhex('a21efddc5025ca1afaa82cc8176a40f2') AS BINARY), CAST(unhex('2237918c91544725bfc430b9d82cbddd') AS BINARY), 'hive_column'),
(CAST(unhex('b7a8812245539a37ff921447e3af6cc3') AS BINARY), CAST(unhex('06146bc1a6314f9d8d0cf1c7b71a9c0a') AS BINARY), 'hive_db'),
(CAST(unhex('d54571ed41567996375da23e0528ebdf') AS BINARY), CAST(unhex('00000003000040008000000000000003') AS BINARY), 'DataSet'),
(CAST(unhex('e3c3856f005ba5c45136866926ec8be2') AS BINARY), CAST(unhex('d278a8045ccf47809e69a335f3b40449') AS BINARY), 'hive_storagedesc');
UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`, `dst_type`) VALUES
(CAST(unhex('00000002000040008000000000000002') AS BINARY), 'r:bc', CAST(unhex('00000003000040008000000000000003') AS BINARY), 'DataSet');
UPSERT INTO `atlas`.`edge_in` (`dst`, `elabel`, `src`, `src_type`) VALUES
(CAST(unhex('00000003000040008000000000000003') AS BINARY), 'r:bc', CAST(unhex('00000002000040008000000000000002') AS BINARY), 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 10000, 2305330978963641890, 'ENTITY_CREATE', 'hive_table', 'qa', '{"attributes":["name","owner","qualifiedName"]}'),
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 16000, 8351584290116406131, 'CLASSIFICATION_ADD', 'hive_table', 'qa', '{"attributes":["name","owner","qualifiedName"],"classifications":["Tier1"]}'),
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 17000, 7003480131857390707, 'ENTITY_DELETE', 'hive_table', 'qa', '{"attributes":["createTime","description","name","qualifiedName"]}'),
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 1000000, -8295234345922607189, 'ENTITY_CREATE', 'hive_table', 'db.t1@c', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 1500000, 4101352618644405226, 'ENTITY_UPDATE', 'hive_table', 'db.t1_renamed@c', '{"attributes":["owner","qualifiedName"]}'),
(CAST(unhex('00000001000040008000000000000001') AS BINARY), 2000000, 18921854422602368, 'ENTITY_UPDATE', 'hive_table', NULL, '{"attributes":["name"]}'),
(CAST(unhex('00000002000040008000000000000002') AS BINARY), 11000, -2997305779398060460, 'ENTITY_CREATE', 'hive_table', 'qb', '{"attributes":["name","qualifiedName"]}'),
(CAST(unhex('00000003000040008000000000000003') AS BINARY), 12000, -3971968420251196195, 'ENTITY_CREATE', 'DataSet', 'qc', '{"attributes":["name","qualifiedName"]}'),
(CAST(unhex('06146bc1a6314f9d8d0cf1c7b71a9c0a') AS BINARY), 1619751227966000, -4286866311184872771, 'ENTITY_UPDATE', 'hive_db', 'experiments@cm', '{"attributes":["clusterName","name","owner","qualifiedName"]}'),
(CAST(unhex('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c') AS BINARY), 1700000000001000, 6329537724402035958, 'ENTITY_UPDATE', 'hive_table', 'sales.orders@cl1', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
(CAST(unhex('2237918c91544725bfc430b9d82cbddd') AS BINARY), 1619751227966000, -8204605483336678306, 'ENTITY_CREATE', 'hive_column', 'experiments.movies_info.id@cm', '{"attributes":["name","owner","qualifiedName"]}'),
(CAST(unhex('81f18e763257450cb1963b50c7e273be') AS BINARY), 1619751227966000, -4076759820777536272, 'ENTITY_CREATE', 'hive_table', 'experiments.movies_info@cm', '{"attributes":["createTime","name","owner","qualifiedName"]}'),
(CAST(unhex('d278a8045ccf47809e69a335f3b40449') AS BINARY), 1619751227966000, 5094382392383997176, 'ENTITY_CREATE', 'hive_storagedesc', 'experiments.movies_info@cm_storage', '{"attributes":["qualifiedName"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `state`, `created_ts`, `updated_ts`) VALUES
(CAST(unhex('d278a8045ccf47809e69a335f3b40449') AS BINARY), 'hive_storagedesc', 'experiments.movies_info@cm_storage', 'ACTIVE', 1619751227966000, 1619751227966000);
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`) VALUES
(CAST(unhex('00000002000040008000000000000002') AS BINARY), 'hive_table', 'qb', 'b', 'ACTIVE', 11000, 11000),
(CAST(unhex('00000003000040008000000000000003') AS BINARY), 'DataSet', 'qc', 'c', 'ACTIVE', 12000, 12000);
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `updated_ts`, `props_json`) VALUES
(CAST(unhex('06146bc1a6314f9d8d0cf1c7b71a9c0a') AS BINARY), 'hive_db', 'experiments@cm', 'experiments', 'ACTIVE', 1619751227966000, '{"clusterName":"cm","owner":"impala"}'),
(CAST(unhex('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c') AS BINARY), 'hive_table', 'sales.orders@cl1', 'orders', 'ACTIVE', 1700000000001000, '{"createTime":1699999990000,"owner":"etl"}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`, `props_json`) VALUES
(CAST(unhex('2237918c91544725bfc430b9d82cbddd') AS BINARY), 'hive_column', 'experiments.movies_info.id@cm', 'id', 'ACTIVE', 1619751227966000, 1619751227966000, '{"owner":"impala"}'),
(CAST(unhex('81f18e763257450cb1963b50c7e273be') AS BINARY), 'hive_table', 'experiments.movies_info@cm', 'movies_info', 'ACTIVE', 1619751227966000, 1619751227966000, '{"createTime":1619751227000,"owner":"impala"}');
