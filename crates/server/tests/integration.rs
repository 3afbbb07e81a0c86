//! The server's integration tests, one test binary: every module below starts real servers
//! (Strata, and MariaDB where a test compares) on free ports with private data directories and
//! talks to them over sockets. One binary instead of one per file: each test binary is linked
//! against the whole workspace, and fifty links cost CI about a quarter of an hour. Tests still
//! run two at a time (libtest's default on two cores), as they did when each file was a binary.
//!
//! Run one file's tests with `cargo test --release -p strata --test integration <module>::`.
//! `slt` and `corpus` stay binaries of their own (`--test slt`, `--test corpus`).

mod common;

mod bench;
mod binlog_crash;
mod binlog_replay;
mod change_list;
mod clients;
mod crash;
mod ctas_crash;
mod ddl_catalog;
mod ddl_crash;
mod diskfull;
mod double_decimals_protocol;
mod drivers;
mod explain_tree;
mod files;
mod foreign_keys;
mod gtid_next;
mod gtid_wait;
mod instant_ddl;
mod isolation;
mod key_format_upgrade;
mod kill;
mod large_trx;
mod limits;
mod limits_net;
mod locking_reads;
mod mdl;
mod memory_budget;
mod memory_measure;
mod online_ddl;
mod operability;
mod privileges;
mod protocol;
mod replica;
mod replication;
mod roles;
mod routines_dump;
mod row_locks;
mod sysbench;
mod systables;
mod table_cache;
mod temporal_protocol;
mod temporary_tables;
mod tls;
mod undo_spill;
mod user_locks;
mod views_dump;
mod window_spill;
mod xa;
mod xa_binlog;
