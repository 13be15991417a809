// The subset of HiveServer2 (TCLIService) and Impala's HS2 extensions that atlas2kudu needs, written
// for this project with the field ids, types and enum values of Impala's copy of TCLIService.thrift
// (common/thrift/hive-1-api, which has GetLog) and of ImpalaService.thrift.
//
// Why one flat service: method names travel on the wire as bare strings ("ExecuteStatement",
// "CloseImpalaOperation"), so a single service that declares every method we call produces the
// same bytes as Impala's `ImpalaHiveServer2Service extends TCLIService` hierarchy.
//
// Why it is safe to leave fields out: a generated reader skips unknown field ids, so a response
// from a real impalad that carries more fields than declared here still parses, as long as every
// field we DO declare has Impala's id and type. `required` is kept only where Impala always
// writes the field.

namespace cpp atlas2kudu.hs2

// --- enums (numeric values are what goes on the wire) ---

enum TProtocolVersion {
  HIVE_CLI_SERVICE_PROTOCOL_V1 = 0,
  HIVE_CLI_SERVICE_PROTOCOL_V2 = 1,
  HIVE_CLI_SERVICE_PROTOCOL_V3 = 2,
  HIVE_CLI_SERVICE_PROTOCOL_V4 = 3,
  HIVE_CLI_SERVICE_PROTOCOL_V5 = 4,
  HIVE_CLI_SERVICE_PROTOCOL_V6 = 5,
  HIVE_CLI_SERVICE_PROTOCOL_V7 = 6,
  HIVE_CLI_SERVICE_PROTOCOL_V8 = 7,
  HIVE_CLI_SERVICE_PROTOCOL_V9 = 8,
  HIVE_CLI_SERVICE_PROTOCOL_V10 = 9,
  HIVE_CLI_SERVICE_PROTOCOL_V11 = 10,
}

enum TStatusCode {
  SUCCESS_STATUS = 0,
  SUCCESS_WITH_INFO_STATUS = 1,
  STILL_EXECUTING_STATUS = 2,
  ERROR_STATUS = 3,
  INVALID_HANDLE_STATUS = 4,
}

enum TOperationState {
  INITIALIZED_STATE = 0,
  RUNNING_STATE = 1,
  FINISHED_STATE = 2,
  CANCELED_STATE = 3,
  CLOSED_STATE = 4,
  ERROR_STATE = 5,
  UKNOWN_STATE = 6,
  PENDING_STATE = 7,
  TIMEDOUT_STATE = 8,
}

enum TOperationType {
  EXECUTE_STATEMENT = 0,
  GET_TYPE_INFO = 1,
  GET_CATALOGS = 2,
  GET_SCHEMAS = 3,
  GET_TABLES = 4,
  GET_TABLE_TYPES = 5,
  GET_COLUMNS = 6,
  GET_FUNCTIONS = 7,
  UNKNOWN = 8,
  PROCEDURAL_SQL = 9,
}

enum TFetchOrientation {
  FETCH_NEXT = 0,
  FETCH_PRIOR = 1,
  FETCH_RELATIVE = 2,
  FETCH_ABSOLUTE = 3,
  FETCH_FIRST = 4,
  FETCH_LAST = 5,
}

// Column types of a result set (only primitive entries are declared below).
enum TTypeId {
  BOOLEAN_TYPE = 0,
  TINYINT_TYPE = 1,
  SMALLINT_TYPE = 2,
  INT_TYPE = 3,
  BIGINT_TYPE = 4,
  FLOAT_TYPE = 5,
  DOUBLE_TYPE = 6,
  STRING_TYPE = 7,
  TIMESTAMP_TYPE = 8,
  BINARY_TYPE = 9,
  ARRAY_TYPE = 10,
  MAP_TYPE = 11,
  STRUCT_TYPE = 12,
  UNION_TYPE = 13,
  USER_DEFINED_TYPE = 14,
  DECIMAL_TYPE = 15,
  NULL_TYPE = 16,
  DATE_TYPE = 17,
  VARCHAR_TYPE = 18,
  CHAR_TYPE = 19,
}

// --- handles and status ---

struct TStatus {
  1: required TStatusCode statusCode
  2: optional list<string> infoMessages
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
}

struct THandleIdentifier {
  1: required binary guid
  2: required binary secret
}

struct TSessionHandle {
  1: required THandleIdentifier sessionId
}

struct TOperationHandle {
  1: required THandleIdentifier operationId
  2: required TOperationType operationType
  3: required bool hasResultSet
  4: optional double modifiedRowCount
}

// --- sessions ---

struct TOpenSessionReq {
  // Impala's IDL defaults this to V10; we always set it explicitly to V6, the highest version
  // Impala speaks (it clamps to V6, and impala-shell checks that the server answers V6).
  1: required TProtocolVersion client_protocol = TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
  2: optional string username
  3: optional string password
  4: optional map<string, string> configuration
}

struct TOpenSessionResp {
  1: required TStatus status
  2: required TProtocolVersion serverProtocolVersion
  3: optional TSessionHandle sessionHandle
  4: optional map<string, string> configuration
}

struct TCloseSessionReq {
  1: required TSessionHandle sessionHandle
}

struct TCloseSessionResp {
  1: required TStatus status
}

// --- statements ---

struct TExecuteStatementReq {
  1: required TSessionHandle sessionHandle
  2: required string statement
  3: optional map<string, string> confOverlay
  4: optional bool runAsync = false
  5: optional i64 queryTimeout = 0
}

struct TExecuteStatementResp {
  1: required TStatus status
  2: optional TOperationHandle operationHandle
}

struct TGetOperationStatusReq {
  1: required TOperationHandle operationHandle
  2: optional bool getProgressUpdate
}

// Field 10 (progress update) is left out: Impala never fills it.
struct TGetOperationStatusResp {
  1: required TStatus status
  2: optional TOperationState operationState
  3: optional string sqlState
  4: optional i32 errorCode
  5: optional string errorMessage
  6: optional string taskStatus
  7: optional i64 operationStarted
  8: optional i64 operationCompleted
  9: optional bool hasResultSet
  11: optional i64 numModifiedRows
}

struct TCancelOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCancelOperationResp {
  1: required TStatus status
}

struct TCloseOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCloseOperationResp {
  1: required TStatus status
}

struct TGetLogReq {
  1: required TOperationHandle operationHandle
}

struct TGetLogResp {
  1: required TStatus status
  2: required string log
}

// --- result sets (SELECT, for prior-state lookups) ---

struct TPrimitiveTypeEntry {
  1: required TTypeId type
  // 2: optional TTypeQualifiers (precision/scale/length) is not needed by us.
}

// Only the primitive arm is declared; arrays/maps/structs never appear in our projections.
union TTypeEntry {
  1: TPrimitiveTypeEntry primitiveEntry
}

struct TTypeDesc {
  1: required list<TTypeEntry> types
}

struct TColumnDesc {
  1: required string columnName
  2: required TTypeDesc typeDesc
  3: required i32 position
  4: optional string comment
}

struct TTableSchema {
  1: required list<TColumnDesc> columns
}

// Columnar values: `nulls` is a bitmap, bit (i % 8) of byte (i / 8) set when row i is NULL.
struct TBoolColumn {
  1: required list<bool> values
  2: required binary nulls
}

struct TByteColumn {
  1: required list<i8> values
  2: required binary nulls
}

struct TI16Column {
  1: required list<i16> values
  2: required binary nulls
}

struct TI32Column {
  1: required list<i32> values
  2: required binary nulls
}

struct TI64Column {
  1: required list<i64> values
  2: required binary nulls
}

struct TDoubleColumn {
  1: required list<double> values
  2: required binary nulls
}

struct TStringColumn {
  1: required list<string> values
  2: required binary nulls
}

struct TBinaryColumn {
  1: required list<binary> values
  2: required binary nulls
}

union TColumn {
  1: TBoolColumn boolVal
  2: TByteColumn byteVal
  3: TI16Column i16Val
  4: TI32Column i32Val
  5: TI64Column i64Val
  6: TDoubleColumn doubleVal
  7: TStringColumn stringVal
  8: TBinaryColumn binaryVal
}

// Row-wise results (field 2) are a V1-V5 feature; with V6 Impala sends an empty list and fills
// `columns`. The element type is declared as an empty struct: we never read row-wise values.
struct TRow {
}

struct TRowSet {
  1: required i64 startRowOffset
  2: required list<TRow> rows
  3: optional list<TColumn> columns
  4: optional binary binaryColumns
  5: optional i32 columnCount
}

struct TGetResultSetMetadataReq {
  1: required TOperationHandle operationHandle
}

struct TGetResultSetMetadataResp {
  1: required TStatus status
  2: optional TTableSchema schema
}

struct TFetchResultsReq {
  1: required TOperationHandle operationHandle
  2: required TFetchOrientation orientation = TFetchOrientation.FETCH_NEXT
  3: required i64 maxRows
  4: optional i16 fetchType = 0
}

struct TFetchResultsResp {
  1: required TStatus status
  2: optional bool hasMoreRows
  3: optional TRowSet results
}

// --- Impala extensions ---

struct TDmlResult {
  // Rows modified per partition; Kudu tables use the single key "".
  1: required map<string, i64> rows_modified
  // Kudu only: rows the sink could not apply (conflicts are counted here, not failed).
  2: optional i64 num_row_errors
  3: optional map<string, i64> rows_deleted
}

struct TCloseImpalaOperationReq {
  1: required TOperationHandle operationHandle
}

struct TCloseImpalaOperationResp {
  1: required TStatus status
  2: optional TDmlResult dml_result
}

struct TPingImpalaHS2ServiceReq {
  1: required TSessionHandle sessionHandle
}

struct TPingImpalaHS2ServiceResp {
  1: required TStatus status
  2: optional string version
  3: optional string webserver_address
  4: optional i64 timestamp
}

service ImpalaHiveServer2Service {
  TOpenSessionResp OpenSession(1: TOpenSessionReq req)
  TCloseSessionResp CloseSession(1: TCloseSessionReq req)
  TExecuteStatementResp ExecuteStatement(1: TExecuteStatementReq req)
  TGetOperationStatusResp GetOperationStatus(1: TGetOperationStatusReq req)
  TCancelOperationResp CancelOperation(1: TCancelOperationReq req)
  TCloseOperationResp CloseOperation(1: TCloseOperationReq req)
  TGetResultSetMetadataResp GetResultSetMetadata(1: TGetResultSetMetadataReq req)
  TFetchResultsResp FetchResults(1: TFetchResultsReq req)
  TGetLogResp GetLog(1: TGetLogReq req)
  TCloseImpalaOperationResp CloseImpalaOperation(1: TCloseImpalaOperationReq req)
  TPingImpalaHS2ServiceResp PingImpalaHS2Service(1: TPingImpalaHS2ServiceReq req)
}
