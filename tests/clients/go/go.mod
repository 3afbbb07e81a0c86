// Go driver suite for Strata: go-sql-driver/mysql against a running server (see strata_test.go).
module strata.test/clients/go

go 1.26

require github.com/go-sql-driver/mysql v1.10.1

require filippo.io/edwards25519 v1.2.0 // indirect
