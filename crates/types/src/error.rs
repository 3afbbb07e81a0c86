//! The one error type of the server, and the one place that maps each kind of failure
//! to the MySQL error number, SQLSTATE and message a client expects.
//!
//! Every layer returns [`Error`]; the wire layer turns it into an ERR packet with
//! [`Error::code`], [`Error::sqlstate`] and the `Display` text. Messages follow MySQL's
//! wording so that clients and tests that match on text keep working.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// 1064: the statement does not parse. Holds the text near the error (on line 1).
    Syntax(String),
    /// 1064 from the parser, which knows the line the error is on.
    SyntaxAt {
        near: String,
        line: usize,
    },
    /// 1235: a construct Strata does not implement, named.
    NotSupported(String),
    /// 1295: the statement cannot be prepared; clients fall back to text.
    UnsupportedPs,
    /// 1047: a protocol command byte we do not know.
    UnknownCommand,
    /// 1045: bad user or password.
    AccessDenied {
        user: String,
        host: String,
        using_password: bool,
    },
    /// 1046
    NoDatabaseSelected,
    /// 1049
    UnknownDatabase(String),
    /// 1007
    DatabaseExists(String),
    /// 1008
    DropMissingDatabase(String),
    /// 1146: `db.table` does not exist.
    NoSuchTable {
        db: String,
        table: String,
    },
    /// 1050
    TableExists(String),
    /// 1051: DROP TABLE of a missing table, `db.table`.
    UnknownTable(String),
    /// 1137: a TEMPORARY table named more than once in one statement (MySQL 8 opens it
    /// once per statement).
    CantReopenTable(String),
    /// 1054: column name and the clause it appeared in ("field list", "where clause").
    UnknownColumn {
        column: String,
        context: String,
    },
    /// 1052
    AmbiguousColumn {
        column: String,
        context: String,
    },
    /// 1060
    DuplicateColumn(String),
    /// 1061
    DuplicateKeyName(String),
    /// 1068
    MultiplePrimaryKey,
    /// 1031: a table option the table's engine does not have (InnoDB's ROW_FORMAT=FIXED,
    /// which MySQL 8's strict InnoDB refuses); the table's name.
    IllegalCreateOption(String),
    /// 3522: a primary key (or the unique key that stands in for one) made INVISIBLE.
    PrimaryKeyInvisible,
    /// 1072
    KeyColumnMissing(String),
    /// 1075
    WrongAutoKey,
    /// 1067
    InvalidDefault(String),
    /// 1101: a literal DEFAULT on a BLOB, TEXT, GEOMETRY or JSON column (MySQL 8 allows
    /// only an expression default there).
    BlobCantHaveDefault(String),
    /// 1176: a named index that does not exist.
    NoSuchIndex {
        index: String,
        table: String,
    },
    /// 1091: DROP of a column or key that does not exist (MySQL 8 names no kind).
    CantDropKey(String),
    /// 1846: an ALTER TABLE clause (`ALGORITHM=INSTANT`, `LOCK=NONE`) that cannot be
    /// honoured for the change asked for: what, why, and what to try instead.
    AlterNotSupported {
        what: String,
        reason: String,
        try_instead: String,
    },
    /// 1845: an ALTER TABLE clause (`ALGORITHM=INSTANT`) the engine cannot honour for
    /// the change asked for, with no reason to give (MySQL's
    /// ER_ALTER_OPERATION_NOT_SUPPORTED): what, and what to try instead.
    AlterOperationNotSupported {
        what: String,
        try_instead: String,
    },
    /// 4092: an instant ADD/DROP COLUMN on a table that has had as many as MySQL 8
    /// allows since its last rebuild (`schema::MAX_ROW_VERSIONS`); `db/table`.
    MaxRowVersions(String),
    /// 1412: a statement waited for a table that DDL replaced meanwhile; its plan names
    /// the old definition.
    TableDefChanged,
    /// 1138: ALTER TABLE made a column NOT NULL over rows that hold NULL (strict mode).
    InvalidUseOfNull,
    /// 1799: changes other connections made during an online index build passed
    /// `innodb_online_alter_log_max_size`; names the index.
    OnlineLogTooBig(String),
    /// 1062: the duplicate value as text and the key name.
    DuplicateKey {
        value: String,
        key: String,
    },
    /// 1032 (HA_ERR_KEY_NOT_FOUND): a replicated UPDATE or DELETE row event whose row
    /// this server does not hold; names the table.
    RecordNotFound(String),
    /// 1048
    ColumnNotNull(String),
    /// 1364: a NOT NULL column without a default was not given a value.
    NoDefault(String),
    /// 1136: row number (1-based).
    ValueCount(u64),
    /// 1264: column and row number.
    OutOfRange {
        column: String,
        row: u64,
    },
    /// 167 (MySQL's HA_ERR_AUTOINC_ERANGE): the next AUTO_INCREMENT value does not fit
    /// the column's type (strict mode); column and row number.
    AutoIncrementOutOfRange {
        column: String,
        row: u64,
    },
    /// 1690: an expression's result does not fit its type: the type name ("BIGINT",
    /// "BIGINT UNSIGNED", "DECIMAL") and the expression.
    ValueOutOfRange {
        kind: String,
        expr: String,
    },
    /// 1406: column and row number.
    DataTooLong {
        column: String,
        row: u64,
    },
    /// 1265: a value ALTER TABLE had to shorten to fit a column's new type (strict mode).
    DataTruncated {
        column: String,
        row: u64,
    },
    /// 1090: ALTER TABLE would leave no column.
    CantRemoveAllFields,
    /// 4028: every column of the table would be INVISIBLE.
    NoVisibleColumn,
    /// 1291: an ENUM/SET definition lists a member twice (under the column's collation):
    /// column, member, and "ENUM" or "SET".
    DuplicatedTypeValue {
        column: String,
        value: String,
        kind: &'static str,
    },
    /// 1097: an ENUM with more than 65535 members or a SET with more than 64.
    TooManyTypeValues(String),
    /// 1367: a SET member containing a comma.
    IllegalSetMember(String),
    /// 1267: two explicit `COLLATE`s of one comparison name different collations
    /// (names of the left and right collation, and the operation).
    IllegalCollationMix {
        left: &'static str,
        right: &'static str,
        op: String,
    },
    /// 1366: type name, value text, column, row.
    IncorrectValue {
        kind: String,
        value: String,
        column: String,
        row: u64,
    },
    /// 1292: a date a column may not hold under the sql_mode (NO_ZERO_DATE in strict
    /// mode): type name, value text, column, row.
    IncorrectTemporalValue {
        kind: &'static str,
        value: String,
        column: String,
        row: u64,
    },
    /// 1292: a value that is not a valid date/time, with its type name.
    TruncatedWrongValue {
        kind: String,
        value: String,
    },
    /// 1411: a function's argument that is not a value of the kind it needs
    /// (`UUID_TO_BIN('x')`): kind, value, function name.
    WrongValueForFunction {
        kind: String,
        value: String,
        func: String,
    },
    /// 1365: division by zero where `ERROR_FOR_DIVISION_BY_ZERO` makes it an error.
    DivisionByZero,
    /// 1253: a COLLATE naming a collation of another character set.
    CollationCharsetMismatch {
        collation: String,
        charset: String,
    },
    /// A regular expression error with MySQL 8's (ICU's) number: 3685 illegal
    /// argument, 3686 index out of bounds, 3688 syntax, 3689 bad escape, 3691
    /// mismatched parenthesis, 3692 bad interval, 3693 max < min, 3696 unclosed
    /// bracket, 3700 too big, 3900 invalid match-type flag.
    Regexp(u16),
    /// 3688: a regular expression syntax error at a (1-based) character of line 1.
    RegexpSyntax(usize),
    /// 1525: a typed literal (`DATE '…'`, `TIME '…'`, `TIMESTAMP '…'`) whose text is
    /// not a value of its type; the kind is upper case, as MySQL prints it.
    WrongLiteral {
        kind: String,
        value: String,
    },
    /// 1426: a fractional-seconds precision above 6 (`NOW(7)`).
    TooBigPrecision {
        precision: u64,
        func: String,
    },
    /// 1426: a DECIMAL column's precision above 65: precision, column.
    TooBigDecimalPrecision {
        precision: u64,
        column: String,
    },
    /// 1425: a DECIMAL column's scale above 30: scale, column.
    TooBigScale {
        scale: u64,
        column: String,
    },
    /// 1427: DECIMAL(M,D) with M < D: the column.
    ScaleAbovePrecision(String),
    /// 1063: a column type's specifier out of its range (FLOAT(54)): the column.
    WrongFieldSpec(String),
    /// 1294: `ON UPDATE CURRENT_TIMESTAMP(n)` whose n is not the column's precision (or
    /// on a column that is not a DATETIME/TIMESTAMP): the column name.
    InvalidOnUpdate(String),
    /// 1818: `YEAR(n)` with n other than 4.
    InvalidYearWidth,
    /// 1193
    UnknownVariable(String),
    /// 1231: variable and the value as text.
    WrongValueForVariable {
        name: String,
        value: String,
    },
    /// 1232
    WrongTypeForVariable(String),
    /// 1238: a read-only variable, or the wrong scope.
    VariableReadOnly(String),
    /// 1229: a GLOBAL-only variable set with SESSION.
    VariableIsGlobal(String),
    /// 1228: a SESSION-only variable set with GLOBAL.
    VariableIsSession(String),
    /// 1694: `SET sql_log_bin` while a transaction is open.
    SqlLogBinInTransaction,
    /// 1238: a variable read in a scope it does not have (`@@global.warning_count`);
    /// the scope it has, upper case.
    VariableWrongScope {
        name: String,
        scope: &'static str,
    },
    /// 1621: a variable whose session value only mirrors the global one.
    SessionVariableReadOnly(String),
    /// 3615: RESET PERSIST of a variable the persisted file does not hold.
    PersistedVariableMissing(String),
    /// 1286
    UnknownEngine(String),
    /// 1305
    UnknownFunction(String),
    /// 1582
    WrongParamCount(String),
    /// 1111
    InvalidGroupUse,
    /// 1055, or 1140 when the query has no GROUP BY (`implicit`): under
    /// ONLY_FULL_GROUP_BY, expression `expr_no` (1-based) of `clause` ("SELECT list",
    /// "HAVING clause", "ORDER BY clause") reads `column` (`db.table.column`), which is
    /// neither grouped, aggregated nor functionally dependent on the GROUP BY columns.
    NotFullGroupBy {
        implicit: bool,
        expr_no: usize,
        clause: &'static str,
        column: String,
    },
    /// 3065: with DISTINCT, ORDER BY expression `expr_no` reads `column`, which the
    /// SELECT list does not show.
    OrderNotInDistinct {
        expr_no: usize,
        column: String,
    },
    /// 3602: argument number (1-based) of GROUPING() that is no GROUP BY expression.
    GroupingArgNotGrouped(usize),
    /// 3158: a JSON object member name (JSON_OBJECTAGG key) is NULL.
    JsonNullKey,
    /// 3140: a value stored into JSON column `column` (`table.column`) is not JSON.
    InvalidJsonText {
        reason: String,
        pos: usize,
        column: String,
    },
    /// 3141: argument `arg` (1-based) of JSON function `func` is not JSON text.
    InvalidJsonTextInParam {
        arg: usize,
        func: String,
        reason: String,
        pos: usize,
    },
    /// 3143: a JSON path is malformed around character `pos`.
    InvalidJsonPath(usize),
    /// 3146: argument `arg` of `func` must be JSON or a string.
    InvalidJsonType {
        arg: usize,
        func: String,
    },
    /// 3149: a path with `*` or `**` where one value is needed.
    JsonPathWildcard,
    /// 3150: the one-or-all argument of `func` is neither.
    JsonBadOneOrAll(String),
    /// 3152: an index on JSON column `column`.
    JsonUsedAsKey(String),
    /// 3153: the path `$` where it cannot be used (JSON_REMOVE).
    JsonVacuousPath,
    /// 3157: a JSON document nested deeper than 100 levels.
    JsonTooDeep,
    /// 3154: JSON_ARRAY_INSERT's path does not end in an array position.
    JsonPathArrayCell,
    /// 1439: a column's declared width past its type's maximum (BIT(65)).
    TooBigDisplayWidth {
        column: String,
        max: u32,
    },
    /// 1241: expected column count.
    OperandColumns(usize),
    /// 1242
    SubqueryRows,
    /// 1096
    NoTablesUsed,
    /// 1100
    TableNotLocked(String),
    /// 1099
    TableLockedForRead(String),
    /// 1223: the session holds FLUSH TABLES WITH READ LOCK and the statement would write
    /// (or change the schema).
    CantUpdateWithReadLock,
    /// 1192: FLUSH TABLES WITH READ LOCK while this session has LOCK TABLES in effect.
    LockedTablesOrActiveTransaction,
    /// 1115
    UnknownCharset(String),
    /// 1273
    UnknownCollation(String),
    /// 1102
    WrongDatabaseName(String),
    /// 1103
    WrongTableName(String),
    /// 1166: a column name that is not valid (too long, ends with a space).
    WrongColumnName(String),
    /// 1074: column, maximum length.
    ColumnTooLong {
        column: String,
        max: u64,
    },
    /// 1628 (table), 1629 (column, `what` "field"), 1688 (index): a COMMENT longer
    /// than MySQL's limit (`max` characters).
    CommentTooLong {
        what: &'static str,
        name: String,
        max: u64,
    },
    /// 1153
    PacketTooLarge,
    /// 1040
    TooManyConnections,
    /// 3170: the server's memory budget (`max_memory`) has no room for `what` (a sort,
    /// a join buffer…) even after waiting for other statements; `bytes` is the budget.
    MemoryCapacityExceeded {
        bytes: u64,
        what: String,
    },
    /// 1203: the user already has `max_user_connections` connections.
    TooManyUserConnections(String),
    /// 1226: the account's own `MAX_USER_CONNECTIONS` is reached; (user, limit).
    UserLimitReached(String, u64),
    /// 1044: no privilege on a database.
    DbAccessDenied {
        user: String,
        host: String,
        db: String,
    },
    /// 1142: `command` (SELECT, INSERT, …) denied on a table.
    TableAccessDenied {
        command: String,
        user: String,
        host: String,
        table: String,
    },
    /// 1143: `command` denied on a column of a table (column-level grants).
    ColumnAccessDenied {
        command: String,
        user: String,
        host: String,
        column: String,
        table: String,
    },
    /// 3523: a role or account named in a role statement does not exist; (user, host).
    UnknownAuthId(String, String),
    /// 3530: SET ROLE / SET DEFAULT ROLE / REVOKE of a role the account was not
    /// granted; (role user, role host, account user, account host).
    RoleNotGranted(String, String, String, String),
    /// 4027: GRANT role TO x where x already reaches the role; (grantee, role) as
    /// `` `u`@`h` ``.
    RoleGrantedToItself(String, String),
    /// 3628: REVOKE or DROP ROLE of a role named in `mandatory_roles`; the role as
    /// `` `u`@`h` ``.
    MandatoryRole(String),
    /// 3552: DROP DATABASE of a system schema (`mysql`).
    SystemSchemaAccess(String),
    /// 1227: the statement needs one of the named (global) privileges.
    SpecificAccessDenied(String),
    /// 1575: a BINLOG statement whose text is not base64.
    Base64Decode,
    /// 1609: a BINLOG statement's event (its type named) before any FORMAT_DESCRIPTION.
    BinlogNoFormatDescription(String),
    /// 1730: a BINLOG statement holding an event other than FORMAT_DESCRIPTION, a table
    /// map or a rows event (its type named).
    BinlogEventNotAllowed(String),
    /// 1149: a BINLOG statement's event that does not read (truncated, wrong sizes).
    BinlogEventMalformed,
    /// 1396: an account statement failed for the listed accounts; (operation, accounts).
    AccountOperationFailed(String, String),
    /// 1410: GRANT naming an account that does not exist.
    NoImplicitUserCreation,
    /// 1133: SET PASSWORD / ALTER USER for an account that does not exist.
    NoMatchingUser,
    /// 1141: REVOKE of a global or database grant the account does not have.
    NoSuchGrant {
        user: String,
        host: String,
    },
    /// 1147: REVOKE of a table grant the account does not have.
    NoSuchTableGrant {
        user: String,
        host: String,
        table: String,
    },
    /// 1144: a privilege that does not exist at the level named (USAGE-only levels,
    /// a global privilege on a table).
    IllegalGrant,
    /// 1221: a global privilege in a database-level GRANT.
    WrongUsage(String, String),
    /// 3118: the account is locked.
    AccountLocked {
        user: String,
        host: String,
    },
    /// 1095: KILL of another user's thread without CONNECTION_ADMIN / SUPER.
    NotThreadOwner(u64),
    /// 4031: the session was idle longer than `wait_timeout` (sent before closing, as
    /// MySQL 8.0.24+ does).
    IdleTimeout,
    /// 1159: a client stopped sending in the middle of a packet for `net_read_timeout`.
    NetReadTimeout,
    /// 3159: a login over plain TCP while `require_secure_transport` is ON.
    InsecureTransport,
    /// 1105 (MySQL's ER_UNKNOWN_ERROR, with its own text): a parameter sent with
    /// COM_STMT_SEND_LONG_DATA grew past `max_allowed_packet`.
    LongDataTooLong,
    /// 1205
    LockWaitTimeout,
    /// 1397 XAER_NOTA: no XA transaction has that xid (or another connection owns it).
    XaNota,
    /// 1398 XAER_INVAL: an XA option Strata (like MySQL) does not implement.
    XaInval,
    /// 1399 XAER_RMFAIL: the statement cannot run in the XA transaction's state (its
    /// name: ACTIVE, IDLE, PREPARED, ROLLBACK ONLY, NON-EXISTING).
    XaRmFail(String),
    /// 1400 XAER_OUTSIDE: XA START or an XA COMMIT/ROLLBACK of another xid inside a
    /// transaction that is not that XA transaction.
    XaOutside,
    /// 1440 XAER_DUPID: the xid is in use.
    XaDupId,
    /// 1614 XA_RBDEADLOCK: the XA transaction's branch was rolled back by a deadlock.
    XaRbDeadlock,
    /// 1213
    Deadlock,
    /// 3058: waiting in GET_LOCK would close a cycle of waits.
    UserLockDeadlock,
    /// 3057: a user-level lock name that is NULL, empty or longer than 64 characters.
    UserLockWrongName(String),
    /// 1317
    Interrupted,
    /// 3572: a locking read with NOWAIT met a locked row.
    LockNowait,
    /// 3024: `max_execution_time` passed while a SELECT ran.
    ExecutionTimeExceeded,
    /// 1094: KILL of a connection id that does not exist.
    UnknownThread(u64),
    /// 1373: PURGE BINARY LOGS TO, or a replica's dump, names a file not in the index.
    UnknownTargetBinlog,
    /// 1220: SHOW BINLOG EVENTS IN a file not in the index.
    BinlogEventsTargetMissing,
    /// 1220: SHOW BINLOG EVENTS FROM a position that is not an event's start.
    BinlogEventsBadPosition,
    /// 1381: a binary-log statement on a server started without --log-bin.
    NoBinaryLogging,
    /// 1198: CHANGE REPLICATION SOURCE / RESET REPLICA while the replica runs.
    ReplicaMustStop,
    /// 1200: START REPLICA before CHANGE REPLICATION SOURCE TO gave a source.
    ReplicaNotConfigured,
    /// 1776: CHANGE REPLICATION SOURCE gives a file or position while GTID
    /// auto-positioning (SOURCE_AUTO_POSITION=1, MASTER_USE_GTID) is on.
    BadReplicaAutoPosition,
    /// 1837: a group would be logged under a GTID (`uuid:gno`, a replica's source's)
    /// that gtid_executed already holds: MySQL's error for a second transaction under
    /// one GTID_NEXT.
    GtidExecuted(String),
    /// 1772: a GTID set's text does not parse (GTID_SUBTRACT, GTID_SUBSET,
    /// WAIT_FOR_EXECUTED_GTID_SET; `NULL` for the latter's NULL set); the text from its
    /// first non-blank character.
    MalformedGtidSet(String),
    /// 1788: something that needs GTIDs while gtid_mode is OFF (no binary log here);
    /// what was tried, as MySQL words it (`use WAIT_FOR_EXECUTED_GTID_SET`).
    GtidModeOff(String),
    /// 1766: a variable that cannot change inside an open transaction (`gtid_next`).
    VariableNotSettableInTransaction(String),
    /// 1790: `SET gtid_next` while the session owns a GTID (`uuid:gno`) it has not
    /// committed or rolled back.
    GtidNextWhileOwning(String),
    /// 1781: `SET gtid_next = 'uuid:N'` without the binary log (gtid_mode OFF).
    GtidNextGtidWhenModeOff,
    /// 1782: `SET gtid_next = 'ANONYMOUS'` with the binary log on (gtid_mode ON).
    GtidNextAnonymousWhenModeOn,
    /// 1778: a statement that commits implicitly (BEGIN, DDL) inside a transaction
    /// under an assigned `gtid_next`.
    ImplicitCommitWithGtidNext,
    /// 3173: WAIT_FOR_EXECUTED_GTID_SET for a set holding the GTID (`uuid:gno`) the
    /// waiting session owns.
    WaitForOwnedGtid(String),
    /// 3546: `SET @@GLOBAL.gtid_purged` breaks one of MySQL's rules; the text says which.
    GtidPurgedConstraint(String),
    /// 1236: a replica's dump cannot be served (a file not in the index, purged
    /// transactions); the text says why.
    MasterFatalReadingBinlog(String),
    /// 1194: a table whose files fail their checks; `detail` says which check.
    Corrupt {
        table: String,
        detail: String,
    },
    /// 1114: the disk or a size limit is full.
    TableFull(String),
    /// 1030: an operating-system I/O error in a storage engine.
    Io(String),
    /// 1118: a row too large for the engine's pages; the maximum in bytes.
    RowTooLarge(usize),
    /// 1071: an index key too long; the maximum in bytes.
    KeyTooLong(usize),
    /// 1116: more tables in one join than the planner can hold.
    TooManyTables(usize),
    /// 1248: a derived table without an alias.
    DerivedNeedsAlias,
    /// 1066: two tables of one FROM with the same name or alias.
    NonUniqueTable(String),
    /// 1222: the parts of a UNION/INTERSECT/EXCEPT have different column counts.
    WrongColumnCountInSetOp,
    /// 1353: a derived table's or CTE's column list does not match its SELECT list.
    ViewColumnCount,
    /// 3636: a recursive CTE ran more iterations than `cte_max_recursion_depth`.
    RecursionDepth(u64),
    /// 1347: `db.name` is a table where a view was named (DROP VIEW, SHOW CREATE VIEW);
    /// the name as `db.name` and what was expected (`VIEW`).
    WrongObject {
        name: String,
        expected: &'static str,
    },
    /// 1356: a view whose stored query no longer binds (a base table or column gone);
    /// the view as `db`.`name` parts.
    ViewInvalid {
        db: String,
        view: String,
    },
    /// 1462: a view that refers to itself, directly or through other views.
    ViewRecursive {
        db: String,
        view: String,
    },
    /// 1288: UPDATE/DELETE of a view that cannot be changed; the statement's verb and
    /// the view's name.
    NonUpdatableTable {
        table: String,
        verb: &'static str,
    },
    /// 1471: INSERT into a view that cannot take rows.
    NonInsertableTable(String),
    /// 1369: a row written through a view WITH CHECK OPTION that the view would not
    /// show; the view named in the statement, as `db`.`name` parts.
    ViewCheckFailed {
        db: String,
        view: String,
    },
    /// 1368: WITH CHECK OPTION on a view rows cannot be changed through.
    ViewCheckNonUpdatable {
        db: String,
        view: String,
    },
    /// 1348: INSERT or UPDATE of a view column that is not a base table's column.
    NonUpdatableColumn(String),
    /// 1393: a change through a join view reaching more than one base table.
    ViewMultiUpdate {
        db: String,
        view: String,
    },
    /// 1395: DELETE through a join view.
    ViewDeleteJoin {
        db: String,
        view: String,
    },
    /// 1423: INSERT through a view leaving out a NOT NULL column of the base table
    /// that has no default.
    NoDefaultForViewField {
        db: String,
        view: String,
    },
    /// 1450: RENAME TABLE moving a view to another database.
    ForbidSchemaChange {
        from: String,
        to: String,
    },
    /// 1093: an UPDATE or DELETE whose subquery reads the table it changes (directly,
    /// not through a materialized derived table).
    TargetTableRead(String),
    /// 1109: a multi-table DELETE target that is not a table of its FROM clause
    /// (`Unknown table 't' in MULTI DELETE`).
    UnknownTableInMultiDelete(String),
    /// 1436: an expression or query nested too deep for the connection thread's stack.
    StackOverrun {
        used: usize,
        size: usize,
    },
    /// 1210: a function's argument out of what it accepts (`NTILE(0)`, `LAG(x, -1)`);
    /// the function's name.
    WrongArguments(String),
    /// 3579: `OVER w` names no window of the WINDOW clause.
    WindowNoSuchWindow(String),
    /// 3580: named windows that refer to each other in a cycle.
    WindowCircularity,
    /// 3581: a window that refines another and has its own PARTITION BY.
    WindowNoChildPartitioning,
    /// 3582: a window with a frame, referred to by another window.
    WindowNoInheritFrame(String),
    /// 3583: (the refining window, the refined one), both with ORDER BY.
    WindowNoRedefineOrderBy(String, String),
    /// 3584: a frame starting at UNBOUNDED FOLLOWING.
    WindowFrameStartIllegal(String),
    /// 3585: a frame ending at UNBOUNDED PRECEDING.
    WindowFrameEndIllegal(String),
    /// 3586: a frame offset that is negative, NULL or (for ROWS) not an integer.
    WindowFrameIllegal(String),
    /// 3587: RANGE with an offset and not exactly one numeric or temporal ORDER BY key.
    WindowRangeFrameOrderType(String),
    /// 3588: RANGE with a numeric offset on a temporal ORDER BY key.
    WindowRangeFrameTemporalType(String),
    /// 3591: two windows of one WINDOW clause with the same name.
    WindowDuplicateName(String),
    /// 3593: a window function where none may be (WHERE, GROUP BY, HAVING, inside an
    /// aggregate or another window function); the function's name.
    WindowInvalidUse(String),
    /// 3594: the alias of a windowed select item where windows may not be (HAVING).
    WindowInvalidAliasUse(String),
    /// 3595: a window function inside a window's PARTITION BY or ORDER BY.
    WindowNestedInSpec(String),
    /// 1305: ROLLBACK TO / RELEASE of a savepoint the transaction does not have.
    SavepointNotExist(String),
    /// 1792: a write (or a locking read, or DDL) in a READ ONLY transaction.
    ReadOnlyTransaction,
    /// 1568: SET TRANSACTION (next transaction only) while a transaction is open.
    TxCharacteristicsInProgress,
    /// 1243: EXECUTE / DEALLOCATE PREPARE of a name no PREPARE made; (name, statement).
    UnknownStmtHandler {
        name: String,
        op: &'static str,
    },
    /// 1210 "Incorrect arguments to EXECUTE": USING gave the wrong number of values.
    ExecuteArguments,
    /// 1461: PREPARE beyond max_prepared_stmt_count; the limit.
    TooManyPreparedStatements(u64),
    /// 1452: a child row whose foreign key finds no parent row; the constraint as
    /// InnoDB describes it (`` `db`.`child`, CONSTRAINT `fk` FOREIGN KEY … ``).
    FkNoParent(String),
    /// 1451: a parent row still referred to by a RESTRICT / NO ACTION constraint.
    FkRowIsReferenced(String),
    /// 3008: cascading actions nested deeper than InnoDB's limit (15).
    FkDepthExceeded,
    /// 1822: the referenced columns are not the leading columns of an index.
    FkNoParentIndex {
        constraint: String,
        table: String,
    },
    /// 3734: a referenced column the parent table does not have.
    FkNoParentColumn {
        column: String,
        constraint: String,
        table: String,
    },
    /// 3780: a referencing and a referenced column of different types.
    FkIncompatibleColumns {
        column: String,
        referenced: String,
        constraint: String,
    },
    /// 3730: DROP TABLE of a table another table's foreign key refers to.
    FkCannotDropParent {
        table: String,
        constraint: String,
        child: String,
    },
    /// 1553: DROP INDEX of the index a foreign key needs.
    FkDropIndex(String),
    /// 1217: ALTER TABLE … ENGINE to an engine without foreign keys, of a table that
    /// has one or that one refers to.
    FkEngineChange,
    /// 1701: TRUNCATE of a table another table's foreign key refers to.
    FkTruncate(String),
    /// 1824: the referenced table does not exist (with foreign_key_checks on).
    FkCannotOpenParent(String),
    /// 1826: two foreign keys of one database with the same name.
    FkDuplicateName(String),
    /// 1828: dropping a column of a foreign key (column, constraint).
    FkColumnCannotDrop {
        column: String,
        constraint: String,
    },
    /// 1829: dropping a column another table's foreign key refers to.
    FkColumnCannotDropChild {
        column: String,
        constraint: String,
        table: String,
    },
    /// 1830: a NOT NULL column in a foreign key with SET NULL.
    FkColumnNotNull {
        column: String,
        constraint: String,
    },
    /// 1239: a malformed foreign key (constraint name, what is wrong).
    FkWrongDefinition {
        name: String,
        reason: String,
    },
    /// 1215: a foreign key the engine cannot hold (SET DEFAULT, a parent that is not
    /// InnoDB-like).
    FkCannotAdd,
    /// 3819: a row for which a CHECK constraint is false.
    CheckViolated(String),
    /// 3812: a CHECK expression that is not a condition.
    CheckNotBoolean(String),
    /// 3813: a column-level CHECK that names another column.
    CheckColumnRefersOther(String),
    /// 3814: a CHECK calling a function whose result may change (constraint, function).
    CheckDisallowedFunction {
        name: String,
        function: String,
    },
    /// 3815: a CHECK with a construct it may not hold (a subquery).
    CheckDisallowed(String),
    /// 3816: a CHECK naming a user or system variable.
    CheckVariables(String),
    /// 3769: a DEFAULT (expr) with a construct it may not hold (a subquery, a stored
    /// function).
    DefaultExprDisallowed(String),
    /// 3770: a DEFAULT (expr) calling a function MySQL refuses there (column, function).
    DefaultExprNamedFunction {
        column: String,
        function: String,
    },
    /// 3772: a DEFAULT (expr) naming a user or system variable.
    DefaultExprVariables(String),
    /// 3767: a DEFAULT (expr) naming a later generated column or one with an
    /// expression default.
    DefaultExprNonPrior(String),
    /// 3768: a DEFAULT (expr) naming the AUTO_INCREMENT column.
    DefaultExprAutoIncrement(String),
    /// 3773: DEFAULT(col) of a column whose default is an expression.
    DefaultFunctionOnExpr,
    /// 3766: DROP / RENAME of a column an expression default uses (column, table).
    DependentByDefaultExpr {
        column: String,
        table: String,
    },
    /// 3102: a generated column's expression with a construct it may not hold.
    GeneratedDisallowed(String),
    /// 3763: a generated column calling a function whose value is not fixed by the row.
    GeneratedNamedFunction {
        column: String,
        function: String,
    },
    /// 3765: a generated column naming a user or system variable.
    GeneratedVariables(String),
    /// 3107: a generated column naming itself or a later generated column.
    GeneratedNonPrior,
    /// 3109: a generated column naming the AUTO_INCREMENT column.
    GeneratedAutoIncrement(String),
    /// 3105: a value other than DEFAULT written to a generated column (column, table).
    GeneratedValueNotAllowed {
        column: String,
        table: String,
    },
    /// 3106: an option a generated column may not have (DEFAULT, AUTO_INCREMENT, …).
    GeneratedUnsupported(String),
    /// 3108: DROP / RENAME of a column a generated column uses.
    DependentByGenerated(String),
    /// 3818: a CHECK naming the AUTO_INCREMENT column.
    CheckAutoIncrement(String),
    /// 3820: a CHECK naming a column the table does not have.
    CheckUnknownColumn {
        name: String,
        column: String,
    },
    /// 3821: DROP CHECK of a constraint the table does not have.
    CheckNotFound(String),
    /// 3822: two CHECK constraints of one database with the same name.
    CheckDuplicateName(String),
    /// 3823: a CHECK naming a column a foreign key's referential action changes.
    CheckFkColumn {
        column: String,
        check: String,
        fk: String,
    },
    /// 3959: dropping or renaming a column a CHECK constraint uses.
    CheckDependentColumn {
        check: String,
        column: String,
    },
    /// 3940: DROP CONSTRAINT of a name no constraint of the table has.
    ConstraintNotFound(String),
    /// 1359: CREATE TRIGGER of a name the schema already has.
    TriggerExists,
    /// 1360: DROP TRIGGER of a name the schema does not have.
    TriggerDoesNotExist,
    /// 1363: `NEW` in a DELETE trigger or `OLD` in an INSERT trigger; (row, event).
    TriggerNoSuchRow {
        row: &'static str,
        event: &'static str,
    },
    /// 1362: assigning to `NEW` in an AFTER trigger (or to `OLD`); (row, "after " or "").
    TriggerCantChangeRow {
        row: &'static str,
        after: bool,
    },
    /// 1435: a trigger in another schema than its table.
    TriggerWrongSchema,
    /// 1442: a stored program changing a table the statement that invoked it uses.
    CantUpdateUsedTable(String),
    /// A warning an INSERT or UPDATE raised under strict mode, which makes it the
    /// statement's error (MySQL's `Strict_error_handler`): 1292 `Truncated incorrect
    /// DOUBLE value: 'abc'` and its kin, with the warning's code and text.
    StrictWarning {
        code: u16,
        message: String,
    },
    /// 1644 (or the MYSQL_ERRNO given) with any SQLSTATE: SIGNAL / RESIGNAL.
    Signal {
        code: u16,
        sqlstate: String,
        message: String,
    },
    /// 1304: CREATE PROCEDURE/FUNCTION of an existing routine; (kind, name).
    RoutineExists {
        kind: &'static str,
        name: String,
    },
    /// 1305: a procedure or stored function that does not exist; (kind, `db.name`).
    RoutineDoesNotExist {
        kind: &'static str,
        name: String,
    },
    /// 1318: a routine called with the wrong number of arguments.
    RoutineArguments {
        kind: &'static str,
        name: String,
        expected: usize,
        got: usize,
    },
    /// 1327: a name a stored program uses as a variable but never declared.
    UndeclaredVariable(String),
    /// 1331: two DECLAREs of one name in one block.
    DuplicateVariable(String),
    /// 1308: LEAVE / ITERATE of a label no enclosing block has; (statement, label).
    NoSuchLabel {
        statement: &'static str,
        label: String,
    },
    /// 1310: an end label that differs from the begin label.
    EndLabelMismatch(String),
    /// 1309: a label used twice in nested blocks.
    DuplicateLabel(String),
    /// 1329: FETCH past a cursor's last row (SQLSTATE 02000, NOT FOUND).
    NoData,
    /// 1172: SELECT … INTO that found more than one row.
    TooManyRows,
    /// 1222: SELECT … INTO with another number of variables than columns.
    IntoColumnCount,
    /// 1086: SELECT … INTO OUTFILE/DUMPFILE names a file that exists.
    FileExists(String),
    /// 29: LOAD DATA INFILE or a file the server was asked to read is not there.
    FileNotFound(String),
    /// 3: writing a statement's file failed (its path, the OS error), in MySQL's words.
    FileWrite {
        path: String,
        err: String,
    },
    /// 1290: the statement needs a file `secure_file_priv` does not allow
    /// (`--secure-file-priv` names the option).
    SecureFilePriv,
    /// 3948: LOAD DATA LOCAL with `local_infile` off or a client that did not offer it.
    LocalInfileDisabled,
    /// 1261 / 1262 / 1263: a LOAD DATA row with too few fields, too many fields, or NULL
    /// for a NOT NULL column (errors under strict mode; otherwise warnings).
    TooFewRecords(u64),
    TooManyRecords(u64),
    NullToNotNull {
        column: String,
        row: u64,
    },
    /// 1083: a FIELDS/LINES clause MySQL refuses (a separator of more than one byte
    /// with fixed-size rows, …), named.
    WrongFieldTerminators,
    /// 1321: a stored function that ended without RETURN.
    FunctionNoReturn(String),
    /// 1313: RETURN outside a stored function.
    ReturnOutsideFunction,
    /// 1339: a CASE statement no WHEN matched and without ELSE.
    CaseNotFound,
    /// 1324 / 1325 / 1326: an unknown cursor, OPEN of an open one, use of a closed one.
    UndeclaredCursor(String),
    CursorAlreadyOpen,
    CursorNotOpen,
    /// 1319: a condition name no DECLARE … CONDITION declared.
    UndeclaredCondition(String),
    /// 1312: a procedure sending a result set to a client that cannot take several.
    ProcedureResultSet(String),
    /// 1415: a trigger or stored function that would send a result set.
    ResultSetFromProgram(&'static str),
    /// 1422: COMMIT/ROLLBACK (or DDL) inside a stored function or trigger.
    CommitInProgram,
    /// 1456: recursion past max_sp_recursion_depth; (limit, routine).
    RoutineRecursion {
        limit: u64,
        name: String,
    },
    /// 1424: a stored function (or trigger) calling itself.
    RecursiveFunction,
    /// 1645: RESIGNAL outside a handler.
    ResignalOutsideHandler,
    /// 1418: a function without DETERMINISTIC, NO SQL or READS SQL DATA while binary
    /// logging would need it (kept for `log_bin_trust_function_creators`).
    FunctionNotDeclaredDeterministic,
    /// 1105: an internal invariant broke; the statement is abandoned, the server goes on.
    Internal(String),
}

impl Error {
    /// The MySQL error number.
    pub fn code(&self) -> u16 {
        use Error::*;
        match self {
            Syntax(_) | SyntaxAt { .. } => 1064,
            NotSupported(_) => 1235,
            UnsupportedPs => 1295,
            UnknownCommand => 1047,
            AccessDenied { .. } => 1045,
            NoDatabaseSelected => 1046,
            UnknownDatabase(_) => 1049,
            DatabaseExists(_) => 1007,
            DropMissingDatabase(_) => 1008,
            NoSuchTable { .. } => 1146,
            TableExists(_) => 1050,
            CantReopenTable(_) => 1137,
            FkNoParent(_) => 1452,
            FkRowIsReferenced(_) => 1451,
            FkDepthExceeded => 3008,
            FkNoParentIndex { .. } => 1822,
            FkNoParentColumn { .. } => 3734,
            FkIncompatibleColumns { .. } => 3780,
            FkCannotDropParent { .. } => 3730,
            FkDropIndex(_) => 1553,
            FkEngineChange => 1217,
            FkTruncate(_) => 1701,
            FkCannotOpenParent(_) => 1824,
            FkDuplicateName(_) => 1826,
            FkColumnCannotDrop { .. } => 1828,
            FkColumnCannotDropChild { .. } => 1829,
            FkColumnNotNull { .. } => 1830,
            FkWrongDefinition { .. } => 1239,
            FkCannotAdd => 1215,
            CheckViolated(_) => 3819,
            CheckNotBoolean(_) => 3812,
            CheckColumnRefersOther(_) => 3813,
            CheckDisallowedFunction { .. } => 3814,
            CheckDisallowed(_) => 3815,
            CheckVariables(_) => 3816,
            CheckAutoIncrement(_) => 3818,
            DefaultExprDisallowed(_) => 3769,
            DefaultExprNamedFunction { .. } => 3770,
            DefaultExprVariables(_) => 3772,
            DefaultExprNonPrior(_) => 3767,
            DefaultExprAutoIncrement(_) => 3768,
            DefaultFunctionOnExpr => 3773,
            DependentByDefaultExpr { .. } => 3766,
            GeneratedDisallowed(_) => 3102,
            GeneratedNamedFunction { .. } => 3763,
            GeneratedVariables(_) => 3765,
            GeneratedNonPrior => 3107,
            GeneratedAutoIncrement(_) => 3109,
            GeneratedValueNotAllowed { .. } => 3105,
            GeneratedUnsupported(_) => 3106,
            DependentByGenerated(_) => 3108,
            CheckUnknownColumn { .. } => 3820,
            CheckNotFound(_) => 3821,
            CheckDuplicateName(_) => 3822,
            CheckFkColumn { .. } => 3823,
            CheckDependentColumn { .. } => 3959,
            ConstraintNotFound(_) => 3940,
            UnknownTable(_) => 1051,
            UnknownColumn { .. } => 1054,
            AmbiguousColumn { .. } => 1052,
            DuplicateColumn(_) => 1060,
            DuplicateKeyName(_) => 1061,
            MultiplePrimaryKey => 1068,
            PrimaryKeyInvisible => 3522,
            IllegalCreateOption(_) => 1031,
            KeyColumnMissing(_) => 1072,
            WrongAutoKey => 1075,
            InvalidDefault(_) => 1067,
            BlobCantHaveDefault(_) => 1101,
            NoSuchIndex { .. } => 1176,
            CantDropKey(_) => 1091,
            AlterNotSupported { .. } => 1846,
            AlterOperationNotSupported { .. } => 1845,
            MaxRowVersions(_) => 4092,
            TableDefChanged => 1412,
            InvalidUseOfNull => 1138,
            DuplicateKey { .. } => 1062,
            RecordNotFound(_) => 1032,
            OnlineLogTooBig(_) => 1799,
            ColumnNotNull(_) => 1048,
            NoDefault(_) => 1364,
            ValueCount(_) => 1136,
            OutOfRange { .. } => 1264,
            AutoIncrementOutOfRange { .. } => 167,
            ValueOutOfRange { .. } => 1690,
            DataTooLong { .. } => 1406,
            DataTruncated { .. } => 1265,
            DuplicatedTypeValue { .. } => 1291,
            TooManyTypeValues(_) => 1097,
            IllegalSetMember(_) => 1367,
            IllegalCollationMix { .. } => 1267,
            CantRemoveAllFields => 1090,
            NoVisibleColumn => 4028,
            IncorrectValue { .. } => 1366,
            TruncatedWrongValue { .. } | IncorrectTemporalValue { .. } => 1292,
            WrongValueForFunction { .. } => 1411,
            DivisionByZero => 1365,
            CollationCharsetMismatch { .. } => 1253,
            Regexp(code) => *code,
            RegexpSyntax(_) => 3688,
            WrongLiteral { .. } => 1525,
            TooBigPrecision { .. } => 1426,
            TooBigDecimalPrecision { .. } => 1426,
            TooBigScale { .. } => 1425,
            ScaleAbovePrecision(_) => 1427,
            WrongFieldSpec(_) => 1063,
            InvalidOnUpdate(_) => 1294,
            InvalidYearWidth => 1818,
            UnknownVariable(_) => 1193,
            WrongValueForVariable { .. } => 1231,
            WrongTypeForVariable(_) => 1232,
            VariableReadOnly(_) => 1238,
            VariableIsGlobal(_) => 1229,
            VariableIsSession(_) => 1228,
            SqlLogBinInTransaction => 1694,
            VariableWrongScope { .. } => 1238,
            SessionVariableReadOnly(_) => 1621,
            PersistedVariableMissing(_) => 3615,
            UnknownEngine(_) => 1286,
            UnknownFunction(_) => 1305,
            WrongParamCount(_) => 1582,
            InvalidGroupUse => 1111,
            NotFullGroupBy {
                implicit: false, ..
            } => 1055,
            NotFullGroupBy { implicit: true, .. } => 1140,
            OrderNotInDistinct { .. } => 3065,
            GroupingArgNotGrouped(_) => 3602,
            JsonNullKey => 3158,
            InvalidJsonText { .. } => 3140,
            InvalidJsonTextInParam { .. } => 3141,
            InvalidJsonPath(_) => 3143,
            InvalidJsonType { .. } => 3146,
            JsonPathWildcard => 3149,
            JsonBadOneOrAll(_) => 3150,
            JsonUsedAsKey(_) => 3152,
            JsonVacuousPath => 3153,
            JsonTooDeep => 3157,
            JsonPathArrayCell => 3154,
            TooBigDisplayWidth { .. } => 1439,
            OperandColumns(_) => 1241,
            SubqueryRows => 1242,
            NoTablesUsed => 1096,
            TableNotLocked(_) => 1100,
            TableLockedForRead(_) => 1099,
            CantUpdateWithReadLock => 1223,
            LockedTablesOrActiveTransaction => 1192,
            UnknownCharset(_) => 1115,
            UnknownCollation(_) => 1273,
            WrongDatabaseName(_) => 1102,
            WrongTableName(_) => 1103,
            WrongColumnName(_) => 1166,
            ColumnTooLong { .. } => 1074,
            CommentTooLong { what, .. } => match *what {
                "table" => 1628,
                "index" => 1688,
                _ => 1629,
            },
            PacketTooLarge => 1153,
            TooManyConnections => 1040,
            MemoryCapacityExceeded { .. } => 3170,
            TooManyUserConnections(_) => 1203,
            UserLimitReached(..) => 1226,
            DbAccessDenied { .. } => 1044,
            TableAccessDenied { .. } => 1142,
            SpecificAccessDenied(_) => 1227,
            Base64Decode => 1575,
            BinlogNoFormatDescription(_) => 1609,
            BinlogEventNotAllowed(_) => 1730,
            BinlogEventMalformed => 1149,
            ColumnAccessDenied { .. } => 1143,
            UnknownAuthId(..) => 3523,
            RoleNotGranted(..) => 3530,
            RoleGrantedToItself(..) => 4027,
            MandatoryRole(_) => 3628,
            SystemSchemaAccess(_) => 3552,
            AccountOperationFailed(..) => 1396,
            NoImplicitUserCreation => 1410,
            NoMatchingUser => 1133,
            NoSuchGrant { .. } => 1141,
            NoSuchTableGrant { .. } => 1147,
            IllegalGrant => 1144,
            WrongUsage(..) => 1221,
            AccountLocked { .. } => 3118,
            NotThreadOwner(_) => 1095,
            IdleTimeout => 4031,
            NetReadTimeout => 1159,
            InsecureTransport => 3159,
            LongDataTooLong => 1105,
            LockWaitTimeout => 1205,
            XaNota => 1397,
            XaInval => 1398,
            XaRmFail(_) => 1399,
            XaOutside => 1400,
            XaDupId => 1440,
            XaRbDeadlock => 1614,
            Deadlock => 1213,
            UserLockDeadlock => 3058,
            UserLockWrongName(_) => 3057,
            Interrupted => 1317,
            ExecutionTimeExceeded => 3024,
            LockNowait => 3572,
            UnknownThread(_) => 1094,
            UnknownTargetBinlog => 1373,
            BinlogEventsTargetMissing | BinlogEventsBadPosition => 1220,
            NoBinaryLogging => 1381,
            ReplicaMustStop => 1198,
            ReplicaNotConfigured => 1200,
            BadReplicaAutoPosition => 1776,
            GtidExecuted(_) => 1837,
            MalformedGtidSet(_) => 1772,
            GtidModeOff(_) => 1788,
            VariableNotSettableInTransaction(_) => 1766,
            GtidNextWhileOwning(_) => 1790,
            GtidNextGtidWhenModeOff => 1781,
            GtidNextAnonymousWhenModeOn => 1782,
            ImplicitCommitWithGtidNext => 1778,
            WaitForOwnedGtid(_) => 3173,
            GtidPurgedConstraint(_) => 3546,
            MasterFatalReadingBinlog(_) => 1236,
            Corrupt { .. } => 1194,
            TableFull(_) => 1114,
            Io(_) => 1030,
            RowTooLarge(_) => 1118,
            KeyTooLong(_) => 1071,
            StackOverrun { .. } => 1436,
            ViewColumnCount => 1353,
            WrongColumnCountInSetOp => 1222,
            DerivedNeedsAlias => 1248,
            TooManyTables(_) => 1116,
            NonUniqueTable(_) => 1066,
            RecursionDepth(_) => 3636,
            WrongObject { .. } => 1347,
            ViewInvalid { .. } => 1356,
            ViewRecursive { .. } => 1462,
            NonUpdatableTable { .. } => 1288,
            NonInsertableTable(_) => 1471,
            ViewCheckFailed { .. } => 1369,
            ViewCheckNonUpdatable { .. } => 1368,
            NonUpdatableColumn(_) => 1348,
            ViewMultiUpdate { .. } => 1393,
            ViewDeleteJoin { .. } => 1395,
            NoDefaultForViewField { .. } => 1423,
            ForbidSchemaChange { .. } => 1450,
            TargetTableRead(_) => 1093,
            UnknownTableInMultiDelete(_) => 1109,
            WrongArguments(_) => 1210,
            WindowNoSuchWindow(_) => 3579,
            WindowCircularity => 3580,
            WindowNoChildPartitioning => 3581,
            WindowNoInheritFrame(_) => 3582,
            WindowNoRedefineOrderBy(..) => 3583,
            WindowFrameStartIllegal(_) => 3584,
            WindowFrameEndIllegal(_) => 3585,
            WindowFrameIllegal(_) => 3586,
            WindowRangeFrameOrderType(_) => 3587,
            WindowRangeFrameTemporalType(_) => 3588,
            WindowDuplicateName(_) => 3591,
            WindowInvalidUse(_) => 3593,
            WindowInvalidAliasUse(_) => 3594,
            WindowNestedInSpec(_) => 3595,
            SavepointNotExist(_) => 1305,
            ReadOnlyTransaction => 1792,
            TxCharacteristicsInProgress => 1568,
            UnknownStmtHandler { .. } => 1243,
            ExecuteArguments => 1210,
            TooManyPreparedStatements(_) => 1461,
            TriggerExists => 1359,
            TriggerDoesNotExist => 1360,
            TriggerNoSuchRow { .. } => 1363,
            TriggerCantChangeRow { .. } => 1362,
            TriggerWrongSchema => 1435,
            CantUpdateUsedTable(_) => 1442,
            Signal { code, .. } | StrictWarning { code, .. } => *code,
            RoutineExists { .. } => 1304,
            RoutineDoesNotExist { .. } => 1305,
            RoutineArguments { .. } => 1318,
            UndeclaredVariable(_) => 1327,
            DuplicateVariable(_) => 1331,
            NoSuchLabel { .. } => 1308,
            EndLabelMismatch(_) => 1310,
            DuplicateLabel(_) => 1309,
            NoData => 1329,
            TooManyRows => 1172,
            IntoColumnCount => 1222,
            FileExists(_) => 1086,
            FileNotFound(_) => 29,
            FileWrite { .. } => 3,
            SecureFilePriv => 1290,
            LocalInfileDisabled => 3948,
            TooFewRecords(_) => 1261,
            TooManyRecords(_) => 1262,
            NullToNotNull { .. } => 1263,
            WrongFieldTerminators => 1083,
            FunctionNoReturn(_) => 1321,
            ReturnOutsideFunction => 1313,
            CaseNotFound => 1339,
            UndeclaredCursor(_) => 1324,
            CursorAlreadyOpen => 1325,
            CursorNotOpen => 1326,
            UndeclaredCondition(_) => 1319,
            ProcedureResultSet(_) => 1312,
            ResultSetFromProgram(_) => 1415,
            CommitInProgram => 1422,
            RoutineRecursion { .. } => 1456,
            RecursiveFunction => 1424,
            ResignalOutsideHandler => 1645,
            FunctionNotDeclaredDeterministic => 1418,
            Internal(_) => 1105,
        }
    }

    /// The five-character SQLSTATE that goes with [`Error::code`].
    pub fn sqlstate(&self) -> &str {
        if let Error::Signal { sqlstate, .. } = self {
            return sqlstate;
        }
        match self.code() {
            1101 | 1066 | 1248 | 1064 | 1149 | 1235 | 1049 | 1067 | 1068 | 1072 | 1075 | 1176
            | 1091 | 1061 | 1231 | 1232 | 1074 | 1115 | 1102 | 1103 | 1166 | 1286 | 1305 | 1582
            | 1273 | 1118 | 1071 | 1203 | 1044 | 1142 | 1143 | 1227 | 1410 | 1133 | 1141 | 1147
            | 1144 | 1055 | 1140 => "42000",
            1146 | 1051 | 1109 => "42S02",
            1050 => "42S01",
            1054 => "42S22",
            1060 => "42S21",
            1052 | 1062 | 1048 | 1217 | 1451 | 1452 => "23000",
            1239 | 1701 => "42000",
            1045 => "28000",
            1046 => "3D000",
            1136 => "21S01",
            1241 | 1242 | 1222 => "21000",
            167 | 1264 | 1690 => "22003",
            1406 => "22001",
            1265 => "01000",
            1090 => "42000",
            1292 | 1367 => "22007",
            1365 => "22012",
            1253 => "42000",
            1425..=1427 | 1063 => "42000",
            1047 | 1153 | 1159 => "08S01",
            1040 => "08004",
            // 1205 is HY000 in MySQL and MariaDB alike; only a deadlock is 40001.
            1213 | 3058 => "40001",
            3057 => "42000",
            1317 => "70100",
            1792 => "25006",
            1568 => "25001",
            1461 => "42000",
            3158 | 3140 | 3141 | 3146 | 3157 => "22032",
            3143 | 3149 | 3150 | 3152 | 3153 | 3154 | 1439 => "42000",
            1845 | 1846 => "0A000",
            1138 => "22004",
            1304 | 1318 | 1327 | 1331 | 1308 | 1309 | 1310 | 1313 | 1319 | 1324 | 1172 => "42000",
            1329 => "02000",
            1261 | 1262 => "01000",
            1263 => "22004",
            3948 | 1083 => "42000",
            1321 => "2F005",
            1339 => "20000",
            1325 | 1326 => "24000",
            1312 | 1415 => "0A000",
            1645 => "0K000",
            1397 => "XAE04",
            1398 => "XAE05",
            1399 => "XAE07",
            1400 => "XAE09",
            1440 => "XAE08",
            1614 => "XA102",
            _ => "HY000",
        }
    }

    /// Wraps an operating-system error met while doing `context` (1030, naming it).
    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Error {
        Error::Io(format!("{context}: {err}"))
    }

    /// Wraps an operating-system error from table `db.table`: a full disk (ENOSPC, or
    /// a quota: EDQUOT) is 1114 "The table 't1' is full", as MySQL reports a tablespace
    /// it cannot extend (naming the table alone); anything else is 1030.
    pub fn table_io(qualified: &str, err: std::io::Error) -> Error {
        if is_disk_full(&err) {
            let table = qualified.split_once('.').map_or(qualified, |(_, t)| t);
            return Error::TableFull(table.to_string());
        }
        Error::io(qualified, err)
    }

    /// A corrupt-file error naming the table and what check failed.
    pub fn corrupt(table: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::Corrupt {
            table: table.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Error::*;
        match self {
            Syntax(near) => write!(
                f,
                "You have an error in your SQL syntax; check the manual that corresponds to your \
                 MySQL server version for the right syntax to use near '{near}' at line 1"
            ),
            SyntaxAt { near, line } => write!(
                f,
                "You have an error in your SQL syntax; check the manual that corresponds to your \
                 MySQL server version for the right syntax to use near '{near}' at line {line}"
            ),
            NotSupported(what) => write!(f, "This version of Strata doesn't yet support '{what}'"),
            UnsupportedPs => {
                write!(
                    f,
                    "This command is not supported in the prepared statement protocol yet"
                )
            }
            UnknownCommand => write!(f, "Unknown command"),
            AccessDenied {
                user,
                host,
                using_password,
            } => write!(
                f,
                "Access denied for user '{user}'@'{host}' (using password: {})",
                if *using_password { "YES" } else { "NO" }
            ),
            NoDatabaseSelected => write!(f, "No database selected"),
            UnknownDatabase(db) => write!(f, "Unknown database '{db}'"),
            DatabaseExists(db) => write!(f, "Can't create database '{db}'; database exists"),
            DropMissingDatabase(db) => {
                write!(f, "Can't drop database '{db}'; database doesn't exist")
            }
            NoSuchTable { db, table } => write!(f, "Table '{db}.{table}' doesn't exist"),
            TableExists(t) => write!(f, "Table '{t}' already exists"),
            CantReopenTable(t) => write!(f, "Can't reopen table: '{t}'"),
            FkNoParent(c) => write!(
                f,
                "Cannot add or update a child row: a foreign key constraint fails ({c})"
            ),
            FkRowIsReferenced(c) => write!(
                f,
                "Cannot delete or update a parent row: a foreign key constraint fails ({c})"
            ),
            FkDepthExceeded => write!(
                f,
                "Foreign key cascade delete/update exceeds max depth of 15."
            ),
            FkNoParentIndex { constraint, table } => write!(
                f,
                "Failed to add the foreign key constraint. Missing index for constraint \
                 '{constraint}' in the referenced table '{table}'"
            ),
            FkNoParentColumn {
                column,
                constraint,
                table,
            } => write!(
                f,
                "Failed to add the foreign key constraint. Missing column '{column}' for \
                 constraint '{constraint}' in the referenced table '{table}'"
            ),
            FkIncompatibleColumns {
                column,
                referenced,
                constraint,
            } => write!(
                f,
                "Referencing column '{column}' and referenced column '{referenced}' in \
                 foreign key constraint '{constraint}' are incompatible."
            ),
            FkCannotDropParent {
                table,
                constraint,
                child,
            } => write!(
                f,
                "Cannot drop table '{table}' referenced by a foreign key constraint \
                 '{constraint}' on table '{child}'."
            ),
            FkDropIndex(i) => write!(
                f,
                "Cannot drop index '{i}': needed in a foreign key constraint"
            ),
            FkEngineChange => write!(
                f,
                "Cannot delete or update a parent row: a foreign key constraint fails"
            ),
            FkTruncate(c) => write!(
                f,
                "Cannot truncate a table referenced in a foreign key constraint ({c})"
            ),
            FkCannotOpenParent(t) => write!(f, "Failed to open the referenced table '{t}'"),
            FkDuplicateName(n) => write!(f, "Duplicate foreign key constraint name '{n}'"),
            FkColumnCannotDrop { column, constraint } => write!(
                f,
                "Cannot drop column '{column}': needed in a foreign key constraint \
                 '{constraint}'"
            ),
            FkColumnCannotDropChild {
                column,
                constraint,
                table,
            } => write!(
                f,
                "Cannot drop column '{column}': needed in a foreign key constraint \
                 '{constraint}' of table '{table}'"
            ),
            FkColumnNotNull { column, constraint } => write!(
                f,
                "Column '{column}' cannot be NOT NULL: needed in a foreign key constraint \
                 '{constraint}' SET NULL"
            ),
            FkWrongDefinition { name, reason } => {
                write!(f, "Incorrect foreign key definition for '{name}': {reason}")
            }
            FkCannotAdd => write!(f, "Cannot add foreign key constraint"),
            CheckViolated(n) => write!(f, "Check constraint '{n}' is violated."),
            CheckNotBoolean(n) => write!(
                f,
                "An expression of non-boolean type specified to check constraint '{n}'."
            ),
            CheckColumnRefersOther(n) => {
                write!(f, "Column check constraint '{n}' references other column.")
            }
            CheckDisallowedFunction { name, function } => write!(
                f,
                "An expression of a check constraint '{name}' contains disallowed function: \
                 {function}."
            ),
            CheckDisallowed(n) => write!(
                f,
                "An expression of a check constraint '{n}' contains disallowed function."
            ),
            CheckVariables(n) => write!(
                f,
                "An expression of a check constraint '{n}' cannot refer to a user or system \
                 variable."
            ),
            DefaultExprDisallowed(c) => write!(
                f,
                "Default value expression of column '{c}' contains a disallowed function."
            ),
            DefaultExprNamedFunction { column, function } => write!(
                f,
                "Default value expression of column '{column}' contains a disallowed \
                 function: {function}."
            ),
            DefaultExprVariables(c) => write!(
                f,
                "Default value expression of column '{c}' cannot refer user or system \
                 variables."
            ),
            DefaultExprNonPrior(c) => write!(
                f,
                "Default value expression of column '{c}' cannot refer to a column defined \
                 after it if that column is a generated column or has an expression as \
                 default value."
            ),
            DefaultExprAutoIncrement(c) => write!(
                f,
                "Default value expression of column '{c}' cannot refer to an auto-increment \
                 column."
            ),
            DefaultFunctionOnExpr => write!(
                f,
                "DEFAULT function cannot be used with default value expressions"
            ),
            DependentByDefaultExpr { column, table } => write!(
                f,
                "Column '{column}' of table '{table}' has a default value expression \
                 dependency and cannot be dropped or renamed."
            ),
            GeneratedDisallowed(c) => write!(
                f,
                "Expression of generated column '{c}' contains a disallowed function."
            ),
            GeneratedNamedFunction { column, function } => write!(
                f,
                "Expression of generated column '{column}' contains a disallowed function: \
                 {function}."
            ),
            GeneratedVariables(c) => write!(
                f,
                "Expression of generated column '{c}' cannot refer user or system variables."
            ),
            GeneratedNonPrior => write!(
                f,
                "Generated column can refer only to generated columns defined prior to it."
            ),
            GeneratedAutoIncrement(c) => write!(
                f,
                "Generated column '{c}' cannot refer to auto-increment column."
            ),
            GeneratedValueNotAllowed { column, table } => write!(
                f,
                "The value specified for generated column '{column}' in table '{table}' is \
                 not allowed."
            ),
            GeneratedUnsupported(what) => {
                write!(f, "'{what}' is not supported for generated columns.")
            }
            DependentByGenerated(c) => {
                write!(f, "Column '{c}' has a generated column dependency.")
            }
            CheckAutoIncrement(n) => write!(
                f,
                "Check constraint '{n}' cannot refer to an auto-increment column."
            ),
            CheckUnknownColumn { name, column } => write!(
                f,
                "Check constraint '{name}' refers to non-existing column '{column}'."
            ),
            CheckNotFound(n) => write!(f, "Check constraint '{n}' is not found in the table."),
            CheckDuplicateName(n) => write!(f, "Duplicate check constraint name '{n}'."),
            CheckFkColumn { column, check, fk } => write!(
                f,
                "Column '{column}' cannot be used in a check constraint '{check}': needed in a \
                 foreign key constraint '{fk}' referential action."
            ),
            CheckDependentColumn { check, column } => write!(
                f,
                "Check constraint '{check}' uses column '{column}', hence column cannot be \
                 dropped or renamed."
            ),
            ConstraintNotFound(n) => write!(f, "Constraint '{n}' does not exist."),
            UnknownTable(t) => write!(f, "Unknown table '{t}'"),
            UnknownColumn { column, context } => {
                write!(f, "Unknown column '{column}' in '{context}'")
            }
            AmbiguousColumn { column, context } => {
                write!(f, "Column '{column}' in {context} is ambiguous")
            }
            DuplicateColumn(c) => write!(f, "Duplicate column name '{c}'"),
            DuplicateKeyName(k) => write!(f, "Duplicate key name '{k}'"),
            MultiplePrimaryKey => write!(f, "Multiple primary key defined"),
            PrimaryKeyInvisible => write!(f, "A primary key index cannot be invisible"),
            IllegalCreateOption(t) => {
                write!(f, "Table storage engine for '{t}' doesn't have this option")
            }
            KeyColumnMissing(c) => write!(f, "Key column '{c}' doesn't exist in table"),
            WrongAutoKey => write!(
                f,
                "Incorrect table definition; there can be only one auto column and it must be \
                 defined as a key"
            ),
            InvalidDefault(c) => write!(f, "Invalid default value for '{c}'"),
            BlobCantHaveDefault(c) => write!(
                f,
                "BLOB, TEXT, GEOMETRY or JSON column '{c}' can't have a default value"
            ),
            NoSuchIndex { index, table } => {
                write!(f, "Key '{index}' doesn't exist in table '{table}'")
            }
            CantDropKey(k) => write!(f, "Can't DROP '{k}'; check that column/key exists"),
            AlterNotSupported {
                what,
                reason,
                try_instead,
            } => write!(
                f,
                "{what} is not supported. Reason: {reason}. Try {try_instead}."
            ),
            AlterOperationNotSupported { what, try_instead } => write!(
                f,
                "{what} is not supported for this operation. Try {try_instead}."
            ),
            MaxRowVersions(t) => write!(
                f,
                "Maximum row versions reached for table {t}. No more columns can be added or \
                 dropped instantly. Please use COPY/INPLACE."
            ),
            TableDefChanged => write!(f, "Table definition has changed, please retry transaction"),
            InvalidUseOfNull => write!(f, "Invalid use of NULL value"),
            DuplicateKey { value, key } => write!(f, "Duplicate entry '{value}' for key '{key}'"),
            RecordNotFound(t) => write!(f, "Can't find record in '{t}'"),
            OnlineLogTooBig(index) => write!(
                f,
                "Creating index '{index}' required more than \
                 'innodb_online_alter_log_max_size' bytes of modification log. Please try again."
            ),
            ColumnNotNull(c) => write!(f, "Column '{c}' cannot be null"),
            NoDefault(c) => write!(f, "Field '{c}' doesn't have a default value"),
            ValueCount(row) => write!(f, "Column count doesn't match value count at row {row}"),
            OutOfRange { column, row } | AutoIncrementOutOfRange { column, row } => {
                write!(f, "Out of range value for column '{column}' at row {row}")
            }
            ValueOutOfRange { kind, expr } => write!(f, "{kind} value is out of range in '{expr}'"),
            DataTruncated { column, row } => {
                write!(f, "Data truncated for column '{column}' at row {row}")
            }
            DuplicatedTypeValue {
                column,
                value,
                kind,
            } => write!(f, "Column '{column}' has duplicated value '{value}' in {kind}"),
            TooManyTypeValues(c) => write!(f, "Too many strings for column {c} and SET"),
            IllegalSetMember(v) => write!(f, "Illegal set '{v}' value found during parsing"),
            IllegalCollationMix { left, right, op } => write!(
                f,
                "Illegal mix of collations ({left},EXPLICIT) and ({right},EXPLICIT) for operation '{op}'"
            ),
            CantRemoveAllFields => write!(
                f,
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"
            ),
            NoVisibleColumn => write!(f, "A table must have at least one visible column."),
            DataTooLong { column, row } => {
                write!(f, "Data too long for column '{column}' at row {row}")
            }
            IncorrectValue {
                kind,
                value,
                column,
                row,
            } => write!(
                // MySQL 8's text: the column in single quotes, the value cut to 128
                // characters ('%-.128s').
                f,
                "Incorrect {kind} value: '{}' for column '{column}' at row {row}",
                cut_chars(value, 128)
            ),
            TruncatedWrongValue { kind, value } => write!(f, "Incorrect {kind} value: '{value}'"),
            IncorrectTemporalValue {
                kind,
                value,
                column,
                row,
            } => write!(
                f,
                "Incorrect {kind} value: '{value}' for column '{column}' at row {row}"
            ),
            WrongValueForFunction { kind, value, func } => {
                write!(f, "Incorrect {kind} value: '{value}' for function {func}")
            }
            DivisionByZero => write!(f, "Division by 0"),
            CollationCharsetMismatch { collation, charset } => write!(
                f,
                "COLLATION '{collation}' is not valid for CHARACTER SET '{charset}'"
            ),
            RegexpSyntax(at) => write!(
                f,
                "Syntax error in regular expression on line 1, character {at}."
            ),
            Regexp(code) => f.write_str(match code {
                3685 => "Illegal argument to a regular expression.",
                3686 => "Index out of bounds in regular expression search.",
                3689 => "Unrecognized escape sequence in regular expression.",
                3691 => "Mismatched parenthesis in regular expression.",
                3692 => "Incorrect description of a {min,max} interval.",
                3693 => "The maximum is less than the minumum in a {min,max} interval.",
                3696 => "The regular expression contains an unclosed bracket expression.",
                3700 => "The regular expression pattern exceeds limits on size or complexity.",
                3900 => "Invalid match mode flag in regular expression.",
                _ => "Error in regular expression.",
            }),
            WrongLiteral { kind, value } => write!(f, "Incorrect {kind} value: '{value}'"),
            TooBigPrecision { precision, func } => write!(
                f,
                "Too-big precision {precision} specified for '{func}'. Maximum is 6."
            ),
            TooBigDecimalPrecision { precision, column } => write!(
                f,
                "Too-big precision {precision} specified for '{column}'. Maximum is 65."
            ),
            TooBigScale { scale, column } => write!(
                f,
                "Too big scale {scale} specified for column '{column}'. Maximum is 30."
            ),
            ScaleAbovePrecision(c) => write!(
                f,
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{c}')."
            ),
            WrongFieldSpec(c) => write!(f, "Incorrect column specifier for column '{c}'"),
            InvalidOnUpdate(c) => write!(f, "Invalid ON UPDATE clause for '{c}' column"),
            InvalidYearWidth => write!(f, "Supports only YEAR or YEAR(4) column."),
            UnknownVariable(v) => write!(f, "Unknown system variable '{v}'"),
            WrongValueForVariable { name, value } => {
                write!(
                    f,
                    "Variable '{name}' can't be set to the value of '{value}'"
                )
            }
            WrongTypeForVariable(v) => write!(f, "Incorrect argument type to variable '{v}'"),
            VariableReadOnly(v) => {
                write!(f, "Variable '{v}' is a read only variable")
            }
            VariableIsGlobal(v) => write!(
                f,
                "Variable '{v}' is a GLOBAL variable and should be set with SET GLOBAL"
            ),
            SqlLogBinInTransaction => write!(
                f,
                "Cannot modify @@session.sql_log_bin inside a transaction"
            ),
            VariableIsSession(v) => write!(
                f,
                "Variable '{v}' is a SESSION variable and can't be used with SET GLOBAL"
            ),
            VariableWrongScope { name, scope } => {
                write!(f, "Variable '{name}' is a {scope} variable")
            }
            PersistedVariableMissing(v) => {
                write!(f, "Variable {v} does not exist in persisted config file")
            }
            SessionVariableReadOnly(v) => write!(
                f,
                "SESSION variable '{v}' is read-only. Use SET GLOBAL to assign the value"
            ),
            UnknownEngine(e) => write!(f, "Unknown storage engine '{e}'"),
            UnknownFunction(n) => write!(f, "FUNCTION {n} does not exist"),
            TriggerExists => write!(f, "Trigger already exists"),
            TriggerDoesNotExist => write!(f, "Trigger does not exist"),
            TriggerNoSuchRow { row, event } => {
                write!(f, "There is no {row} row in on {event} trigger")
            }
            TriggerCantChangeRow { row, after } => write!(
                f,
                "Updating of {row} row is not allowed in {}trigger",
                if *after { "after " } else { "" }
            ),
            TriggerWrongSchema => write!(f, "Trigger in wrong schema"),
            CantUpdateUsedTable(t) => write!(
                f,
                "Can't update table '{t}' in stored function/trigger because it is already \
                 used by statement which invoked this stored function/trigger."
            ),
            Signal { message, .. } | StrictWarning { message, .. } => write!(f, "{message}"),
            RoutineExists { kind, name } => write!(f, "{kind} {name} already exists"),
            RoutineDoesNotExist { kind, name } => write!(f, "{kind} {name} does not exist"),
            RoutineArguments {
                kind,
                name,
                expected,
                got,
            } => write!(
                f,
                "Incorrect number of arguments for {kind} {name}; expected {expected}, got {got}"
            ),
            UndeclaredVariable(v) => write!(f, "Undeclared variable: {v}"),
            DuplicateVariable(v) => write!(f, "Duplicate variable: {v}"),
            NoSuchLabel { statement, label } => {
                write!(f, "{statement} with no matching label: {label}")
            }
            EndLabelMismatch(l) => write!(f, "End-label {l} without match"),
            DuplicateLabel(l) => write!(f, "Redefining label {l}"),
            NoData => write!(f, "No data - zero rows fetched, selected, or processed"),
            FileExists(p) => write!(f, "File '{p}' already exists"),
            FileNotFound(p) => {
                write!(f, "File '{p}' not found (OS errno 2 - No such file or directory)")
            }
            FileWrite { path, err } => write!(f, "Error writing file '{path}' ({err})"),
            SecureFilePriv => write!(
                f,
                "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"
            ),
            LocalInfileDisabled => write!(
                f,
                "Loading local data is disabled; this must be enabled on both the client and server sides"
            ),
            TooFewRecords(row) => write!(f, "Row {row} doesn't contain data for all columns"),
            TooManyRecords(row) => write!(
                f,
                "Row {row} was truncated; it contained more data than there were input columns"
            ),
            NullToNotNull { column, row } => write!(
                f,
                "Column set to default value; NULL supplied to NOT NULL column '{column}' at row {row}"
            ),
            WrongFieldTerminators => write!(
                f,
                "Field separator argument is not what is expected; check the manual"
            ),
            TooManyRows => write!(f, "Result consisted of more than one row"),
            IntoColumnCount => write!(
                f,
                "The used SELECT statements have a different number of columns"
            ),
            FunctionNoReturn(n) => write!(f, "FUNCTION {n} ended without RETURN"),
            ReturnOutsideFunction => write!(f, "RETURN is only allowed in a FUNCTION"),
            CaseNotFound => write!(f, "Case not found for CASE statement"),
            UndeclaredCursor(c) => write!(f, "Undefined CURSOR: {c}"),
            CursorAlreadyOpen => write!(f, "Cursor is already open"),
            CursorNotOpen => write!(f, "Cursor is not open"),
            UndeclaredCondition(c) => write!(f, "Undefined CONDITION: {c}"),
            ProcedureResultSet(p) => write!(
                f,
                "PROCEDURE {p} can't return a result set in the given context"
            ),
            ResultSetFromProgram(what) => {
                write!(f, "Not allowed to return a result set from a {what}")
            }
            CommitInProgram => write!(
                f,
                "Explicit or implicit commit is not allowed in stored function or trigger."
            ),
            RoutineRecursion { limit, name } => write!(
                f,
                "Recursive limit {limit} (as set by the max_sp_recursion_depth variable) was \
                 exceeded for routine {name}"
            ),
            RecursiveFunction => write!(
                f,
                "Recursive stored functions and triggers are not allowed."
            ),
            ResignalOutsideHandler => {
                write!(f, "RESIGNAL when handler not active")
            }
            FunctionNotDeclaredDeterministic => write!(
                f,
                "This function has none of DETERMINISTIC, NO SQL, or READS SQL DATA in its \
                 declaration and binary logging is enabled (you *might* want to use the less \
                 safe log_bin_trust_function_creators variable)"
            ),
            SavepointNotExist(n) => write!(f, "SAVEPOINT {n} does not exist"),
            ReadOnlyTransaction => {
                write!(f, "Cannot execute statement in a READ ONLY transaction.")
            }
            TxCharacteristicsInProgress => write!(
                f,
                "Transaction characteristics can't be changed while a transaction is in progress"
            ),
            UnknownStmtHandler { name, op } => {
                write!(
                    f,
                    "Unknown prepared statement handler ({name}) given to {op}"
                )
            }
            ExecuteArguments => write!(f, "Incorrect arguments to EXECUTE"),
            TooManyPreparedStatements(n) => write!(
                f,
                "Can't create more than max_prepared_stmt_count statements (current value: {n})"
            ),
            GroupingArgNotGrouped(n) => {
                write!(f, "Argument #{n} of GROUPING function is not in GROUP BY")
            }
            JsonNullKey => write!(f, "JSON documents may not contain NULL member names."),
            InvalidJsonText {
                reason,
                pos,
                column,
            } => write!(
                f,
                "Invalid JSON text: \"{reason}\" at position {pos} in value for column '{column}'."
            ),
            InvalidJsonTextInParam {
                arg,
                func,
                reason,
                pos,
            } => write!(
                f,
                "Invalid JSON text in argument {arg} to function {func}: \"{reason}\" at position {pos}."
            ),
            InvalidJsonPath(pos) => write!(
                f,
                "Invalid JSON path expression. The error is around character position {pos}."
            ),
            InvalidJsonType { arg, func } => write!(
                f,
                "Invalid data type for JSON data in argument {arg} to function {func}; a JSON string or JSON type is required."
            ),
            JsonPathWildcard => write!(
                f,
                "In this situation, path expressions may not contain the * and ** tokens."
            ),
            JsonBadOneOrAll(func) => write!(
                f,
                "The oneOrAll argument to {func} may take these values: 'one' or 'all'."
            ),
            JsonUsedAsKey(col) => write!(
                f,
                "JSON column '{col}' supports indexing only via generated columns on a specified JSON path."
            ),
            JsonVacuousPath => write!(f, "The path expression '$' is not allowed in this context."),
            JsonTooDeep => write!(f, "The JSON document exceeds the maximum depth."),
            TooBigDisplayWidth { column, max } => write!(
                f,
                "Display width out of range for column '{column}' (max = {max})"
            ),
            JsonPathArrayCell => write!(
                f,
                "A path expression is not a path to a cell in an array."
            ),
            WrongParamCount(n) => {
                write!(
                    f,
                    "Incorrect parameter count in the call to native function '{n}'"
                )
            }
            InvalidGroupUse => write!(f, "Invalid use of group function"),
            NotFullGroupBy {
                implicit: false,
                expr_no,
                clause,
                column,
            } => write!(
                f,
                "Expression #{expr_no} of {clause} is not in GROUP BY clause and contains \
                 nonaggregated column '{column}' which is not functionally dependent on columns \
                 in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
            ),
            NotFullGroupBy {
                implicit: true,
                expr_no,
                clause,
                column,
            } => write!(
                f,
                "In aggregated query without GROUP BY, expression #{expr_no} of {clause} \
                 contains nonaggregated column '{column}'; this is incompatible with \
                 sql_mode=only_full_group_by"
            ),
            OrderNotInDistinct { expr_no, column } => write!(
                f,
                "Expression #{expr_no} of ORDER BY clause is not in SELECT list, references \
                 column '{column}' which is not in SELECT list; this is incompatible with DISTINCT"
            ),
            OperandColumns(n) => write!(f, "Operand should contain {n} column(s)"),
            SubqueryRows => write!(f, "Subquery returns more than 1 row"),
            NoTablesUsed => write!(f, "No tables used"),
            TableNotLocked(t) => write!(f, "Table '{t}' was not locked with LOCK TABLES"),
            TableLockedForRead(t) => {
                write!(
                    f,
                    "Table '{t}' was locked with a READ lock and can't be updated"
                )
            }
            UnknownCharset(c) => write!(f, "Unknown character set: '{c}'"),
            UnknownCollation(c) => write!(f, "Unknown collation: '{c}'"),
            WrongDatabaseName(d) => write!(f, "Incorrect database name '{d}'"),
            WrongTableName(t) => write!(f, "Incorrect table name '{t}'"),
            WrongColumnName(c) => write!(f, "Incorrect column name '{c}'"),
            ColumnTooLong { column, max } => write!(
                f,
                "Column length too big for column '{column}' (max = {max}); use BLOB or TEXT \
                 instead"
            ),
            CommentTooLong { what, name, max } => {
                write!(f, "Comment for {what} '{name}' is too long (max = {max})")
            }
            PacketTooLarge => write!(f, "Got a packet bigger than 'max_allowed_packet' bytes"),
            TooManyConnections => write!(f, "Too many connections"),
            MemoryCapacityExceeded { bytes, what } => write!(
                f,
                "Memory capacity of {bytes} bytes for 'max_memory' exceeded. No memory left for \
                 {what} after waiting for running statements to release theirs"
            ),
            UserLimitReached(user, n) => write!(
                f,
                "User '{user}' has exceeded the 'max_user_connections' resource (current value: {n})"
            ),
            DbAccessDenied { user, host, db } => write!(
                f,
                "Access denied for user '{user}'@'{host}' to database '{db}'"
            ),
            TableAccessDenied {
                command,
                user,
                host,
                table,
            } => write!(
                f,
                "{command} command denied to user '{user}'@'{host}' for table '{table}'"
            ),
            ColumnAccessDenied {
                command,
                user,
                host,
                column,
                table,
            } => write!(
                f,
                "{command} command denied to user '{user}'@'{host}' for column '{column}' in table '{table}'"
            ),
            UnknownAuthId(user, host) => write!(f, "Unknown authorization ID `{user}`@`{host}`"),
            RoleNotGranted(ru, rh, u, h) => {
                write!(f, "`{ru}`@`{rh}` is not granted to `{u}`@`{h}`")
            }
            RoleGrantedToItself(grantee, role) => write!(
                f,
                "User account {grantee} is directly or indirectly granted to the role {role}. The GRANT would create a loop"
            ),
            MandatoryRole(role) => write!(
                f,
                "The role {role} is a mandatory role and can't be revoked or dropped. The restriction can be lifted by excluding the role identifier from the global variable mandatory_roles."
            ),
            SystemSchemaAccess(db) => write!(f, "Access to system schema '{db}' is rejected."),
            SpecificAccessDenied(privs) => write!(
                f,
                "Access denied; you need (at least one of) the {privs} privilege(s) for this operation"
            ),
            Base64Decode => write!(f, "Decoding of base64 string failed"),
            BinlogNoFormatDescription(t) => write!(
                f,
                "The BINLOG statement of type `{t}` was not preceded by a format description BINLOG statement."
            ),
            BinlogEventNotAllowed(t) => write!(
                f,
                "Only Format_description_log_event and row events are allowed in BINLOG statements (but {t} was provided)"
            ),
            BinlogEventMalformed => write!(
                f,
                "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use"
            ),
            AccountOperationFailed(op, who) => write!(f, "Operation {op} failed for {who}"),
            NoImplicitUserCreation => write!(f, "You are not allowed to create a user with GRANT"),
            NoMatchingUser => write!(f, "Can't find any matching row in the user table"),
            NoSuchGrant { user, host } => write!(
                f,
                "There is no such grant defined for user '{user}' on host '{host}'"
            ),
            NoSuchTableGrant { user, host, table } => write!(
                f,
                "There is no such grant defined for user '{user}' on host '{host}' on table '{table}'"
            ),
            IllegalGrant => write!(
                f,
                "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used"
            ),
            WrongUsage(a, b) => write!(f, "Incorrect usage of {a} and {b}"),
            AccountLocked { user, host } => write!(
                f,
                "Access denied for user '{user}'@'{host}'. Account is locked."
            ),
            NotThreadOwner(id) => write!(f, "You are not owner of thread {id}"),
            TooManyUserConnections(user) => write!(
                f,
                "User {user} already has more than 'max_user_connections' active connections"
            ),
            IdleTimeout => write!(
                f,
                "The client was disconnected by the server because of inactivity. See \
                 wait_timeout and interactive_timeout for configuring this behavior."
            ),
            NetReadTimeout => write!(f, "Got timeout reading communication packets"),
            InsecureTransport => write!(
                f,
                "Connections using insecure transport are prohibited while \
                 --require_secure_transport=ON."
            ),
            LongDataTooLong => write!(
                f,
                "Parameter of prepared statement which is set through mysql_send_long_data() \
                 is longer than 'max_allowed_packet' bytes"
            ),
            LockWaitTimeout => write!(f, "Lock wait timeout exceeded; try restarting transaction"),
            XaNota => write!(f, "XAER_NOTA: Unknown XID"),
            XaInval => write!(f, "XAER_INVAL: Invalid arguments (or unsupported command)"),
            // Two spaces before the state, as MySQL and MariaDB print it.
            XaRmFail(state) => write!(
                f,
                "XAER_RMFAIL: The command cannot be executed when global transaction is in the  {state} state"
            ),
            XaOutside => write!(f, "XAER_OUTSIDE: Some work is done outside global transaction"),
            XaDupId => write!(f, "XAER_DUPID: The XID already exists"),
            XaRbDeadlock => write!(
                f,
                "XA_RBDEADLOCK: Transaction branch was rolled back: deadlock was detected"
            ),
            CantUpdateWithReadLock => write!(
                f,
                "Can't execute the query because you have a conflicting read lock"
            ),
            LockedTablesOrActiveTransaction => write!(
                f,
                "Can't execute the given command because you have active locked tables or an \
                 active transaction"
            ),
            Deadlock => {
                write!(
                    f,
                    "Deadlock found when trying to get lock; try restarting transaction"
                )
            }
            UserLockDeadlock => write!(
                f,
                "Deadlock found when trying to get user-level lock; try rolling back \
                 transaction/releasing locks and restarting lock acquisition."
            ),
            UserLockWrongName(n) => write!(f, "Incorrect user-level lock name '{n}'."),
            Interrupted => write!(f, "Query execution was interrupted"),
            ExecutionTimeExceeded => write!(
                f,
                "Query execution was interrupted, maximum statement execution time exceeded"
            ),
            UnknownThread(id) => write!(f, "Unknown thread id: {id}"),
            UnknownTargetBinlog => write!(f, "Target log not found in binlog index"),
            BinlogEventsTargetMissing => write!(
                f,
                "Error when executing command SHOW BINLOG EVENTS: Could not find target log"
            ),
            BinlogEventsBadPosition => write!(
                f,
                "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error"
            ),
            NoBinaryLogging => write!(f, "You are not using binary logging"),
            ReplicaMustStop => write!(
                f,
                "This operation cannot be performed with a running replica; run STOP REPLICA first"
            ),
            // MySQL prints at most 200 characters of the text.
            MalformedGtidSet(t) => write!(
                f,
                "Malformed GTID set specification '{}'.",
                t.chars().take(200).collect::<String>()
            ),
            GtidModeOff(what) => write!(f, "Cannot {what} when GTID_MODE = OFF."),
            VariableNotSettableInTransaction(name) => write!(
                f,
                "The system variable {name} cannot be set when there is an ongoing transaction."
            ),
            GtidNextWhileOwning(g) => write!(
                f,
                "@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns {g}. Ownership is released on COMMIT or ROLLBACK."
            ),
            GtidNextGtidWhenModeOff => write!(
                f,
                "@@SESSION.GTID_NEXT cannot be set to UUID:NUMBER when @@GLOBAL.GTID_MODE = OFF."
            ),
            GtidNextAnonymousWhenModeOn => write!(
                f,
                "@@SESSION.GTID_NEXT cannot be set to ANONYMOUS when @@GLOBAL.GTID_MODE = ON."
            ),
            ImplicitCommitWithGtidNext => write!(
                f,
                "Cannot execute statements with implicit commit inside a transaction when @@SESSION.GTID_NEXT == 'UUID:NUMBER'."
            ),
            WaitForOwnedGtid(g) => write!(
                f,
                "The client holds ownership of the GTID {g}. Therefore, WAIT_FOR_EXECUTED_GTID_SET cannot wait for this GTID."
            ),
            GtidPurgedConstraint(why) => write!(f, "@@GLOBAL.GTID_PURGED cannot be changed: {why}"),
            GtidExecuted(g) => write!(
                f,
                "When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different value after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for detailed explanation. Current @@SESSION.GTID_NEXT is '{g}'."
            ),
            BadReplicaAutoPosition => write!(
                f,
                "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and RELAY_LOG_POS cannot be set when SOURCE_AUTO_POSITION is active."
            ),
            ReplicaNotConfigured => write!(
                f,
                "The server is not configured as replica; fix in config file or with CHANGE REPLICATION SOURCE TO"
            ),
            MasterFatalReadingBinlog(why) => write!(f, "{why}"),
            LockNowait => write!(
                f,
                "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
            ),
            Corrupt { table, detail } => {
                write!(
                    f,
                    "Table '{table}' is marked as crashed and should be repaired ({detail})"
                )
            }
            TableFull(t) => write!(f, "The table '{t}' is full"),
            Io(msg) => write!(f, "Got error from storage engine: {msg}"),
            RowTooLarge(max) => write!(
                f,
                "Row size too large. The maximum row size for the used table type, not \
                 counting BLOBs, is {max}. This includes storage overhead, check the manual. \
                 You have to change some columns to TEXT or BLOBs"
            ),
            KeyTooLong(max) => write!(
                f,
                "Specified key was too long; max key length is {max} bytes"
            ),
            DerivedNeedsAlias => write!(f, "Every derived table must have its own alias"),
            TooManyTables(n) => write!(
                f,
                "Too many tables; MySQL can only use {n} tables in a join"
            ),
            NonUniqueTable(t) => write!(f, "Not unique table/alias: '{t}'"),
            WrongColumnCountInSetOp => write!(
                f,
                "The used SELECT statements have a different number of columns"
            ),
            ViewColumnCount => write!(
                f,
                "In definition of view, derived table or common table expression, SELECT list \
                 and column names list have different column counts"
            ),
            WrongObject { name, expected } => write!(f, "'{name}' is not {expected}"),
            ViewInvalid { db, view } => write!(
                f,
                "View '{db}.{view}' references invalid table(s) or column(s) or function(s) \
                 or definer/invoker of view lack rights to use them"
            ),
            ViewRecursive { db, view } => {
                write!(f, "`{db}`.`{view}` contains view recursion")
            }
            NonUpdatableTable { table, verb } => {
                write!(f, "The target table {table} of the {verb} is not updatable")
            }
            NonInsertableTable(t) => {
                write!(f, "The target table {t} of the INSERT is not insertable-into")
            }
            ViewCheckFailed { db, view } => write!(f, "CHECK OPTION failed '{db}.{view}'"),
            ViewCheckNonUpdatable { db, view } => {
                write!(f, "CHECK OPTION on non-updatable view '{db}.{view}'")
            }
            NonUpdatableColumn(c) => write!(f, "Column '{c}' is not updatable"),
            ViewMultiUpdate { db, view } => write!(
                f,
                "Can not modify more than one base table through a join view '{db}.{view}'"
            ),
            ViewDeleteJoin { db, view } => write!(f, "Can not delete from join view '{db}.{view}'"),
            NoDefaultForViewField { db, view } => write!(
                f,
                "Field of view '{db}.{view}' underlying table doesn't have a default value"
            ),
            ForbidSchemaChange { from, to } => write!(
                f,
                "Changing schema from '{from}' to '{to}' is not allowed."
            ),
            RecursionDepth(n) => write!(
                f,
                "Recursive query aborted after {} iterations. Try increasing \
                 @@cte_max_recursion_depth to a larger value.",
                n + 1
            ),
            StackOverrun { used, size } => write!(
                f,
                "Thread stack overrun:  {used} bytes used of a {size} byte stack, and {} bytes \
                 needed.  Simplify the statement: it nests expressions or subqueries too deeply.",
                crate::stack::RED_ZONE
            ),
            TargetTableRead(t) => write!(
                f,
                "You can't specify target table '{t}' for update in FROM clause"
            ),
            UnknownTableInMultiDelete(t) => write!(f, "Unknown table '{t}' in MULTI DELETE"),
            WrongArguments(func) => write!(f, "Incorrect arguments to {func}"),
            WindowNoSuchWindow(w) => write!(f, "Window name '{w}' is not defined."),
            WindowCircularity => {
                write!(f, "There is a circularity in the window dependency graph.")
            }
            WindowNoChildPartitioning => write!(
                f,
                "A window which depends on another cannot define partitioning."
            ),
            WindowNoInheritFrame(w) => write!(
                f,
                "Window '{w}' has a frame definition, so cannot be referenced by another window."
            ),
            WindowNoRedefineOrderBy(w, base) => write!(
                f,
                "Window '{w}' cannot inherit '{base}' since both contain an ORDER BY clause."
            ),
            WindowFrameStartIllegal(w) => write!(
                f,
                "Window '{w}': frame start cannot be UNBOUNDED FOLLOWING."
            ),
            WindowFrameEndIllegal(w) => {
                write!(f, "Window '{w}': frame end cannot be UNBOUNDED PRECEDING.")
            }
            WindowFrameIllegal(w) => write!(
                f,
                "Window '{w}': frame start or end is negative, NULL or of non-integral type"
            ),
            WindowRangeFrameOrderType(w) => write!(
                f,
                "Window '{w}' with RANGE N PRECEDING/FOLLOWING frame requires exactly one \
                 ORDER BY expression, of numeric or temporal type"
            ),
            WindowRangeFrameTemporalType(w) => write!(
                f,
                "Window '{w}' with RANGE frame has ORDER BY expression of datetime type. Only \
                 INTERVAL bound value allowed."
            ),
            WindowDuplicateName(w) => write!(f, "Window '{w}' is defined twice."),
            WindowInvalidUse(func) => write!(
                f,
                "You cannot use the window function '{func}' in this context.'"
            ),
            WindowInvalidAliasUse(a) => write!(
                f,
                "You cannot use the alias '{a}' of an expression containing a window function \
                 in this context.'"
            ),
            WindowNestedInSpec(w) => write!(
                f,
                "You cannot nest a window function in the specification of window '{w}'."
            ),
            Internal(msg) => write!(f, "Internal error: {msg}"),
        }
    }
}

impl std::error::Error for Error {}

/// The first `n` characters of `s`, as MySQL's `%-.Ns` prints a message argument.
fn cut_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Whether an OS error says the filesystem has no room (ENOSPC) or a quota is spent
/// (EDQUOT); by kind, so an error re-wrapped with a message still counts.
pub fn is_disk_full(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_errors_carry_mysql_numbers() {
        let e = Error::NoSuchTable {
            db: "d".into(),
            table: "t".into(),
        };
        assert_eq!((e.code(), e.sqlstate()), (1146, "42S02"));
        assert_eq!(e.to_string(), "Table 'd.t' doesn't exist");
        let e = Error::DuplicateKey {
            value: "1".into(),
            key: "PRIMARY".into(),
        };
        assert_eq!((e.code(), e.sqlstate()), (1062, "23000"));
        assert_eq!(Error::Syntax("x".into()).sqlstate(), "42000");
        assert_eq!(Error::UnknownDatabase("x".into()).code(), 1049);
    }

    #[test]
    fn data_change_warnings_read_as_mysql_8s() {
        // MySQL 8's texts (its error list): single quotes around the column everywhere.
        let e = Error::IncorrectValue {
            kind: "integer".into(),
            value: "x".into(),
            column: "c".into(),
            row: 1,
        };
        assert_eq!((e.code(), e.sqlstate()), (1366, "HY000"));
        assert_eq!(
            e.to_string(),
            "Incorrect integer value: 'x' for column 'c' at row 1"
        );
        // The value is cut to 128 characters (not bytes).
        let long = Error::IncorrectValue {
            kind: "integer".into(),
            value: "é".repeat(200),
            column: "c".into(),
            row: 2,
        };
        assert_eq!(
            long.to_string(),
            format!(
                "Incorrect integer value: '{}' for column 'c' at row 2",
                "é".repeat(128)
            )
        );
        let e = Error::DataTruncated {
            column: "c".into(),
            row: 3,
        };
        assert_eq!((e.code(), e.sqlstate()), (1265, "01000"));
        assert_eq!(e.to_string(), "Data truncated for column 'c' at row 3");
        let e = Error::OutOfRange {
            column: "c".into(),
            row: 4,
        };
        assert_eq!((e.code(), e.sqlstate()), (1264, "22003"));
        assert_eq!(e.to_string(), "Out of range value for column 'c' at row 4");
        let e = Error::DataTooLong {
            column: "c".into(),
            row: 5,
        };
        assert_eq!((e.code(), e.sqlstate()), (1406, "22001"));
        assert_eq!(e.to_string(), "Data too long for column 'c' at row 5");
        let e = Error::ColumnNotNull("c".into());
        assert_eq!((e.code(), e.sqlstate()), (1048, "23000"));
        assert_eq!(e.to_string(), "Column 'c' cannot be null");
        let e = Error::SubqueryRows;
        assert_eq!((e.code(), e.sqlstate()), (1242, "21000"));
        assert_eq!(e.to_string(), "Subquery returns more than 1 row");
    }

    #[test]
    fn insecure_transport_is_mysqls_3159() {
        let e = Error::InsecureTransport;
        assert_eq!((e.code(), e.sqlstate()), (3159, "HY000"));
        assert_eq!(
            e.to_string(),
            "Connections using insecure transport are prohibited while \
             --require_secure_transport=ON."
        );
    }

    #[test]
    fn connection_limit_errors_carry_mysql_numbers() {
        assert_eq!(
            (
                Error::TooManyConnections.code(),
                Error::TooManyConnections.sqlstate()
            ),
            (1040, "08004")
        );
        let e = Error::TooManyUserConnections("app".into());
        assert_eq!((e.code(), e.sqlstate()), (1203, "42000"));
        assert_eq!(
            e.to_string(),
            "User app already has more than 'max_user_connections' active connections"
        );
        let e = Error::IdleTimeout;
        assert_eq!((e.code(), e.sqlstate()), (4031, "HY000"));
        assert!(e.to_string().starts_with(
            "The client was disconnected by the server because of inactivity. See wait_timeout"
        ));
        let e = Error::LongDataTooLong;
        assert_eq!((e.code(), e.sqlstate()), (1105, "HY000"));
        assert_eq!(e.to_string(), "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes");
    }

    #[test]
    fn lock_errors_carry_mysql_numbers_and_states() {
        // Checked against MariaDB 10.11's client output (`ERROR 1205 (HY000)`).
        let e = Error::LockWaitTimeout;
        assert_eq!((e.code(), e.sqlstate()), (1205, "HY000"));
        assert_eq!(
            (Error::Deadlock.code(), Error::Deadlock.sqlstate()),
            (1213, "40001")
        );
        let e = Error::CantUpdateWithReadLock;
        assert_eq!((e.code(), e.sqlstate()), (1223, "HY000"));
        assert_eq!(
            e.to_string(),
            "Can't execute the query because you have a conflicting read lock"
        );
        let e = Error::LockedTablesOrActiveTransaction;
        assert_eq!((e.code(), e.sqlstate()), (1192, "HY000"));
        assert_eq!(
            e.to_string(),
            "Can't execute the given command because you have active locked tables or an \
             active transaction"
        );
    }

    #[test]
    fn disk_full_maps_to_table_full() {
        let e = Error::table_io("db.t1", std::io::Error::from_raw_os_error(28));
        assert_eq!(e.code(), 1114);
        assert_eq!(e.to_string(), "The table 't1' is full");
        let other = Error::table_io("db.t1", std::io::Error::from_raw_os_error(5));
        assert_eq!(other.code(), 1030);
        let sort = Error::io("writing a sort run", std::io::Error::from_raw_os_error(28));
        assert_eq!(sort.code(), 1030);
    }
}
